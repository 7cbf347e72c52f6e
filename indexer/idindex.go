package indexer

import (
	"encoding/binary"
	"hash/maphash"
)

// idIndex remembers the document ids of one input and where each first appeared, to refuse
// a repeat (reader.readInput). A ten-million-document input holds ten million of them, so
// the memory is free of pointers, which the collector would otherwise scan on every cycle of
// the build: the ids and positions lie in one byte arena, found through a map of integers
// keyed by a hash of the id. Two ids of one hash (rare) are told apart by comparing the
// arena's id; the second goes to a small map of its own.
type idIndex struct {
	hash     func(string) uint64 // maphash with a seed of the index's own; tests force collisions
	arena    []byte              // uvarint len, id, uvarint len, position: per first occurrence
	at       map[uint64]uint64   // hash of an id -> its entry's offset in arena
	collided map[string]string   // ids whose hash an earlier, different id has -> position
}

func newIDIndex() *idIndex {
	seed := maphash.MakeSeed()
	return &idIndex{hash: func(s string) uint64 { return maphash.String(seed, s) }, at: map[uint64]uint64{}}
}

// add records id, first seen at pos, and returns "", false; for an id it holds already it
// returns the position of its first occurrence and true.
func (x *idIndex) add(id, pos string) (first string, repeated bool) {
	h := x.hash(id)
	off, ok := x.at[h]
	if !ok {
		x.at[h] = uint64(len(x.arena))
		x.arena = binary.AppendUvarint(x.arena, uint64(len(id)))
		x.arena = append(x.arena, id...)
		x.arena = binary.AppendUvarint(x.arena, uint64(len(pos)))
		x.arena = append(x.arena, pos...)
		return "", false
	}
	b := x.arena[off:]
	n, w := binary.Uvarint(b)
	if string(b[w:w+int(n)]) == id {
		b = b[w+int(n):]
		n, w = binary.Uvarint(b)
		return string(b[w : w+int(n)]), true
	}
	if p, ok := x.collided[id]; ok {
		return p, true
	}
	if x.collided == nil {
		x.collided = map[string]string{}
	}
	x.collided[id] = pos
	return "", false
}
