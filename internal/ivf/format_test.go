package ivf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// tinyIndex builds a small index and returns its directory and head, the seeds of the fuzzers.
func tinyIndex(t testing.TB) (string, *Head) {
	dir := t.TempDir()
	vecs := clustered(300, 20, 4, 12)
	r := build(t, dir, vecs, Options{Lists: 4}, 300)
	ctx := t.Context()
	w, err := Derive(filepath.Join(dir, "next"), r, false, 1)
	if err != nil {
		t.Fatal(err)
	}
	w.Delete(3)
	w.Delete(77)
	if _, err := w.Commit(ctx, true, nil); err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(dir, "next")
	b, err := os.ReadFile(filepath.Join(dir, HeadName))
	if err != nil {
		t.Fatal(err)
	}
	h, err := ParseHead(b)
	if err != nil {
		t.Fatal(err)
	}
	return dir, h
}

// TestFileNames: the names of files numbered past a million are still names a head may hold.
func TestFileNames(t *testing.T) {
	for _, n := range []int{0, 7, 999_999, 1_000_000, 4_000_000_000} {
		if nm := name("lists", n, listsSuffix); !fileName.MatchString(nm) {
			t.Errorf("file %d: %q is refused", n, nm)
		}
	}
	for _, nm := range []string{"lists-00001.ivfl", "../lists-000001.ivfl", "lists-000001.txt"} {
		if fileName.MatchString(nm) {
			t.Errorf("%q is accepted", nm)
		}
	}
}

// TestFormatErrors: each file refuses what is not one of its kind, with ErrFormat.
func TestFormatErrors(t *testing.T) {
	dir, h := tinyIndex(t)
	read := func(n string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	head, chunkB, segB := read(HeadName), read(h.Chunks[0].Name), read(h.Lists[0].Name)
	cases := []struct {
		name string
		err  error
	}{
		{"head cut short", func() error { _, err := ParseHead(head[:len(head)-3]); return err }()},
		{"head with another version", func() error {
			b := append([]byte(nil), head...)
			b[8] = 9
			_, err := ParseHead(b)
			return err
		}()},
		{"chunk read as a segment", func() error {
			_, err := parseSegment(chunkB, h.Dim, padDim(h.Dim)/64, h.Options.Lists, h.Len(), h.Lists[0], true)
			return err
		}()},
		{"segment read as a chunk", func() error { _, err := parseChunk(segB, h.Dim, 0, true); return err }()},
		{"chunk of another dimension", func() error { _, err := parseChunk(chunkB, h.Dim+1, 0, true); return err }()},
		{"deletions of another count", func() error { _, err := parseDeleted(read(h.Deleted), h.Len(), 3); return err }()},
		{"centroid direction not finite", func() error {
			c, err := parseCentroids(read(h.Centroids), h.Dim, h.Options.Lists)
			if err != nil {
				return err
			}
			c.dirs[len(c.dirs)/2] = float32(math.NaN())
			var b bytes.Buffer
			if err := writeCentroids(&b, c); err != nil {
				return err
			}
			_, err = parseCentroids(b.Bytes(), h.Dim, h.Options.Lists)
			return err
		}()},
	}
	for _, c := range cases {
		if !errors.Is(c.err, ErrFormat) {
			t.Errorf("%s: %v, want ErrFormat", c.name, c.err)
		}
	}
	for _, bad := range []string{"../head.ivf", "vectors-000001.ivfl", "/etc/passwd", "vectors-1.ivfv"} {
		h2 := *h
		h2.Chunks = []FileRange{{Name: bad, First: 0, Count: h.Len()}}
		if err := h2.validate(); !errors.Is(err, ErrFormat) {
			t.Errorf("a head naming %q: %v", bad, err)
		}
	}
}

// FuzzParseHead: no input makes the head parser panic, and what it accepts is consistent.
func FuzzParseHead(f *testing.F) {
	dir, _ := tinyIndex(f)
	b, _ := os.ReadFile(filepath.Join(dir, HeadName))
	f.Add(b)
	f.Add(headFormat.Begin())
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := ParseHead(b)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v is not ErrFormat", err)
			}
			return
		}
		if err := h.validate(); err != nil {
			t.Fatalf("accepted an inconsistent head: %v", err)
		}
	})
}

// FuzzParseFiles: no input makes the parsers of the other files panic; a segment or chunk they
// accept can be read whole.
func FuzzParseFiles(f *testing.F) {
	dir, h := tinyIndex(f)
	for _, n := range h.Files() {
		if filepath.Ext(n) == graphSuffix {
			continue
		}
		b, _ := os.ReadFile(filepath.Join(dir, n))
		f.Add(b)
	}
	dim, words, lists, n := h.Dim, padDim(h.Dim)/64, h.Options.Lists, h.Len()
	f.Fuzz(func(t *testing.T, b []byte) {
		if c, err := parseChunk(b, dim, 0, false); err == nil { // unverified, as a large mapped file is read
			for i := range c.count {
				inv, code := c.rec(i)
				_ = dotI8(make([]float32, dim), code) * inv
			}
		}
		if s, err := parseSegment(b, dim, words, lists, n, FileRange{First: 0, Count: n}, false); err == nil {
			for l := range lists {
				codes := s.listCodes(nil, int32(l))
				for e := s.offsets[l]; e < s.offsets[l+1]; e++ {
					_ = codes[int(e-s.offsets[l])*words+words-1] + uint64(s.pos[e])
					_ = s.factors[int(e)*factorsPer+factorsPer-1]
					if s.refine != nil {
						rw := refineWords(words)
						_, _ = refineFactors(s.refine[int(e)*rw : int(e+1)*rw])
					}
				}
			}
		}
		if c, err := parseCentroids(b, dim, lists); err == nil {
			_ = c.centers[lists*c.dpad-1] + c.dirs[lists*dim-1]
		}
		if pos, err := parseDeleted(b, n, len(b)/4); err == nil {
			for _, p := range pos {
				if int(p) >= n {
					t.Fatalf("deleted position %d of %d accepted", p, n)
				}
			}
		}
	})
}

// TestNumbersOf reads the same little-endian bytes through an aligned view and through an
// unaligned copy.
func TestNumbersOf(t *testing.T) {
	raw := make([]byte, 8+1+24)
	for i := range raw {
		raw[i] = byte(i*37 + 11)
	}
	for _, off := range []int{0, 8, 9} { // 9: not aligned for any of them
		b := raw[off : off+24]
		u32, u64, f32 := numbersOf[uint32](b), numbersOf[uint64](b), numbersOf[float32](b)
		if len(u32) != 6 || len(u64) != 3 || len(f32) != 6 {
			t.Fatalf("offset %d: lengths %d, %d, %d", off, len(u32), len(u64), len(f32))
		}
		for i := range u32 {
			if want := binary.LittleEndian.Uint32(b[4*i:]); u32[i] != want || math.Float32bits(f32[i]) != want {
				t.Fatalf("offset %d: number %d: %#x and %#x, want %#x", off, i, u32[i], math.Float32bits(f32[i]), want)
			}
		}
		for i := range u64 {
			if want := binary.LittleEndian.Uint64(b[8*i:]); u64[i] != want {
				t.Fatalf("offset %d: uint64 %d: %#x, want %#x", off, i, u64[i], want)
			}
		}
	}
	if numbersOf[uint64](raw[:7]) != nil {
		t.Fatal("7 bytes: want no uint64")
	}
}
