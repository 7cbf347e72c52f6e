// Package tombstones owns the tombstone file of a generation (tombstones.ktmb): the set of
// passage keys deleted or superseded since the passages were written. Every engine that keeps
// deleted passages until a compaction reads it (the passage store, the postings engine), so it
// belongs to none of them.
package tombstones

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"slices"

	"github.com/kairos-rag/kairos/internal/framing"
)

// Set is the set of passage keys deleted or superseded in a generation. Searches never
// return them: bleve and the HNSW graph have deleted them too, and the store's Each skips them.
//
// File format (tombstones.ktmb), in the envelope of internal/framing (magic "KTMB", version 1):
//
//	count uint64 | count x key uint32, ascending
type Set struct {
	bits []uint64
	n    int
	max  uint32
}

// FileName is the name of a generation's tombstone file.
const FileName = "tombstones.ktmb"

// format is the framing of the tombstone file.
var format = framing.Format{Name: "tombstone file", Magic: "KTMB", Version: 1}

// Has reports whether key is tombstoned.
func (t *Set) Has(key uint32) bool {
	w := int(key / 64)
	return w < len(t.bits) && t.bits[w]&(1<<(key%64)) != 0
}

// Add tombstones key; it reports whether key was new.
func (t *Set) Add(key uint32) bool {
	w := int(key / 64)
	for len(t.bits) <= w {
		t.bits = append(t.bits, 0)
	}
	if t.bits[w]&(1<<(key%64)) != 0 {
		return false
	}
	t.bits[w] |= 1 << (key % 64)
	t.n++
	t.max = max(t.max, key)
	return true
}

// Len is the number of tombstoned keys.
func (t *Set) Len() int { return t.n }

// Max returns the largest tombstoned key.
func (t *Set) Max() (uint32, bool) { return t.max, t.n > 0 }

// Keys returns the tombstoned keys in ascending order.
func (t *Set) Keys() []uint32 {
	out := make([]uint32, 0, t.n)
	for w, word := range t.bits {
		for word != 0 {
			b := bits.TrailingZeros64(word)
			out = append(out, uint32(w*64+b))
			word &= word - 1
		}
	}
	return out
}

// Clone returns an independent copy.
func (t *Set) Clone() *Set {
	return &Set{bits: slices.Clone(t.bits), n: t.n, max: t.max}
}

// Encode returns the file form of t.
func (t *Set) Encode() []byte {
	keys := t.Keys()
	b := binary.LittleEndian.AppendUint64(format.Begin(), uint64(len(keys)))
	for _, k := range keys {
		b = binary.LittleEndian.AppendUint32(b, k)
	}
	return format.Seal(b)
}

func parse(b []byte) (*Set, error) {
	payload, err := format.Open(b)
	if err != nil {
		return nil, err
	}
	if len(payload) < 8 {
		return nil, errors.New("no key count")
	}
	n := binary.LittleEndian.Uint64(payload)
	keys := payload[8:]
	if n > uint64(len(keys))/4 || uint64(len(keys)) != 4*n { // 4*n alone wraps for a huge count
		return nil, fmt.Errorf("count %d does not match the file size", n)
	}
	t := &Set{}
	prev := int64(-1)
	for i := uint64(0); i < n; i++ {
		k := binary.LittleEndian.Uint32(keys[4*i:])
		if int64(k) <= prev {
			return nil, fmt.Errorf("key %d at position %d not ascending", k, i)
		}
		prev = int64(k)
		t.Add(k)
	}
	return t, nil
}

// Read reads a generation's tombstone file; a generation without one has none.
func Read(path string) (*Set, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &Set{}, nil
	}
	if err != nil {
		return nil, err
	}
	t, err := parse(b)
	if err != nil {
		return nil, fmt.Errorf("tombstones %s: %w", path, err)
	}
	return t, nil
}

// Write writes t to path and syncs it.
func Write(path string, t *Set) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(t.Encode()); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
