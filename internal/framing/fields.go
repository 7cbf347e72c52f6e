package framing

import (
	"encoding/binary"
	"errors"
)

// AppendString appends s with its length as a uvarint: the string field of every payload
// framed here (the passage store's records, the document table).
func AppendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// Decoder reads varint fields and strings from a payload, remembering the first error so a
// record is decoded field after field and checked once.
type Decoder struct {
	B   []byte // what is left to read
	Err error  // the first error; every read after it returns zero
}

// ReadUvarint reads an unsigned varint.
func (d *Decoder) ReadUvarint() uint64 {
	if d.Err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.B)
	if n <= 0 {
		d.Err = errors.New("bad uvarint")
		return 0
	}
	d.B = d.B[n:]
	return v
}

// ReadVarint reads a signed varint.
func (d *Decoder) ReadVarint() int64 {
	if d.Err != nil {
		return 0
	}
	v, n := binary.Varint(d.B)
	if n <= 0 {
		d.Err = errors.New("bad varint")
		return 0
	}
	d.B = d.B[n:]
	return v
}

// SkipString passes over a string written by AppendString without copying it.
func (d *Decoder) SkipString() {
	n := d.ReadUvarint()
	if d.Err != nil {
		return
	}
	if n > uint64(len(d.B)) {
		d.Err = errors.New("string overruns record")
		return
	}
	d.B = d.B[n:]
}

// ReadString reads a string written by AppendString.
func (d *Decoder) ReadString() string {
	n := d.ReadUvarint()
	if d.Err != nil {
		return ""
	}
	if n > uint64(len(d.B)) {
		d.Err = errors.New("string overruns record")
		return ""
	}
	s := string(d.B[:n])
	d.B = d.B[n:]
	return s
}
