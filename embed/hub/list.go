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
	var out []Installed
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
		m := Installed{Name: filepath.ToSlash(rel), Dir: p, Pooling: "?"}
		m.Size = dirSize(p)
		if cfg, err := embed.LoadFolderConfig(p); err == nil {
			m.Dim, m.Pooling = cfg.HiddenSize, cfg.Pooling
		}
		m.Verified = verify(p)
		out = append(out, m)
		return fs.SkipDir
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, err
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
