package postings

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/internal/framing"
)

// smallSegment returns the bytes of a valid segment with several blocks for its frequent
// terms, small enough for the fuzzer to mutate quickly.
func smallSegment(tb testing.TB) []byte {
	tb.Helper()
	return smallSegmentWith(tb, BuilderOptions{MaxBufferedPostings: 500})
}

// smallVarintSegment is smallSegment's passages in a version 2 segment (uvarint blocks).
func smallVarintSegment(tb testing.TB) []byte {
	tb.Helper()
	return smallSegmentWith(tb, BuilderOptions{MaxBufferedPostings: 500, varintBlocks: true})
}

func smallSegmentWith(tb testing.TB, opts BuilderOptions) []byte {
	tb.Helper()
	c := newZipfCorpus(5, 300, 12)
	path := tempPath(tb, "seed.kpst")
	c.build(tb, path, opts, nil)
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// exercise opens data as a segment file and reads all of it: every error must name the
// file, and nothing may panic (the fuzzer reports panics).
func exercise(t *testing.T, data []byte, opts OpenOptions) error {
	path := filepath.Join(t.TempDir(), "fuzzed.kpst")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	named := func(err error) error {
		if err != nil && !strings.Contains(err.Error(), path) {
			t.Fatalf("error does not name the file: %v", err)
		}
		return err
	}
	seg, err := Open(path, opts)
	if err != nil {
		return named(err)
	}
	defer seg.Close()
	verr := named(seg.Verify(context.Background()))
	// Search whatever the dictionary holds, through the pruning paths (small k).
	var terms []string
	for i := 0; i < seg.Terms() && len(terms) < 12; i++ {
		terms = append(terms, seg.termAt(i))
	}
	x, _ := NewSearcher([]*Segment{seg}, SearcherOptions{Workers: 1})
	seen := map[string]bool{}
	var q []string
	for _, t := range terms {
		if !seen[t] {
			seen[t] = true
			q = append(q, t)
		}
	}
	if len(q) > 0 {
		_, err := x.Search(context.Background(), Query{Terms: q, K: 3}, Scoring{K1: 1.2, B: 0.4, Docs: 400, Tokens: 20000})
		named(err)
	}
	return verr
}

func FuzzOpenSegment(f *testing.F) {
	seed := smallSegment(f)
	f.Add(seed)
	f.Add(seed[:len(seed)/2])
	f.Add([]byte("KPSG"))
	varint := smallVarintSegment(f)
	f.Add(varint)
	f.Add(asLegacy(f, varint))
	f.Fuzz(func(t *testing.T, data []byte) {
		exercise(t, data, OpenOptions{SkipChecksum: true})
		if err := exercise(t, data, OpenOptions{}); err == nil && string(data) != string(seed) {
			// with the checksum on, only a file whose CRC matches its bytes opens
			if _, err := envelope(data).Open(data); err != nil {
				t.Fatalf("opened a file the envelope rejects: %v", err)
			}
		}
	})
}

// TestDamagedSegment damages a valid file in each of its parts: Open (with the checksum)
// or Verify (without it) must fail with an error naming the file.
func TestDamagedSegment(t *testing.T) {
	good := smallSegment(t)
	payload := good[framing.HeaderSize : len(good)-framing.FooterSize]
	tr, err := parseTrailer(payload)
	if err != nil {
		t.Fatal(err)
	}
	at := func(off uint64) int { return framing.HeaderSize + int(off) }
	flip := func(i int) []byte {
		b := append([]byte(nil), good...)
		b[i] ^= 0x5a
		return b
	}
	tests := []struct {
		name    string
		data    []byte
		skipCRC bool // also without the checksum, Open or Verify must catch it
	}{
		{"empty", nil, true},
		{"truncated", good[:len(good)-9], true},
		{"other magic", append([]byte("KSTO"), good[4:]...), true},
		{"newer version", func() []byte {
			b := append([]byte(nil), good...)
			binary.LittleEndian.PutUint32(b[4:], segmentFormat.Version+1)
			return b
		}(), true},
		{"postings byte", flip(at(tr.postingsOff) + 3), false},
		{"packed gap width", func() []byte {
			b := append([]byte(nil), good...)
			b[at(tr.postingsOff)] = maxGapWidth + 1
			return b
		}(), true},
		{"packed frequency width", func() []byte {
			b := append([]byte(nil), good...)
			b[at(tr.postingsOff)+1] = maxFreqWidth + 1
			return b
		}(), true},
		{"block table", flip(at(tr.blocksOff) + 5), true},
		{"dictionary df", flip(at(tr.dictOff) + 12), true},
		{"key order", flip(at(tr.keysOff) + 2), true},
		{"trailer", flip(len(good) - framing.FooterSize - 30), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := exercise(t, tt.data, OpenOptions{}); err == nil {
				t.Fatal("a damaged file opened and verified")
			} else if tt.name != "empty" && !errors.Is(err, framing.ErrFormat) {
				t.Fatalf("error does not wrap framing.ErrFormat: %v", err)
			}
			if tt.skipCRC {
				if err := exercise(t, tt.data, OpenOptions{SkipChecksum: true}); err == nil {
					t.Fatal("without the checksum, the damage went unnoticed")
				}
			}
		})
	}
}
