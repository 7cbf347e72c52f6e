package hub

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/kairos-rag/kairos/embed"
)

// Installed describes one model folder under the models root.
type Installed struct {
	Name     string // path under the root, e.g. sentence-transformers/all-MiniLM-L6-v2
	Dir      string
	Size     int64  // bytes of all files
	Dim      int    // from the folder config; 0 if unknown (e.g. cross-encoders without pooling)
	Pooling  string // mean, cls, max; "?" when the folder config does not load
	Verified string // see verify
}

// List finds model folders (those with a tokenizer.json) up to two levels under root, sorted
// by name. Pinned files are hashed again, so Verified reflects the bytes on disk now.
func List(root string) ([]Installed, error) {
	dirs, err := folders(root)
	out := make([]Installed, 0, len(dirs))
	for _, p := range dirs {
		rel, _ := filepath.Rel(root, p)
		m := Installed{Name: filepath.ToSlash(rel), Dir: p, Pooling: "?"}
		m.Size = dirSize(p)
		if cfg, err := embed.LoadFolderConfig(p); err == nil {
			m.Dim, m.Pooling = cfg.HiddenSize, cfg.Pooling
		}
		m.Verified = verify(p)
		out = append(out, m)
	}
	if len(out) == 0 {
		out = nil
	}
	return out, err
}

// folders returns the model folders (those with a tokenizer.json) up to two levels under
// root, sorted; none when root does not exist.
func folders(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil
		}
		if !d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if depth(rel) > 2 {
			return fs.SkipDir
		}
		if _, err := os.Stat(filepath.Join(p, "tokenizer.json")); err != nil {
			return nil
		}
		out = append(out, p)
		return fs.SkipDir
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	sort.Strings(out)
	return out, err
}

// Find returns the model folder under root whose file (a path inside the folder, such as
// onnx/model.onnx) has the given sha256, or "" when none has. A pulled folder is judged by
// its kairos-pull.json record of that file (its size checked on disk, so a file replaced
// since is not taken on trust: the encoder's own hash decides when it opens); a folder
// copied by hand is hashed. Folders named like the model (base name) are tried first, so
// the usual case hashes at most one file.
func Find(root, file, sha string, name string) (string, error) {
	dirs, err := folders(root)
	if err != nil {
		return "", fmt.Errorf("looking for model %s in %s: %w", name, root, err)
	}
	sort.SliceStable(dirs, func(i, j int) bool {
		return filepath.Base(dirs[i]) == name && filepath.Base(dirs[j]) != name
	})
	for _, d := range dirs {
		path := filepath.Join(d, filepath.FromSlash(file))
		info, err := os.Stat(path)
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		if rec, ok := pulledRecord(d, file); ok {
			if rec.SHA256 == sha && rec.Size == info.Size() {
				return d, nil
			}
			continue
		}
		if got, err := hashFile(path); err == nil && got == sha {
			return d, nil
		}
	}
	return "", nil
}

// pulledRecord returns the kairos-pull.json record of file in dir, if dir was pulled.
func pulledRecord(dir, file string) (FileRecord, bool) {
	b, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		return FileRecord{}, false
	}
	var m Manifest
	if json.Unmarshal(b, &m) != nil {
		return FileRecord{}, false
	}
	for _, f := range m.Files {
		if f.Path == file {
			return f, true
		}
	}
	return FileRecord{}, false
}

func depth(rel string) int {
	if rel == "." {
		return 0
	}
	n := 1
	for _, c := range rel {
		if c == filepath.Separator {
			n++
		}
	}
	return n
}

func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// verify returns "sha256 ok (N pinned)", "no pins known", "MODIFIED: file", "MISSING: file",
// or "not pulled" (no manifest: a folder copied by hand).
func verify(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		return "not pulled"
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return "bad manifest"
	}
	n := 0
	for _, f := range m.Files {
		if !f.Pinned {
			continue
		}
		sum, err := hashFile(filepath.Join(dir, filepath.FromSlash(f.Path)))
		if err != nil {
			return "MISSING: " + f.Path
		}
		if sum != f.SHA256 {
			return "MODIFIED: " + f.Path
		}
		n++
	}
	if n == 0 {
		return "no pins known"
	}
	return fmt.Sprintf("sha256 ok (%d pinned)", n)
}

func hashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
