package indexer

import (
	"flag"
	"testing"

	"github.com/kairos-rag/kairos/internal/hnsw"
)

// TestFlagsShowSetDefaults: the flags' defaults are what SetDefaults applies (Flags calls it
// on a copy, zoekt's pattern), so a default is written once; and a value the caller set
// before registering stays the flag's default.
func TestFlagsShowSetDefaults(t *testing.T) {
	var u UpdateOptions
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	u.Flags(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	var want UpdateOptions
	want.SetDefaults()
	if u.Build.MaxWords != want.Build.MaxWords || u.Build.BatchSize != want.Build.BatchSize || u.CompactRatio != want.CompactRatio {
		t.Errorf("flags gave max-words %d batch %d compact-ratio %v; SetDefaults %d %d %v",
			u.Build.MaxWords, u.Build.BatchSize, u.CompactRatio, want.Build.MaxWords, want.Build.BatchSize, want.CompactRatio)
	}
	var h hnsw.Options
	h.SetDefaults()
	if u.HNSW.M != h.M || u.HNSW.EfConstruction != h.EfConstruction || u.HNSW.EfSearch != h.EfSearch || u.HNSW.Seed != DefaultHNSWSeed {
		t.Errorf("HNSW flags %+v, want hnsw's defaults %+v and seed %d", u.HNSW, h, DefaultHNSWSeed)
	}
	if u.HNSW.Workers != 0 {
		t.Errorf("HNSW flags set Workers %d: not a flag, it stays the machine's", u.HNSW.Workers)
	}

	b := BuildOptions{MaxWords: 80}
	fs = flag.NewFlagSet("t", flag.ContinueOnError)
	b.Flags(fs)
	if err := fs.Parse([]string{"--batch", "7"}); err != nil {
		t.Fatal(err)
	}
	if b.MaxWords != 80 || b.BatchSize != 7 {
		t.Errorf("max-words %d batch %d, want 80 (preset) and 7 (given)", b.MaxWords, b.BatchSize)
	}
}
