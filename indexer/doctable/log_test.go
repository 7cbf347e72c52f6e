package doctable

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// TestDocLogMatchesMapTable checks that the spilled document table of a build writes the same
// bytes as the in-memory table it replaced, with repeated ids spread over many runs and over
// a base table (a resumed build), whatever the buffer's size.
func TestDocLogMatchesMapTable(t *testing.T) {
	type ent struct {
		id   string
		hash Hash
		keys []uint32
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var ents []ent
	key := uint32(0)
	for i := range 3000 {
		id := fmt.Sprintf("doc-%d", rng.IntN(2000)) // about a third are repeats
		if i%500 == 0 {
			id = "" // an empty id sorts first
		}
		var h Hash
		for j := range h {
			h[j] = byte(rng.Uint32())
		}
		n := rng.IntN(4) // a document may have no passage
		keys := make([]uint32, n)
		for j := range keys {
			keys[j] = key
			key++
		}
		ents = append(ents, ent{id, h, keys})
	}
	table := func(es []ent) map[string]*Entry {
		m := map[string]*Entry{}
		for _, e := range es {
			if d, ok := m[e.id]; ok {
				d.Hash = d.Hash.Combine(e.hash)
				d.Keys = append(d.Keys, e.keys...)
				continue
			}
			m[e.id] = &Entry{Hash: e.hash, Keys: append([]uint32(nil), e.keys...)}
		}
		return m
	}
	var want bytes.Buffer
	if err := WriteTo(&want, table(ents)); err != nil {
		t.Fatal(err)
	}
	noCheck := func(*Rec, []*Rec) error { return nil }

	for _, tc := range []struct {
		name  string
		limit int
		base  int // entries written as the base table first
	}{
		{"one run", 1 << 30, 0},
		{"many runs", 512, 0},
		{"an entry per run", 1, 0},
		{"base table and runs", 700, 1200},
		{"base table only", 1 << 30, len(ents)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			l := &Log{Dir: dir, Limit: tc.limit}
			defer l.Close()
			if tc.base > 0 {
				bp := filepath.Join(dir, "base.kdoc")
				if err := Write(bp, table(ents[:tc.base])); err != nil {
					t.Fatal(err)
				}
				f, err := os.Open(bp)
				if err != nil {
					t.Fatal(err)
				}
				l.Base, l.BaseDone = f, f
			}
			for _, e := range ents[tc.base:] {
				if err := l.Add(e.id, e.hash, e.keys, 1, false); err != nil {
					t.Fatal(err)
				}
			}
			path := filepath.Join(dir, FileName)
			wt, err := l.WriteTable(path, noCheck)
			if err != nil {
				t.Fatal(err)
			}
			n := wt.Docs
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want.Bytes()) {
				t.Fatalf("table differs from the in-memory table's (%d bytes, want %d)", len(got), want.Len())
			}
			if m, err := Parse(got); err != nil || len(m) != n {
				t.Fatalf("parsed %d documents (err %v), writeTable said %d", len(m), err, n)
			}
			if wt.Size != int64(len(got)) || wt.SHA256 != sha256.Sum256(got) {
				t.Fatalf("writeTable said %d bytes, sha256 %x; the file has %d, %x", wt.Size, wt.SHA256, len(got), sha256.Sum256(got))
			}
			// A second table from the same log (the next checkpoint) has the entries added since.
			if err := l.Add("zz-late", Hash{9}, []uint32{key}, 1, false); err != nil {
				t.Fatal(err)
			}
			path2 := filepath.Join(dir, "second.kdoc")
			wt2, err := l.WriteTable(path2, noCheck)
			if err != nil {
				t.Fatal(err)
			}
			if wt2.Docs != n+1 {
				t.Fatalf("second table: %d documents, want %d", wt2.Docs, n+1)
			}
		})
	}
}

// TestDocLogCheckSeesRepeats checks that the merge hands every repeat of an id to the check,
// in the order the entries came, with their inputs, and stops at its error.
func TestDocLogCheckSeesRepeats(t *testing.T) {
	dir := t.TempDir()
	l := &Log{Dir: dir, Limit: 1}
	defer l.Close()
	add := func(id string, input int32, fromPos bool, key uint32) {
		if err := l.Add(id, Hash{byte(key)}, []uint32{key}, input, fromPos); err != nil {
			t.Fatal(err)
		}
	}
	add("b", 1, false, 0)
	add("a", 2, true, 1)
	add("b", 2, false, 2)
	add("a", 1, true, 3)
	var seen []string
	_, err := l.WriteTable(filepath.Join(dir, "t.kdoc"), func(first *Rec, rest []*Rec) error {
		s := fmt.Sprintf("%s:%d", first.ID, first.Input)
		for _, r := range rest {
			s += fmt.Sprintf(",%d/%v", r.Input, r.Keys)
		}
		seen = append(seen, s)
		if string(first.ID) == "b" {
			return fmt.Errorf("refused %s", first.ID)
		}
		return nil
	})
	if err == nil || err.Error() != "refused b" {
		t.Fatalf("err = %v, want the check's", err)
	}
	if want := []string{"a:2,1/[3]", "b:1,2/[2]"}; fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Fatalf("check saw %v, want %v", seen, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "t.kdoc")); !os.IsNotExist(err) {
		t.Fatalf("a refused table was written (stat: %v)", err)
	}
}
