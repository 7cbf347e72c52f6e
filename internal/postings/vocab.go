package postings

import (
	"bytes"
	"hash/maphash"
	"slices"
)

// vocab maps the terms of a segment being built to dense ids, in order of first sight,
// without a pointer the garbage collector would have to follow: the terms' bytes sit back
// to back in one slab, ids index a table of offsets, and the hash table is open addressing
// over integer slots (id+1, 0 for empty). A map[string]uint32 of millions of terms is
// millions of string headers for every collection cycle to mark; this is four slices.
type vocab struct {
	seed  maphash.Seed
	arena []byte   // the terms' bytes, in id order
	ends  []uint64 // ends[id]: where term id ends in arena (it starts at ends[id-1], or 0)
	slots []uint32 // open addressing, linear probing; 0: empty, else id+1
	mask  uint64
	// touched is the sum of what appendIDs read ahead, kept so that the reads are made.
	touched uint64
}

func newVocab() *vocab {
	v := &vocab{seed: maphash.MakeSeed(), slots: make([]uint32, 1024)}
	v.mask = uint64(len(v.slots) - 1)
	return v
}

// len is the number of terms.
func (v *vocab) len() int { return len(v.ends) }

// term returns the bytes of term id (aliasing the slab: valid until the next insertion).
func (v *vocab) term(id uint32) []byte {
	start := uint64(0)
	if id > 0 {
		start = v.ends[id-1]
	}
	return v.arena[start:v.ends[id]]
}

// appendIDs appends the ids of terms to dst, in order, adding the new ones (ids in order of
// first sight); hs is scratch. A rare term's lookup waits on memory four times over (its bytes
// to hash them, its slot, its offsets, the slab), each a miss in a vocabulary of millions, and
// one lookup's misses wait on each other. So the passage's terms' bytes, then their slots,
// then their offsets are read ahead, each in a short loop whose reads do not depend on one
// another and whose misses the processor overlaps; the lookups proper then find most of them
// in its cache (the vocabulary's share of a 1M build's CPU went from 16% to 9%; reading the
// slab ahead as well moved its misses and saved nothing).
func (v *vocab) appendIDs(dst []uint32, terms []string, hs []uint64) ([]uint32, []uint64) {
	hs = slices.Grow(hs[:0], len(terms))[:len(terms)]
	// Each read ahead in a loop of its own: a short loop keeps many of them in flight.
	var touched uint64
	for _, t := range terms {
		if len(t) > 0 {
			touched += uint64(t[0])
		}
	}
	for i, t := range terms {
		hs[i] = maphash.String(v.seed, t)
	}
	for _, h := range hs {
		touched += uint64(v.slots[h&v.mask])
	}
	for _, h := range hs {
		if s := v.slots[h&v.mask]; s != 0 {
			touched += v.ends[s-1]
		}
	}
	v.touched = touched // so that the reads above are not dropped as unused
	for i, t := range terms {
		dst = append(dst, v.idHashed(t, hs[i]))
	}
	return dst, hs
}

// idHashed returns the id of t, whose hash is h, adding it when new.
func (v *vocab) idHashed(t string, h uint64) uint32 {
	for i := h & v.mask; ; i = (i + 1) & v.mask {
		s := v.slots[i]
		if s == 0 {
			id := uint32(len(v.ends))
			v.arena = append(v.arena, t...)
			v.ends = append(v.ends, uint64(len(v.arena)))
			v.slots[i] = id + 1
			if uint64(len(v.ends))*2 > uint64(len(v.slots)) { // load factor at most 1/2
				v.grow()
			}
			return id
		}
		if string(v.term(s-1)) == t { // no allocation: the compiler compares in place
			return s - 1
		}
	}
}

func (v *vocab) grow() {
	v.slots = make([]uint32, 2*len(v.slots))
	v.mask = uint64(len(v.slots) - 1)
	for id := range uint32(len(v.ends)) {
		i := maphash.Bytes(v.seed, v.term(id)) & v.mask
		for v.slots[i] != 0 {
			i = (i + 1) & v.mask
		}
		v.slots[i] = id + 1
	}
}

// bytes is the memory the vocabulary holds.
func (v *vocab) bytes() int64 {
	return int64(cap(v.arena)) + 8*int64(cap(v.ends)) + 4*int64(cap(v.slots))
}

// sorted returns the ids in byte order of their terms.
func (v *vocab) sorted() []uint32 {
	order := make([]uint32, v.len())
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortFunc(order, func(a, b uint32) int { return bytes.Compare(v.term(a), v.term(b)) })
	return order
}
