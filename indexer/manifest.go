package indexer

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/kairos-rag/kairos/indexer/backend/kpst"
	"github.com/kairos-rag/kairos/internal/atomicfile"
)

// FormatVersion is the version of the index directory layout and of the manifest. Readers
// refuse other versions rather than guess. Version 2 added store segments, tombstones and the
// document table; version 1 generations (one passages.kpst, nothing deleted) are still read.
// Version 3 records BM25Stats.Tokens; version 2 manifests are read and score as they did
// (vocabulary-based average length) until an update or compaction writes version 3. The bump
// makes older programs refuse a version 3 index rather than score it without its statistics.
//
// Version 4 records the language and its analyzer (BuildOptions.Language/Analyzer); older
// manifests read as English, which they are. The bump makes older programs refuse an index
// in another language rather than query it with English analysis.
const FormatVersion = 4

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
	// Segments are the passage store files, in key order (version 2; version 1 has one
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
type Segment = kpst.Segment

// segments returns the store segments of m, translating a version 1 manifest.
func (m *Manifest) segments() []Segment {
	if m.FormatVersion == 1 {
		return []Segment{{Name: storeName, Count: m.Counts.Passages}}
	}
	return m.Segments
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
}

// FileSum identifies a file's content.
type FileSum struct {
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

func (m *Manifest) checksum() (string, error) {
	c := *m
	c.Checksum = ""
	b, err := json.Marshal(&c)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// writeManifest writes m into dir atomically (see internal/atomicfile).
func writeManifest(dir string, m *Manifest) error {
	sum, err := m.checksum()
	if err != nil {
		return err
	}
	m.Checksum = sum
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, manifestName), append(b, '\n'), atomicfile.Options{})
}

// ReadManifest reads and checks the manifest of one generation directory.
func ReadManifest(genDir string) (*Manifest, error) {
	path := filepath.Join(genDir, manifestName)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, &DamagedError{Path: path, What: "cannot be read: " + errWithoutPath(err)}
	}
	return parseManifest(b, path)
}

// parseManifest decodes and checks a manifest read from path (a file, or a record of a
// remote generation).
func parseManifest(b []byte, path string) (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, &DamagedError{Path: path, What: "not a manifest: " + err.Error()}
	}
	if m.FormatVersion < 1 || m.FormatVersion > FormatVersion {
		return nil, fmt.Errorf("manifest %s: format version %d, this kairos reads %d", path, m.FormatVersion, FormatVersion)
	}
	sum, err := m.checksum()
	if err != nil {
		return nil, err
	}
	if sum != m.Checksum {
		return nil, &DamagedError{Path: path, What: "checksum mismatch (damaged or edited)"}
	}
	return &m, nil
}

// fileSHA256 hashes one file.
func fileSHA256(path string) (FileSum, error) {
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

// sumTree hashes every regular file under root, keyed by slash path relative to base.
func sumTree(base, root string, into map[string]FileSum) error {
	return filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !d.Type().IsRegular() {
			return errors.New("unexpected non-regular file " + path)
		}
		sum, err := fileSHA256(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(base, path)
		if err != nil {
			return err
		}
		into[filepath.ToSlash(rel)] = sum
		return nil
	})
}
