package hnsw

import (
	"fmt"
	"io"
)

// Format version 2 has the header of version 1 (version field 2) and a body of page-aligned
// sections, so that LoadMapped can map the large ones straight from the file:
//
//	keys u64[n] | levels u8[n] | upper offsets u32[n] | level-0 lists u32[n*(2M+1)] |
//	upper lists u32[upper length] | tombstones u64[ceil(n/64)] | quantiser f32[dim] lo, f32[dim] step |
//	codes u8[n*dim] | vectors f32[n*dim] | CRC-32C u32
//
// Version 3 (binary codes) adds two sections before the vectors: the per-dimension thresholds
// f32[dim] and the bits u64[n*ceil(dim/64)] (binary.go). In a version-2 file both are empty, and
// an empty section moves nothing, so the two versions share one layout function.
//
// Every section starts at a multiple of pageSize from the start of the file; the gaps are zero
// bytes. The CRC covers everything after the header, gaps included. The float vectors come last:
// a mapped graph reads them only to rescore a handful of candidates per query.
const pageSize = 4096

// Section indices of the version-2 layout.
const (
	secKeys = iota
	secLevels
	secUpperOff
	secLevel0
	secUpper
	secTombstones
	secQuant
	secCodes
	secBitMeans
	secBits
	secVectors
	numSections
)

var sectionNames = [numSections]string{"keys", "levels", "upper offsets", "level-0 lists",
	"upper lists", "tombstones", "quantiser", "codes", "bit thresholds", "bits", "vectors"}

// span is one section of a file: its offset from the start of the file and its size in bytes.
type span struct{ off, size int64 }

// layoutV2 returns the sections of a version-2 file (version 3 with bits) and the file's total
// size.
func layoutV2(n, dim, stride int, upperLen uint64, bits bool) ([numSections]span, int64) {
	n64, d64 := int64(n), int64(dim)
	sizes := [numSections]int64{
		secKeys: 8 * n64, secLevels: n64, secUpperOff: 4 * n64, secLevel0: 4 * n64 * int64(stride),
		secUpper: 4 * int64(upperLen), secTombstones: 8 * int64(words(n)), secQuant: 8 * d64,
		secCodes: n64 * d64, secVectors: 4 * n64 * d64,
	}
	if bits {
		sizes[secBitMeans] = 4 * d64
		sizes[secBits] = 8 * n64 * int64(words(dim))
	}
	var out [numSections]span
	at := int64(headerSize)
	for i, sz := range sizes {
		at = alignPage(at)
		out[i] = span{at, sz}
		at += sz
	}
	return out, at + 4
}

func alignPage(x int64) int64 { return (x + pageSize - 1) / pageSize * pageSize }

// writeBodyV2 writes the sections after the header. The codes are computed here from the float
// vectors unless the graph already holds them (a mapped graph).
func (g *Graph) writeBodyV2(cw *crcWriter) error {
	n := len(g.keys)
	binary := g.opts.Codes == CodesBinary
	secs, _ := layoutV2(n, g.dim, g.stride, uint64(len(g.upper)), binary)
	quant, means := g.quant, g.bitMeans
	if g.codes == nil {
		var err error
		if quant, err = fitQuantizerEach(g.dim, g.eachVec); err != nil {
			return fmt.Errorf("hnsw: fitting the codes: %w", err)
		}
	}
	if binary && g.bits == nil {
		var err error
		if means, err = fitMeansEach(g.dim, g.eachVec); err != nil {
			return fmt.Errorf("hnsw: fitting the bit thresholds: %w", err)
		}
	}
	zeros := make([]byte, pageSize)
	for i, sec := range secs {
		if pad := sec.off - cw.n; pad > 0 {
			if _, err := cw.Write(zeros[:pad]); err != nil {
				return fmt.Errorf("hnsw: writing padding at byte %d: %w", cw.n, err)
			}
		}
		var err error
		switch i {
		case secKeys:
			err = writeSection(cw, g.keys)
		case secLevels:
			err = writeSection(cw, g.levels)
		case secUpperOff:
			err = writeSection(cw, g.upperOff)
		case secLevel0:
			err = writeSection(cw, g.level0[:n*g.stride])
		case secUpper:
			err = writeSection(cw, g.upper)
		case secTombstones:
			err = writeSection(cw, g.deleted[:words(n)])
		case secQuant:
			if err = writeSection(cw, quant.lo); err == nil {
				err = writeSection(cw, quant.step)
			}
		case secCodes:
			err = g.writeCodes(cw, quant)
		case secBitMeans:
			if binary {
				err = writeSection(cw, means)
			}
		case secBits:
			if binary {
				err = g.writeBits(cw, means)
			}
		case secVectors:
			err = g.writeVectors(cw)
		}
		if err != nil {
			return fmt.Errorf("hnsw: writing %s at byte %d: %w", sectionNames[i], cw.n, err)
		}
	}
	return nil
}

// writeCodes writes the codes of every node, encoding them in chunks when they are not held.
func (g *Graph) writeCodes(w io.Writer, quant quantizer) error {
	n := len(g.keys)
	if g.codes != nil {
		_, err := w.Write(g.codes[:n*g.dim])
		return err
	}
	const chunk = 4096
	buf := make([]byte, chunk*g.dim)
	return g.eachVec(func(_ int, block []float32) error {
		for len(block) > 0 {
			cnt := min(chunk, len(block)/g.dim)
			for j := range cnt {
				quant.encode(buf[j*g.dim:(j+1)*g.dim], block[j*g.dim:(j+1)*g.dim])
			}
			if _, err := w.Write(buf[:cnt*g.dim]); err != nil {
				return err
			}
			block = block[cnt*g.dim:]
		}
		return nil
	})
}

// writeVectors writes the float vectors, from memory or from the file that holds them (a
// mapped graph's, or the spill file of one built from codes).
func (g *Graph) writeVectors(w io.Writer) error {
	return g.eachVec(func(first int, block []float32) error {
		return writeSection(w, block)
	})
}

// readBodyV2 reads the sections after the header. In memory (mapped false) it loads everything
// but the codes; mapped, it loads the small sections and only checksums the level-0 lists, the
// codes and the vectors, which LoadMapped then maps from the file.
func (g *Graph) readBodyV2(cr *crcReader, h *header, mapped bool) error {
	n := int(h.Nodes)
	binary := g.opts.Codes == CodesBinary
	secs, total := layoutV2(n, g.dim, g.stride, h.UpperLen, binary)
	left, sized := inputLen(cr.r)
	if sized && int64(left) != total-headerSize {
		return fmt.Errorf("hnsw: header says %d bytes follow, input has %d: truncated or padded file", total-headerSize, left)
	}
	g.quant = quantizer{lo: make([]float32, g.dim), step: make([]float32, g.dim)}
	buf := make([]byte, 256<<10)
	for i, sec := range secs {
		if err := discard(cr, sec.off-cr.n, buf); err != nil {
			return fmt.Errorf("hnsw: reading padding before %s at byte %d: %w", sectionNames[i], cr.n, err)
		}
		var err error
		switch i {
		case secKeys:
			g.keys, err = readSlice[uint64](cr, n, sized)
		case secLevels:
			g.levels, err = readSlice[uint8](cr, n, sized)
		case secUpperOff:
			if g.upperOff, err = readSlice[uint32](cr, n, sized); err == nil {
				err = g.checkLevels(h.UpperLen)
			}
		case secLevel0:
			if mapped {
				err = discard(cr, sec.size, buf)
			} else {
				g.level0, err = readSlice[uint32](cr, n*g.stride, sized)
			}
		case secUpper:
			g.upper, err = readSlice[uint32](cr, int(h.UpperLen), sized)
		case secTombstones:
			g.deleted, err = readSlice[uint64](cr, words(n), sized)
		case secQuant:
			if err = readSection(cr, g.quant.lo); err == nil {
				err = readSection(cr, g.quant.step)
			}
		case secCodes, secBits: // mapped by LoadMapped, or recomputed by the next Save
			err = discard(cr, sec.size, buf)
		case secBitMeans:
			if binary {
				g.bitMeans = make([]float32, g.dim)
				err = readSection(cr, g.bitMeans)
			}
		case secVectors:
			if mapped {
				err = discard(cr, sec.size, buf)
			} else {
				g.vecs, err = readSlice[float32](cr, n*g.dim, sized)
			}
		}
		if err != nil {
			return sectionError(sectionNames[i], cr, err)
		}
	}
	return nil
}

// discard reads and drops n bytes of r (so a crcReader still checksums them).
func discard(r io.Reader, n int64, buf []byte) error {
	for n > 0 {
		m, err := io.ReadFull(r, buf[:min(n, int64(len(buf)))])
		n -= int64(m)
		if err != nil {
			return truncated(err)
		}
	}
	return nil
}
