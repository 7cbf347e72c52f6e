package manifest

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/internal/atomicfile"
	"github.com/kairos-rag/kairos/internal/hnsw"
	"github.com/kairos-rag/kairos/internal/ivf"
	"github.com/kairos-rag/kairos/internal/modelid"
	"github.com/kairos-rag/kairos/internal/nearest"
)

// An index directory names its generations and points at two of them:
//
//	DIR/CURRENT        one line: the name of the live generation ("g-000003")
//	DIR/CHECKPOINT     the checkpoint of a build in progress (JSON with a checksum)
//	DIR/g-000003/      manifest.json and the engines' files
//
// An index on Qdrant names its collections after the same generation names and keeps the
// manifest and the checkpoint as records; an alias takes CURRENT's place.
const (
	CurrentFileName    = "CURRENT"
	CheckpointFileName = "CHECKPOINT"
	genPrefix          = "g-"
)

// ErrNoIndex is returned when a directory holds no committed index. A local directory's error
// is a *NoIndexError, which says more.
var ErrNoIndex = errors.New("no index (no CURRENT file)")

// NoIndexError says why dir holds no index: it does not exist (a typo: the index directory
// beside it nearest by name is suggested), or it has no CURRENT (a build that has not
// committed yet, whose checkpoint is said). It matches ErrNoIndex with errors.Is.
type NoIndexError struct {
	Dir        string
	Missing    bool   // the directory does not exist
	Near       string // an index directory beside Dir whose name is one or two typos away; ""
	Checkpoint bool   // Dir holds a build's checkpoint, not committed yet
}

func (e *NoIndexError) Error() string {
	switch {
	case e.Missing && e.Near != "":
		return fmt.Sprintf("%s: no index: no such directory (did you mean %s?)", e.Dir, e.Near)
	case e.Missing:
		return fmt.Sprintf("%s: no index: no such directory", e.Dir)
	case e.Checkpoint:
		return fmt.Sprintf("%s: no index yet: a build has checkpointed but not committed (one in progress, or one interrupted, which kairos index --resume with the same inputs continues)", e.Dir)
	}
	return fmt.Sprintf("%s: %v", e.Dir, ErrNoIndex)
}

// Is makes errors.Is(err, ErrNoIndex) hold.
func (e *NoIndexError) Is(target error) bool { return target == ErrNoIndex }

// noIndex describes the directory dir that has no CURRENT.
func noIndex(dir string) error {
	e := &NoIndexError{Dir: dir}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		e.Missing, e.Near = true, nearIndex(dir)
	} else if _, err := os.Stat(filepath.Join(dir, CheckpointFileName)); err == nil {
		e.Checkpoint = true
	}
	return e
}

// nearIndex is the path of the index directory beside dir whose name is nearest dir's, or "".
func nearIndex(dir string) string {
	parent, base := filepath.Split(filepath.Clean(dir))
	entries, err := os.ReadDir(cmp.Or(parent, "."))
	if err != nil {
		return ""
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() && isFile(filepath.Join(parent, e.Name(), CurrentFileName)) {
			names = append(names, e.Name())
		}
	}
	if n := nearest.Name(base, names); n != "" {
		return filepath.Join(parent, n)
	}
	return ""
}

func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// GenerationName is the name of generation n ("g-000003"): its directory in a local index,
// the suffix of its collection on Qdrant.
func GenerationName(n int) string { return fmt.Sprintf("%s%06d", genPrefix, n) }

// ParseGeneration returns the number of the generation named name, false when name is not
// a generation's.
func ParseGeneration(name string) (int, bool) {
	if !strings.HasPrefix(name, genPrefix) {
		return 0, false
	}
	n, err := strconv.Atoi(name[len(genPrefix):])
	return n, err == nil && n > 0
}

// Current returns the path of the live generation of the index at dir; the error wraps
// ErrNoIndex when dir has no CURRENT. A CURRENT that names no generation, or one that does
// not exist, is a *backend.DamagedError naming CURRENT.
func Current(dir string) (string, error) {
	cur := filepath.Join(dir, CurrentFileName)
	b, err := os.ReadFile(cur)
	if errors.Is(err, fs.ErrNotExist) {
		return "", noIndex(dir)
	}
	if err != nil {
		return "", err
	}
	name := strings.TrimSpace(string(b))
	if _, ok := ParseGeneration(name); !ok {
		return "", &backend.DamagedError{Path: cur, What: fmt.Sprintf("names %q, not a generation", name)}
	}
	// Checked here so that the error names CURRENT, the file that is wrong, and not the
	// manifest a reader would fail to find next.
	gen := filepath.Join(dir, name)
	if _, err := os.Stat(gen); errors.Is(err, fs.ErrNotExist) {
		return "", &backend.DamagedError{Path: cur, What: fmt.Sprintf("names generation %s, which does not exist", name)}
	}
	return gen, nil
}

// WriteCurrent points CURRENT at generation gen, atomically.
func WriteCurrent(dir string, gen int) error {
	return atomicfile.WriteFile(filepath.Join(dir, CurrentFileName), []byte(GenerationName(gen)+"\n"), atomicfile.Options{})
}

// Checkpoint records a checkpoint generation of a build in progress: a complete generation
// (with its manifest) that CURRENT does not name, how far the build had read, and what it
// was built from and with, so that a resumed build can refuse other inputs or options.
type Checkpoint struct {
	Generation string   `json:"generation"`
	Position   Position `json:"position"` // next document to read
	Inputs     []Input  `json:"inputs"`   // every input of the build, with sha256
	// InputOptions describe how each input was to be read (format, source, FAQ columns,
	// record cap), as the indexer writes them, so that a resumed build reads the rest the same
	// way. Absent in records written before them.
	InputOptions []string          `json:"input_options,omitempty"`
	Options      BuildOptions      `json:"options"`
	SkipBad      bool              `json:"skip_bad"`
	Model        *modelid.Identity `json:"model,omitempty"`
	HNSW         *hnsw.Options     `json:"hnsw,omitempty"`
	// VectorIndex is the kind of dense index the build writes (DenseInfo.Index's values; ""
	// for the graph, and in records written before the inverted file), IVF its parameters.
	VectorIndex string       `json:"vector_index,omitempty"`
	IVF         *ivf.Options `json:"ivf,omitempty"`
	// Embedding is set on a checkpoint of the embedding half of a lexical-first build: which
	// generation it embeds and the first key not yet embedded.
	Embedding *EmbedPosition `json:"embedding,omitempty"`
	Checksum  string         `json:"checksum"` // sha256 of the JSON with this field empty
}

// Position is where reading the inputs stands: document Docs (counted from 0) of input
// Input.
type Position struct {
	Input int `json:"input"`
	Docs  int `json:"docs"`
}

// EmbedPosition is how far the embedding half of a lexical-first build got.
type EmbedPosition struct {
	LexicalGeneration int    `json:"lexical_generation"`
	NextKey           uint32 `json:"next_key"`
}

// Sum returns the sha256 of c's JSON with Checksum empty: what Checksum records.
func (c *Checkpoint) Sum() string {
	cc := *c
	cc.Checksum = ""
	b, _ := json.Marshal(&cc) // plain data: cannot fail
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// Marshal sets c's Checksum and returns the record as written: indented JSON and a newline.
func (c *Checkpoint) Marshal() ([]byte, error) {
	c.Checksum = c.Sum()
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// ParseCheckpoint decodes and checks a checkpoint record read from path (a file, or a record
// of a remote generation). A record that is not one, fails its checksum or names no
// generation is a *backend.DamagedError naming path.
func ParseCheckpoint(b []byte, path string) (*Checkpoint, error) {
	var c Checkpoint
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, &backend.DamagedError{Path: path, What: "not a checkpoint: " + err.Error()}
	}
	if c.Sum() != c.Checksum {
		return nil, &backend.DamagedError{Path: path, What: "checksum mismatch (damaged or edited)"}
	}
	if _, ok := ParseGeneration(c.Generation); !ok {
		return nil, &backend.DamagedError{Path: path, What: fmt.Sprintf("names %q, not a generation", c.Generation)}
	}
	// The checksum is not a key: what its readers index or dereference is checked too.
	if p := c.Position; p.Input < 0 || p.Input > len(c.Inputs) || p.Docs < 0 {
		return nil, &backend.DamagedError{Path: path, What: fmt.Sprintf("position %+v outside its %d inputs", p, len(c.Inputs))}
	}
	switch c.VectorIndex {
	case "", VectorIndexHNSW:
		if c.Model != nil && c.HNSW == nil {
			return nil, &backend.DamagedError{Path: path, What: "a model without the graph's options"}
		}
	case VectorIndexIVF:
	default:
		return nil, &backend.DamagedError{Path: path, What: fmt.Sprintf("vector index %q: want %s or %s", c.VectorIndex, VectorIndexHNSW, VectorIndexIVF)}
	}
	return &c, nil
}

// ReadCheckpoint returns the checkpoint of the index directory dir, nil when there is none.
func ReadCheckpoint(dir string) (*Checkpoint, error) {
	path := filepath.Join(dir, CheckpointFileName)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return ParseCheckpoint(b, path)
}

// WriteCheckpoint replaces the checkpoint of the index directory dir with c, atomically, so
// a crash leaves the previous checkpoint or the new one; it sets c's Checksum.
func WriteCheckpoint(dir string, c *Checkpoint) error {
	b, err := c.Marshal()
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, CheckpointFileName), b, atomicfile.Options{})
}

// RemoveCheckpoint removes the checkpoint of the index directory dir, if any, durably.
func RemoveCheckpoint(dir string) error {
	err := os.Remove(filepath.Join(dir, CheckpointFileName))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := atomicfile.SyncDir(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
