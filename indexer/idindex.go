package indexer

import (
	"encoding/binary"
	"hash/maphash"
	"strconv"
	"strings"
	"unsafe"
)

// idIndex remembers the document ids of one input and where each first appeared, to refuse
// a repeat (reader.readInput). A ten-million-document input holds ten million of them, so
// the structure is two flat slices and no pointers, which the collector would otherwise scan
// on every cycle of the build, and no Go map, whose buckets cost about 40 bytes an entry:
//   - arena holds, per first occurrence, uvarint len + id, then the position: a "line 12"
//     style position (a word of the positions table, then a number) as uvarint
//     1+table index and uvarint number; any other as 0, uvarint len, bytes;
//   - slots is an open-addressing table (linear probing, at most 3/4 full) of arena offset+1,
//     0 for an empty slot. Probing compares the ids themselves, so the answer is exact
//     whatever the hashes.
//
// Ids of 8 bytes from JSONL lines cost 13 bytes of arena and 11 to 21 of slots each (the
// table doubles): 29.8 in all at 1M (TestIDIndexBytes), where a map of strings took 116 and
// an arena indexed by a Go map 64.
type idIndex struct {
	hash  func(string) uint64 // maphash with a seed of the index's own; tests force collisions
	arena []byte
	slots []uint64
	n     int
	words []string // position words met ("line", "row", "document"), at most 255
}

func newIDIndex() *idIndex {
	seed := maphash.MakeSeed()
	return &idIndex{hash: func(s string) uint64 { return maphash.String(seed, s) }}
}

// add records id, first seen at pos, and returns "", false; for an id it holds already it
// returns the position of its first occurrence and true.
func (x *idIndex) add(id, pos string) (first string, repeated bool) {
	if 4*(x.n+1) > 3*len(x.slots) {
		x.grow()
	}
	mask := uint64(len(x.slots) - 1)
	for i := x.hash(id) & mask; ; i = (i + 1) & mask {
		off := x.slots[i]
		if off == 0 {
			x.slots[i] = uint64(len(x.arena)) + 1
			x.n++
			x.appendEntry(id, pos)
			return "", false
		}
		if eid, rest := x.idAt(off - 1); string(eid) == id { // compared without a copy
			return x.posAt(rest), true
		}
	}
}

// grow doubles the table (16 slots at first) and places every entry again.
func (x *idIndex) grow() {
	x.slots = make([]uint64, max(16, 2*len(x.slots)))
	mask := uint64(len(x.slots) - 1)
	for off := 0; off < len(x.arena); {
		id, rest := x.idAt(uint64(off))
		i := x.hash(unsafeString(id)) & mask
		for x.slots[i] != 0 {
			i = (i + 1) & mask
		}
		x.slots[i] = uint64(off) + 1
		off = len(x.arena) - len(x.skipPos(rest))
	}
}

func (x *idIndex) appendEntry(id, pos string) {
	x.arena = binary.AppendUvarint(x.arena, uint64(len(id)))
	x.arena = append(x.arena, id...)
	if word, num, ok := strings.Cut(pos, " "); ok {
		if n, err := strconv.ParseUint(num, 10, 64); err == nil && strconv.FormatUint(n, 10) == num {
			if w := x.word(word); w >= 0 {
				x.arena = binary.AppendUvarint(x.arena, uint64(w)+1)
				x.arena = binary.AppendUvarint(x.arena, n)
				return
			}
		}
	}
	x.arena = binary.AppendUvarint(x.arena, 0)
	x.arena = binary.AppendUvarint(x.arena, uint64(len(pos)))
	x.arena = append(x.arena, pos...)
}

// word returns the index of w in the positions table, adding it, or -1 when it is full.
func (x *idIndex) word(w string) int {
	for i, s := range x.words {
		if s == w {
			return i
		}
	}
	if len(x.words) == 255 {
		return -1
	}
	x.words = append(x.words, w)
	return len(x.words) - 1
}

// idAt returns the id of the entry at off and the arena from its position on.
func (x *idIndex) idAt(off uint64) ([]byte, []byte) {
	b := x.arena[off:]
	n, w := binary.Uvarint(b)
	return b[w : w+int(n)], b[w+int(n):]
}

// unsafeString views b as a string for hashing, without the copy a conversion makes: grow
// hashes every id again, and the arena does not change meanwhile.
func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

func (x *idIndex) posAt(b []byte) string {
	kind, w := binary.Uvarint(b)
	b = b[w:]
	n, w := binary.Uvarint(b)
	if kind == 0 {
		return string(b[w : w+int(n)])
	}
	return x.words[kind-1] + " " + strconv.FormatUint(n, 10)
}

// skipPos returns b after the position at its start.
func (x *idIndex) skipPos(b []byte) []byte {
	kind, w := binary.Uvarint(b)
	b = b[w:]
	n, w := binary.Uvarint(b)
	b = b[w:]
	if kind == 0 {
		b = b[n:]
	}
	return b
}
