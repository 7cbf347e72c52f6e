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
// the structure is flat byte chunks and one table, no pointer per entry, which the collector
// would otherwise scan on every cycle of the build, and no Go map, whose buckets cost about
// 40 bytes an entry:
//   - the arena holds, per first occurrence, uvarint len + id, then the position: a "line
//     12" style position (a word of the positions table, then a number) as uvarint 1+table
//     index and uvarint number; any other as 0, uvarint len, bytes. It is cut into chunks of
//     idChunk bytes that no entry straddles (a longer entry has a chunk of its own), so that
//     it grows without copying what it holds: a slice grown by append copies itself over
//     and over, a quarter more each time, which cost a 10M-passage build about 7 s of CPU;
//   - slots is an open-addressing table (linear probing, at most 3/4 full) of the entries'
//     references (chunk and offset) + 1 in the low 48 bits, 0 for an empty slot, and the top
//     16 bits of the id's hash in the high 16. Probing compares the ids themselves where the
//     hash bits agree, so the answer is exact whatever the hashes, and a new id, the usual
//     case, reads no entry of the arena, one cache miss each in a table of millions.
//
// Ids of 8 bytes from JSONL lines cost 13 bytes of arena and 11 to 21 of slots each (the
// table doubles): 29.8 in all at 1M (TestIDIndexBytes), where a map of strings took 116 and
// an arena indexed by a Go map 64.
type idIndex struct {
	hash  func(string) uint64 // maphash with a seed of the index's own; tests force collisions
	arena [][]byte
	slots []uint64
	n     int
	words []string // position words met ("line", "row", "document"), at most 255
	entry []byte   // appendEntry's scratch
}

// The arena's chunks are idChunk bytes (1 MiB). An entry's reference is its chunk's index
// shifted by idChunkBits, or'd with its offset there; it fills the low idRefBits of a slot,
// room for 2^28 chunks.
const (
	idChunkBits = 20
	idChunk     = 1 << idChunkBits
	idRefBits   = 48
	idRefMask   = 1<<idRefBits - 1
)

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
	h := x.hash(id)
	tag := h >> idRefBits << idRefBits
	for i := h & mask; ; i = (i + 1) & mask {
		s := x.slots[i]
		if s == 0 {
			x.slots[i] = tag | (x.appendEntry(id, pos) + 1)
			x.n++
			return "", false
		}
		if s&^idRefMask != tag {
			continue
		}
		if eid, rest := x.idAt(s&idRefMask - 1); string(eid) == id { // compared without a copy
			return x.posAt(rest), true
		}
	}
}

// grow doubles the table (16 slots at first) and places every entry again.
func (x *idIndex) grow() {
	x.slots = make([]uint64, max(16, 2*len(x.slots)))
	mask := uint64(len(x.slots) - 1)
	for c, chunk := range x.arena {
		for off := 0; off < len(chunk); {
			ref := uint64(c)<<idChunkBits | uint64(off)
			id, rest := x.idAt(ref)
			h := x.hash(unsafeString(id))
			i := h & mask
			for x.slots[i] != 0 {
				i = (i + 1) & mask
			}
			x.slots[i] = h>>idRefBits<<idRefBits | (ref + 1)
			off = len(chunk) - len(x.skipPos(rest))
		}
	}
}

// appendEntry appends the entry of id at pos to the arena and returns its reference.
func (x *idIndex) appendEntry(id, pos string) uint64 {
	e := binary.AppendUvarint(x.entry[:0], uint64(len(id)))
	e = append(e, id...)
	e = x.appendPos(e, pos)
	x.entry = e
	last := len(x.arena) - 1
	if last < 0 || len(x.arena[last])+len(e) > cap(x.arena[last]) {
		x.arena = append(x.arena, make([]byte, 0, max(idChunk, len(e))))
		last++
	}
	ref := uint64(last)<<idChunkBits | uint64(len(x.arena[last]))
	x.arena[last] = append(x.arena[last], e...)
	return ref
}

// appendPos appends the encoding of the position pos to b.
func (x *idIndex) appendPos(b []byte, pos string) []byte {
	if word, num, ok := strings.Cut(pos, " "); ok {
		if n, err := strconv.ParseUint(num, 10, 64); err == nil && strconv.FormatUint(n, 10) == num {
			if w := x.word(word); w >= 0 {
				b = binary.AppendUvarint(b, uint64(w)+1)
				return binary.AppendUvarint(b, n)
			}
		}
	}
	b = binary.AppendUvarint(b, 0)
	b = binary.AppendUvarint(b, uint64(len(pos)))
	return append(b, pos...)
}

// arenaBytes is the size of the entries held.
func (x *idIndex) arenaBytes() int {
	n := 0
	for _, c := range x.arena {
		n += len(c)
	}
	return n
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

// idAt returns the id of the entry at ref and its chunk from the entry's position on.
func (x *idIndex) idAt(ref uint64) ([]byte, []byte) {
	b := x.arena[ref>>idChunkBits][ref&(idChunk-1):]
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
