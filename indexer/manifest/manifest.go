// Package manifest owns the manifest of an index generation (manifest.json): the record,
// written last, that commits a generation and describes it (inputs, counts, build options,
// the dense model and graph, the BM25 statistics, the passage store's segments and the sum
// of every file). It reads and writes that format, with its version and checksum, and holds
// the types the manifest records, so that whatever keeps generations (a directory, a Qdrant
// cluster) reads and writes them through one package. Package indexer re-exports the types.
package manifest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/internal/atomicfile"
)

// FileName is the manifest's file in a generation directory.
const FileName = "manifest.json"

// FormatVersion is the version of the index directory layout and of the manifest. Readers
// refuse other versions rather than guess. Version 2 added store segments, tombstones and the
// document table, version 3 BM25Stats.Tokens, version 4 the language and its analyzer
// (BuildOptions.Language/Analyzer). Each bump makes older programs refuse an index they would
// misread (score without its statistics, query with English analysis).
const FormatVersion = 4

// MinFormatVersion is the oldest manifest version read. Kairos has had no release, so
// indexes of versions 1 to 3 are refused with the command that rebuilds them rather than
// read through paths kept for them (a vocabulary-based average length, English by default).
const MinFormatVersion = 4

// Manifest describes one committed generation of an index. It is written last, so a
// generation without a valid manifest was never committed.
type Manifest struct {
	FormatVersion int            `json:"format_version"`
	Generation    int            `json:"generation"`
	Created       time.Time      `json:"created"`
	Kairos        string         `json:"kairos"` // version of the program that built it
	Inputs        []Input        `json:"inputs"`
	Counts        Counts         `json:"counts"`
	Sources       map[string]int `json:"sources"` // passages per source
	// Languages counts the live passages per language of a multilingual index (the set its
	// queries are analysed in); nil for a single-language index (see LanguageCounts).
	Languages map[string]int `json:"languages,omitempty"`
	DateFrom  time.Time      `json:"date_from,omitzero"`
	DateTo    time.Time      `json:"date_to,omitzero"`
	Options   BuildOptions   `json:"options"`
	Dense     *DenseInfo     `json:"dense,omitempty"` // nil: BM25 only
	// Segments are the passage store files, in key order (version 2; version 1 had one
	// passages.kpst).
	Segments []Segment `json:"segments,omitempty"`
	// Tombstones counts the keys deleted or superseded (tombstones.ktmb); Counts.Passages
	// counts the live ones.
	Tombstones int `json:"tombstones,omitempty"`
	// BM25 holds the collection statistics searches score with (see BM25Stats).
	BM25 *BM25Stats `json:"bm25,omitempty"`
	// Parent is the generation this one was derived from by an update, delete or resumed
	// build (0: built from scratch or compacted).
	Parent int `json:"parent,omitempty"`
	// Files lists every file of the generation (paths relative to it) with size and sha256,
	// so `verify` can tell damage from a version mismatch.
	Files map[string]FileSum `json:"files"`
	// Checksum is the sha256 of the manifest JSON written with this field empty.
	Checksum string `json:"checksum"`
}

// Segment is one passage store file of a generation, holding keys Base..Base+Count-1.
type Segment = backend.Segment

// PassageLayout is the passage part of the generation m describes, as its engine opens it.
func (m *Manifest) PassageLayout() backend.PassageLayout {
	return backend.PassageLayout{Segments: m.Segments, Tombstones: m.Tombstones, Live: m.Counts.Passages}
}

// Input is one corpus file an index was built from.
type Input struct {
	Path   string `json:"path"`
	Format string `json:"format"`
	Source string `json:"source"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	// Columns says which input column filled each role (FAQ inputs; corpus.ReadStats.Columns).
	Columns map[string]string `json:"columns,omitempty"`
}

// Counts adds up: every record read is a document, skipped (by reason) or bad.
type Counts struct {
	Documents int            `json:"documents"` // read by a build; live after an update
	Passages  int            `json:"passages"`  // live passages
	Skipped   map[string]int `json:"skipped,omitempty"`
	Bad       int            `json:"bad,omitempty"`
	Repaired  int            `json:"repaired,omitempty"`
	// URLsRemoved: documents whose url was not http(s), kept without it (ReadStats.URLsRemoved).
	URLsRemoved int `json:"urls_removed,omitempty"`
}

// FileSum identifies a file's content.
type FileSum struct {
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// SumFile hashes one file: its size and sha256, as a manifest records them.
func SumFile(path string) (FileSum, error) {
	f, err := os.Open(path)
	if err != nil {
		return FileSum{}, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return FileSum{}, err
	}
	return FileSum{Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// Sum returns the sha256 of m's JSON with Checksum empty: what Checksum records.
func (m *Manifest) Sum() (string, error) {
	c := *m
	c.Checksum = ""
	b, err := json.Marshal(&c)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// Marshal sets m's Checksum and returns the manifest as written: indented JSON and a
// newline.
func (m *Manifest) Marshal() ([]byte, error) {
	sum, err := m.Sum()
	if err != nil {
		return nil, err
	}
	m.Checksum = sum
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Write writes m into the generation directory dir atomically (see internal/atomicfile),
// setting its Checksum.
func Write(dir string, m *Manifest) error {
	b, err := m.Marshal()
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, FileName), b, atomicfile.Options{})
}

// Read reads and checks the manifest of one generation directory. A manifest that cannot be
// read, or is not one, or fails its checksum is a *backend.DamagedError naming the file; one
// of a version this package does not read is a plain error.
func Read(genDir string) (*Manifest, error) {
	path := filepath.Join(genDir, FileName)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, &backend.DamagedError{Path: path, What: "cannot be read: " + backend.WithoutPath(err)}
	}
	return Parse(b, path)
}

// Parse decodes and checks a manifest read from path (a file, or a record of a remote
// generation), as Read does.
func Parse(b []byte, path string) (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, &backend.DamagedError{Path: path, What: "not a manifest: " + err.Error()}
	}
	if m.FormatVersion >= 1 && m.FormatVersion < MinFormatVersion {
		return nil, fmt.Errorf("manifest %s: format version %d is no longer read (this kairos reads %d); rebuild the index (kairos index --force)", path, m.FormatVersion, FormatVersion)
	}
	if m.FormatVersion < 1 || m.FormatVersion > FormatVersion {
		return nil, fmt.Errorf("manifest %s: format version %d, this kairos reads %d", path, m.FormatVersion, FormatVersion)
	}
	sum, err := m.Sum()
	if err != nil {
		return nil, err
	}
	if sum != m.Checksum {
		return nil, &backend.DamagedError{Path: path, What: "checksum mismatch (damaged or edited)"}
	}
	return &m, nil
}
