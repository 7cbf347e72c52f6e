package postings

import (
	"encoding/binary"
	"fmt"

	"github.com/kairos-rag/kairos/internal/framing"
)

// The segment file, inside the framing envelope (magic "KPSG", version 3):
//
//	postings   per term, its blocks back to back, terms in byte order as in the dictionary (a
//	           Builder's segment written before laid them out in the order it first saw them,
//	           and reads the same: readers follow the dictionary's offsets); a block holds
//	           n postings, n = BlockSize but for the term's last block, bit-packed
//	           (blockcodec.go): their ordinal gaps, then their term frequencies. The gap is
//	           ord - next, where next is one past the previous ordinal of the term (0 at its
//	           first block). Version 2 wrote a block as n pairs of uvarint (gap, frequency),
//	           and is read still.
//	blocks     blockEntrySize bytes per block, in the same order as the postings:
//	           last ordinal u32 | offset of the block in the postings section u64 |
//	           largest term frequency u32 | smallest passage length u32.
//	           A block ends where the next begins (the last where the section ends).
//	frontier   frontierEntrySize bytes per pair: term frequency u32 | passage length u32.
//	dict       dictEntrySize bytes per term, terms in byte order:
//	           string offset u64 | string length u32 | document frequency u32 |
//	           first block u64 | first frontier pair u32 | frontier pairs u32.
//	strings    the term bytes.
//	keys       u32 per passage ordinal: its passage key, strictly increasing.
//	lengths    u32 per passage ordinal: its length in tokens.
//	trailer    trailerSize bytes: the fields of trailer, u64 each.
//
// Offsets are from the start of the payload. Integers are little endian.
var segmentFormat = framing.Format{Name: "postings segment", Magic: "KPSG", Version: 3}

// legacyVarintSegmentFormat is the envelope of the segments written with uvarint blocks, the
// same payload but for the postings section; Open reads them still.
var legacyVarintSegmentFormat = framing.Format{Name: "postings segment", Magic: "KPSG", Version: 2}

// legacySegmentFormat is the envelope of the segments written before version 2: the same
// payload, under the magic "KPST" of the passage store (indexer/backend/kpst), so that either
// file opened as the other was refused only by its version ("passage store version 1,
// rebuild", wrong and misleading). Open still reads them, so that indexes built then keep
// opening; every segment written (a build, a merge) takes segmentFormat. The pair
// (magic, version) stays distinct from the store's "KPST" version 2.
var legacySegmentFormat = framing.Format{Name: "postings segment", Magic: "KPST", Version: 1}

// envelope returns the format of the segment b: one of the legacy formats for a version 1 or 2
// segment, else segmentFormat (which then refuses anything that is not a current segment).
func envelope(b []byte) framing.Format {
	for _, l := range []framing.Format{legacySegmentFormat, legacyVarintSegmentFormat} {
		if len(b) >= framing.HeaderSize && string(b[:4]) == l.Magic && binary.LittleEndian.Uint32(b[4:8]) == l.Version {
			return l
		}
	}
	return segmentFormat
}

// BlockSize is the number of postings of a full block.
const BlockSize = 128

const (
	blockEntrySize    = 20
	frontierEntrySize = 8
	dictEntrySize     = 32
	trailerFields     = 12
	trailerSize       = trailerFields * 8
)

// trailer locates the sections of a segment.
type trailer struct {
	docs, terms, blocks, frontier uint64 // counts
	tokens                        uint64 // total length of the passages
	postingsOff, blocksOff        uint64
	frontierOff, dictOff          uint64
	stringsOff, keysOff, lensOff  uint64
}

func (t *trailer) fields() []*uint64 {
	return []*uint64{&t.docs, &t.terms, &t.blocks, &t.frontier, &t.tokens,
		&t.postingsOff, &t.blocksOff, &t.frontierOff, &t.dictOff, &t.stringsOff, &t.keysOff, &t.lensOff}
}

func (t *trailer) append(b []byte) []byte {
	for _, f := range t.fields() {
		b = binary.LittleEndian.AppendUint64(b, *f)
	}
	return b
}

// parseTrailer reads the trailer at the end of payload and checks that the sections it names
// tile the payload exactly, with the sizes their counts imply.
func parseTrailer(payload []byte) (trailer, error) {
	var t trailer
	if len(payload) < trailerSize {
		return t, fmt.Errorf("payload of %d bytes has no room for the %d-byte trailer", len(payload), trailerSize)
	}
	tb := payload[len(payload)-trailerSize:]
	for i, f := range t.fields() {
		*f = binary.LittleEndian.Uint64(tb[8*i:])
	}
	end := uint64(len(payload) - trailerSize)
	const maxCount = 1 << 40 // keeps the products below from overflowing
	if t.docs > 1<<32 || t.terms > 1<<32 || t.blocks > maxCount || t.frontier > maxCount {
		return t, fmt.Errorf("trailer: implausible counts (docs %d, terms %d, blocks %d, frontier %d)", t.docs, t.terms, t.blocks, t.frontier)
	}
	type section struct {
		name     string
		off, len uint64 // len: 0 and sized=false for the variable-length ones
		sized    bool
	}
	secs := []section{
		{"postings", t.postingsOff, 0, false},
		{"blocks", t.blocksOff, t.blocks * blockEntrySize, true},
		{"frontier", t.frontierOff, t.frontier * frontierEntrySize, true},
		{"dict", t.dictOff, t.terms * dictEntrySize, true},
		{"strings", t.stringsOff, 0, false},
		{"keys", t.keysOff, t.docs * 4, true},
		{"lengths", t.lensOff, t.docs * 4, true},
	}
	if t.postingsOff != 0 {
		return t, fmt.Errorf("trailer: postings section at %d, want 0", t.postingsOff)
	}
	for i, s := range secs {
		next := end
		if i+1 < len(secs) {
			next = secs[i+1].off
		}
		if s.off > next || next > end {
			return t, fmt.Errorf("trailer: %s section [%d, %d) outside the payload of %d bytes or out of order", s.name, s.off, next, end)
		}
		if s.sized && next-s.off != s.len {
			return t, fmt.Errorf("trailer: %s section is %d bytes, its count implies %d", s.name, next-s.off, s.len)
		}
	}
	return t, nil
}
