// Package doctable owns the document table of a generation (docs.kdoc): each live document id
// with the hash of its content and the keys of its passages, read and written here, and Log,
// the table of a build kept out of memory in sorted runs and merged into the file.
package doctable

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/internal/framing"
)

// The document table of a generation maps each live document id to the hash of its content and
// the keys of its passages. An update compares an input document's hash with the table to
// tell new, changed and unchanged documents apart without re-reading the passage store.
//
// File format (docs.kdoc), in the envelope of internal/framing (magic "KDOC", version 1),
// records sorted by document id:
//
//	count uint64 |
//	per document: uvarint len | id | sha256 [32]byte | uvarint nkeys | nkeys x uvarint key delta
const FileName = "docs.kdoc"

var Format = framing.Format{Name: "document table", Magic: "KDOC", Version: 1}

// Hash is the sha256 of a document's content (see ContentHash).
type Hash [32]byte

// Entry is one document of the table.
type Entry struct {
	Hash Hash
	Keys []uint32 // ascending
}

// ContentHash hashes the content of a document that shapes its passages: title, sections,
// date and URL. Fields are length-prefixed so that no two documents collide by concatenation.
// The source is left out on purpose: by default it is the input's file name
// ("enwiki-20240101"), which changes with every dump, and hashing it would make an update
// re-embed every document. Unchanged and changed documents keep the source they were first
// indexed under, unless the update names one (genWriter.apply).
func ContentHash(d *corpus.Document) Hash {
	h := sha256.New()
	var buf []byte
	put := func(s string) {
		buf = binary.AppendUvarint(buf[:0], uint64(len(s)))
		h.Write(buf)
		h.Write([]byte(s))
	}
	put(d.Title)
	put(d.URL)
	var unix int64
	if !d.Date.IsZero() {
		unix = d.Date.Unix()
	}
	buf = binary.AppendVarint(buf[:0], unix)
	h.Write(buf)
	buf = binary.AppendUvarint(buf[:0], uint64(len(d.Sections)))
	h.Write(buf)
	for _, s := range d.Sections {
		put(s.Name)
		put(s.Text)
	}
	var out Hash
	h.Sum(out[:0])
	return out
}

// Combine folds a repeated document id's content into one hash (a dump that repeats an id keeps
// both records' passages under that id).
func (a Hash) Combine(b Hash) Hash {
	return sha256.Sum256(append(a[:], b[:]...))
}

// WriteTo streams t to w in the table's format, sorted by id. It streams because the
// table grows with the collection (tens of megabytes at a million documents) and a build
// writes it at every checkpoint: an encoded copy beside the map would double its memory.
func WriteTo(w io.Writer, t map[string]*Entry) error {
	ids := make([]string, 0, len(t))
	for id := range t {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	bw := bufio.NewWriterSize(w, 1<<16)
	fw, err := framing.NewWriter(bw, Format)
	if err != nil {
		return err
	}
	b := binary.LittleEndian.AppendUint64(make([]byte, 0, 1<<12), uint64(len(ids)))
	for _, id := range ids {
		e := t[id]
		b = appendEntry(b, id, e.Hash, e.Keys)
		if len(b) >= 1<<12 {
			if _, err := fw.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
	}
	if _, err := fw.Write(b); err != nil {
		return err
	}
	if err := fw.Close(); err != nil {
		return err
	}
	return bw.Flush()
}

// appendEntry appends one document's record in the table's layout.
func appendEntry(b []byte, id string, h Hash, keys []uint32) []byte {
	b = framing.AppendString(b, id)
	b = append(b, h[:]...)
	return appendKeys(b, keys)
}

// appendKeys appends a document's passage keys, ascending: their count, then each key's
// difference from the one before, as uvarints (the table and the Log share this layout).
func appendKeys(b []byte, keys []uint32) []byte {
	b = binary.AppendUvarint(b, uint64(len(keys)))
	prev := uint32(0)
	for _, k := range keys {
		b = binary.AppendUvarint(b, uint64(k-prev))
		prev = k
	}
	return b
}

func Parse(b []byte) (map[string]*Entry, error) {
	payload, err := Format.Open(b)
	if err != nil {
		return nil, err
	}
	if len(payload) < 8 {
		return nil, errors.New("no document count")
	}
	n := binary.LittleEndian.Uint64(payload)
	d := framing.Decoder{B: payload[8:]}
	// A document takes at least minDocBytes: a count past what the file can hold must not
	// size the map (a damaged count of 100M in a 100 MB file reserved gigabytes).
	const minDocBytes = 1 + 32 + 1 // id length, hash, key count
	if n > uint64(len(d.B))/minDocBytes {
		return nil, fmt.Errorf("count %d exceeds what the file's %d bytes hold", n, len(d.B))
	}
	t := make(map[string]*Entry, n)
	for i := uint64(0); i < n && d.Err == nil; i++ {
		id := d.ReadString()
		if len(d.B) < 32 {
			return nil, fmt.Errorf("document %d: truncated", i)
		}
		e := &Entry{}
		copy(e.Hash[:], d.B)
		d.B = d.B[32:]
		nk := d.ReadUvarint()
		if nk > uint64(len(d.B)) {
			return nil, fmt.Errorf("document %d: key count overruns the file", i)
		}
		e.Keys = make([]uint32, nk)
		var k uint64
		for j := range e.Keys {
			k += d.ReadUvarint()
			if k > 1<<32-1 {
				return nil, fmt.Errorf("document %d: key out of range", i)
			}
			e.Keys[j] = uint32(k)
		}
		if _, dup := t[id]; dup {
			return nil, fmt.Errorf("document %q listed twice", id)
		}
		t[id] = e
	}
	if d.Err != nil {
		return nil, d.Err
	}
	if len(d.B) != 0 {
		return nil, fmt.Errorf("%d trailing bytes", len(d.B))
	}
	return t, nil
}

func Read(path string) (map[string]*Entry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	t, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("document table %s: %w", path, err)
	}
	return t, nil
}

func Write(path string, t map[string]*Entry) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if err := WriteTo(f, t); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
