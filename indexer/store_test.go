package indexer

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

// OpenStore serves each kind of location with its own store: the store's Location is the
// one it was opened from, so a wrong case of the switch (a cluster served as a directory, or
// the reverse) shows as a different location.
func TestOpenStoreLocation(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "idx")
	for _, s := range []string{
		dir,
		"qdrant://127.0.0.1:6334/docs",
		"qdrant://a:6334,b:6334/docs?shards=2&replication=2&rest=a:6333",
	} {
		loc, err := ParseLocation(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := OpenStore(loc).Location().String(); got != s {
			t.Errorf("OpenStore(%q).Location() = %q", s, got)
		}
	}
}

// A directory without an index: no live generation, no manifest (ErrNoIndex), no checkpoint,
// and opening the store creates nothing.
func TestDirStoreEmpty(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "idx")
	st := OpenStore(Location{Dir: dir})
	defer st.Close()
	if n, err := st.Live(ctx); n != 0 || err != nil {
		t.Errorf("Live = %d, %v; want 0, nil", n, err)
	}
	if _, err := st.Manifest(ctx); !errors.Is(err, ErrNoIndex) {
		t.Errorf("Manifest: %v; want ErrNoIndex", err)
	}
	if cp, err := st.PendingCheckpoint(ctx); cp != nil || err != nil {
		t.Errorf("PendingCheckpoint = %+v, %v; want none", cp, err)
	}
	if m, _ := filepath.Glob(dir); len(m) != 0 {
		t.Errorf("asking an empty store created %v", m)
	}
}
