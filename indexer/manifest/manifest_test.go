package manifest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/internal/hnsw"
	"github.com/kairos-rag/kairos/internal/modelid"
)

// sample is a manifest with every part set, as a build writes one.
func sample() *Manifest {
	return &Manifest{
		FormatVersion: FormatVersion, Generation: 3, Created: time.Date(2026, 11, 25, 1, 2, 3, 0, time.UTC),
		Kairos: "test", Inputs: []Input{{Path: "a.jsonl", Format: "jsonl", Source: "a", Size: 10, SHA256: "ab"}},
		Counts:  Counts{Documents: 2, Passages: 5, Skipped: map[string]int{"redirect": 1}},
		Sources: map[string]int{"a": 5}, Languages: map[string]int{"en": 4, "de": 1},
		Options:  BuildOptions{MaxWords: 100, BatchSize: 10, Analyzer: "multilingual", Lexical: LexicalPostings},
		Dense:    &DenseInfo{Model: modelid.Identity{Name: "m", Dim: 8}, HNSW: hnsw.Options{M: 16, EfConstruction: 100, Codes: "int8"}, Vectors: 5},
		Segments: []Segment{{Name: "passages-000000.kpst", Base: 0, Count: 5}}, Tombstones: 1,
		BM25: &BM25Stats{Docs: 5, Tokens: 40}, Parent: 2,
		Files: map[string]FileSum{"manifest-free.bin": {Size: 3, SHA256: "cd"}},
	}
}

func TestWriteRead(t *testing.T) {
	dir := t.TempDir()
	m := sample()
	if err := Write(dir, m); err != nil {
		t.Fatal(err)
	}
	if m.Checksum == "" {
		t.Fatal("Write did not set the checksum")
	}
	got, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, m) {
		t.Errorf("read back\n%+v\nwrote\n%+v", got, m)
	}
}

// TestParseRefuses: a damaged manifest is a DamagedError naming the file; one of another
// version is refused with a plain error that says so.
func TestParseRefuses(t *testing.T) {
	good, err := sample().Marshal()
	if err != nil {
		t.Fatal(err)
	}
	other := sample()
	other.FormatVersion = FormatVersion + 1
	newer, _ := other.Marshal()
	cases := []struct {
		name    string
		b       []byte
		damaged bool
		want    string
	}{
		{"empty", nil, true, "not a manifest"},
		{"not JSON", []byte("g-000003\n"), true, "not a manifest"},
		{"truncated", good[:len(good)/2], true, "not a manifest"},
		{"edited", []byte(strings.Replace(string(good), `"passages": 5`, `"passages": 6`, 1)), true, "checksum mismatch"},
		{"no checksum", []byte(`{"format_version": 4}`), true, "checksum mismatch"},
		{"version 0", []byte(`{"format_version": 0}`), false, "format version 0"},
		{"newer version", newer, false, "this kairos reads"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(c.b, "gen/manifest.json")
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "gen/manifest.json") {
				t.Fatalf("err %v, want one naming the file and saying %q", err, c.want)
			}
			var de *backend.DamagedError
			if errors.As(err, &de) != c.damaged {
				t.Errorf("DamagedError %v, want %v: %v", !c.damaged, c.damaged, err)
			}
		})
	}
	if _, err := Parse(good, "x"); err != nil {
		t.Errorf("the good manifest: %v", err)
	}
}

func TestReadMissing(t *testing.T) {
	dir := t.TempDir()
	_, err := Read(dir)
	var de *backend.DamagedError
	if !errors.As(err, &de) || de.Path != filepath.Join(dir, FileName) || strings.Count(err.Error(), dir) != 1 {
		t.Errorf("missing manifest: %v (want a DamagedError naming the path once)", err)
	}
}

// A manifest older than MinFormatVersion is refused with the command that rebuilds the
// index; versions MinFormatVersion to FormatVersion read, and the passage layout is the
// segments recorded.
func TestFormatVersionsRead(t *testing.T) {
	for _, tc := range []struct {
		version int
		want    string // "" reads
	}{{1, "kairos index --force"}, {MinFormatVersion - 1, "kairos index --force"}, {MinFormatVersion, ""}, {FormatVersion, ""}, {FormatVersion + 1, "this kairos reads"}, {0, "this kairos reads"}} {
		m := sample()
		m.FormatVersion = tc.version
		b, err := m.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		got, err := Parse(b, "manifest.json")
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("version %d: %v", tc.version, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("version %d: %v, want an error saying %q", tc.version, err, tc.want)
		case err == nil && !reflect.DeepEqual(got.PassageLayout().Segments, m.Segments):
			t.Errorf("version %d: layout %+v, want segments %+v", tc.version, got.PassageLayout(), m.Segments)
		}
	}
}

func TestLexicalAndLanguage(t *testing.T) {
	cases := []struct {
		opts      BuildOptions
		lexical   string
		language  string
		languages []string
	}{
		{BuildOptions{}, LexicalBleve, "en", []string{"en"}}, // written before both were recorded
		{BuildOptions{Lexical: LexicalPostings, Analyzer: Analyzer}, LexicalPostings, "en", []string{"en"}},
		{BuildOptions{Lexical: LexicalQdrant, Language: "de", Analyzer: "de"}, LexicalQdrant, "de", []string{"de"}},
	}
	for _, c := range cases {
		m := &Manifest{Options: c.opts, Counts: Counts{Passages: 3}}
		if m.LexicalEngine() != c.lexical || m.Language() != c.language || !reflect.DeepEqual(m.IndexLanguages(), c.languages) {
			t.Errorf("%+v: lexical %q language %q languages %v", c.opts, m.LexicalEngine(), m.Language(), m.IndexLanguages())
		}
	}
	if m := sample(); !m.Multilingual() || m.Language() != "" || !reflect.DeepEqual(m.IndexLanguages(), []string{"de", "en"}) {
		t.Errorf("multilingual: %v %q %v", m.Multilingual(), m.Language(), m.IndexLanguages())
	}
}

func FuzzParse(f *testing.F) {
	good, err := sample().Marshal()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"format_version": 1}`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Parse(b, "fuzz")
		if err != nil {
			return
		}
		// What parses writes back to a manifest that parses to the same thing.
		again, err := m.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		m2, err := Parse(again, "fuzz")
		if err != nil || !reflect.DeepEqual(m, m2) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

func ExampleRead() {
	dir, _ := os.MkdirTemp("", "gen")
	defer os.RemoveAll(dir)
	m := &Manifest{FormatVersion: FormatVersion, Generation: 1, Counts: Counts{Documents: 1, Passages: 2}}
	if err := Write(dir, m); err != nil {
		panic(err)
	}
	got, err := Read(dir)
	if err != nil {
		panic(err)
	}
	fmt.Println(got.Generation, got.Counts.Passages, got.LexicalEngine())
	// Output: 1 2 bleve
}
