package postings

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"sort"

	"github.com/kairos-rag/kairos/internal/framing"
)

// TermCounts holds, per term, how many deleted passages contain it: what a search subtracts
// from the segments' document frequencies so that idf counts the live passages only, as
// bleve's does (its posting counts leave deleted documents out). Segments are immutable, so
// the deletions that accumulate until a compaction are kept beside them, counted once when
// they are made (or by CountDeleted from the segments), never per query.
//
// The file, inside the framing envelope (magic "KPDF", version 1): uvarint number of terms,
// then per term, in strictly increasing byte order, the term (framing.AppendString) and its
// count (uvarint, > 0).
type TermCounts struct {
	terms  []string
	counts []uint32
}

var termCountsFormat = framing.Format{Name: "postings deleted term counts", Magic: "KPDF", Version: 1}

// NewTermCounts returns the counts of m; terms counted 0 are left out.
func NewTermCounts(m map[string]int) *TermCounts {
	c := &TermCounts{}
	for t, n := range m {
		if n > 0 {
			c.terms = append(c.terms, t)
		}
	}
	slices.Sort(c.terms)
	c.counts = make([]uint32, len(c.terms))
	for i, t := range c.terms {
		c.counts[i] = uint32(m[t])
	}
	return c
}

// Get returns the count of term (0 when absent). A nil TermCounts counts nothing.
func (c *TermCounts) Get(term string) int {
	if c == nil {
		return 0
	}
	i := sort.SearchStrings(c.terms, term)
	if i == len(c.terms) || c.terms[i] != term {
		return 0
	}
	return int(c.counts[i])
}

// Len is the number of terms counted.
func (c *TermCounts) Len() int {
	if c == nil {
		return 0
	}
	return len(c.terms)
}

// Map returns the counts as a map, for a writer to add to.
func (c *TermCounts) Map() map[string]int {
	m := make(map[string]int, c.Len())
	for i := range c.Len() {
		m[c.terms[i]] = int(c.counts[i])
	}
	return m
}

// Equal reports whether c and o hold the same counts.
func (c *TermCounts) Equal(o *TermCounts) bool {
	if c.Len() != o.Len() {
		return false
	}
	for i := range c.Len() {
		if c.terms[i] != o.terms[i] || c.counts[i] != o.counts[i] {
			return false
		}
	}
	return true
}

// Encode returns the counts as a file.
func (c *TermCounts) Encode() []byte {
	b := termCountsFormat.Begin()
	b = binary.AppendUvarint(b, uint64(c.Len()))
	for i := range c.Len() {
		b = framing.AppendString(b, c.terms[i])
		b = binary.AppendUvarint(b, uint64(c.counts[i]))
	}
	return termCountsFormat.Seal(b)
}

// ParseTermCounts reads a file Encode wrote; damage is an error wrapping framing.ErrFormat.
func ParseTermCounts(b []byte) (*TermCounts, error) {
	payload, err := termCountsFormat.Open(b)
	if err != nil {
		return nil, err
	}
	d := framing.Decoder{B: payload}
	n := d.ReadUvarint()
	if d.Err == nil && n > uint64(len(payload))/2 { // each term takes at least two bytes
		return nil, fmt.Errorf("%s: %d terms in %d bytes: %w", termCountsFormat.Name, n, len(payload), framing.ErrFormat)
	}
	c := &TermCounts{terms: make([]string, 0, n), counts: make([]uint32, 0, n)}
	for i := uint64(0); i < n && d.Err == nil; i++ {
		t, v := d.ReadString(), d.ReadUvarint()
		switch {
		case d.Err != nil:
		case v == 0 || v > 1<<32-1:
			return nil, fmt.Errorf("%s: term %q counted %d: %w", termCountsFormat.Name, t, v, framing.ErrFormat)
		case i > 0 && t <= c.terms[i-1]:
			return nil, fmt.Errorf("%s: term %q after %q: %w", termCountsFormat.Name, t, c.terms[i-1], framing.ErrFormat)
		}
		c.terms, c.counts = append(c.terms, t), append(c.counts, uint32(v))
	}
	if d.Err == nil && len(d.B) > 0 {
		d.Err = fmt.Errorf("%d bytes after the last term", len(d.B))
	}
	if d.Err != nil {
		return nil, fmt.Errorf("%s: %w: %w", termCountsFormat.Name, d.Err, framing.ErrFormat)
	}
	return c, nil
}

// CountDeleted adds to into, per term of the segment, how many of its passages in deleted
// contain it. It decodes only the blocks whose ordinal range holds a deleted passage, so its
// cost is the dictionary and block table plus the blocks the deletions touch: the way to
// count the deletions of an index whose counts were not kept (and to check kept ones).
func (s *Segment) CountDeleted(ctx context.Context, deleted KeySet, into map[string]int) error {
	// before[o]: deleted passages among ordinals below o
	before := make([]uint32, s.tr.docs+1)
	for o := uint32(0); uint64(o) < s.tr.docs; o++ {
		before[o+1] = before[o]
		if deleted.Has(s.key(o)) {
			before[o+1]++
		}
	}
	if before[s.tr.docs] == 0 {
		return nil
	}
	for i := 0; i < int(s.tr.terms); i++ {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		ti, _, err := s.entry(i)
		if err != nil {
			return err
		}
		c := &cursor{s: s, ti: ti}
		n, first := 0, uint32(0) // first: the first ordinal block blk may hold
		for blk := uint64(0); blk < ti.nblocks; blk++ {
			e := s.blockAt(ti.firstBlock + blk)
			if e.last < first || uint64(e.last) >= s.tr.docs {
				return s.corrupt("term %q: block %d ends at ordinal %d", s.termAt(i), blk, e.last)
			}
			if before[e.last+1] > before[first] {
				c.blk = blk
				if c.decode(); c.err != nil {
					return c.err
				}
				for _, o := range c.ords[:c.n] {
					if before[o+1] > before[o] {
						n++
					}
				}
			}
			first = e.last + 1
		}
		if n > 0 {
			into[s.termAt(i)] += n
		}
	}
	return nil
}
