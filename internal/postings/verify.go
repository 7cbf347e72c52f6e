package postings

import (
	"context"
)

// Verify reads the whole segment and checks what Open does not: the dictionary is in order,
// every posting list decodes to its document frequency, the keys increase and the lengths
// add up to the recorded total. Errors name the file.
func (s *Segment) Verify(ctx context.Context) error {
	var tokens uint64
	for i := uint64(0); i < s.tr.docs; i++ {
		if i > 0 && s.key(uint32(i)) <= s.key(uint32(i-1)) {
			return s.corrupt("passage ordinal %d: key %d after key %d", i, s.key(uint32(i)), s.key(uint32(i-1)))
		}
		tokens += uint64(s.length(uint32(i)))
	}
	if tokens != s.tr.tokens {
		return s.corrupt("passage lengths add up to %d, the trailer says %d", tokens, s.tr.tokens)
	}
	prev := ""
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
		t := s.termAt(i)
		if i > 0 && t <= prev {
			return s.corrupt("term %d %q not after %q", i, t, prev)
		}
		prev = t
		c := newCursor(s, ti)
		n := uint32(0)
		for ; c.cur != exhausted; c.next() {
			n++
		}
		if c.err != nil {
			return c.err
		}
		if n != ti.df {
			return s.corrupt("term %q: %d postings, document frequency %d", t, n, ti.df)
		}
	}
	return nil
}
