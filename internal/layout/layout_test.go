package layout

import (
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/kairos-rag/kairos/"

// rank is each top-level package's place in the data flow: a package may import only packages
// of a lower rank, or its own top-level directory's. embed shares corpus's rank but is a leaf:
// the layers above it declare the interfaces they need instead of importing it.
var rank = map[string]int{
	"internal": 0,
	"corpus":   1,
	"embed":    1,
	"indexer":  2,
	"search":   3,
	"rerank":   4,
	"chat":     5,
	"server":   6,
	"cmd":      7,
}

func TestLayering(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bin" || name == "build" || name == "node_modules") {
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(path, 0)
		if _, none := err.(*build.NoGoError); none {
			return nil
		} else if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if rel == "." {
			return nil
		}
		top := strings.Split(filepath.ToSlash(rel), "/")[0]
		from, ok := rank[top]
		if !ok {
			t.Errorf("%s: top-level directory %q has no place in the data flow (add it to DEVELOPERS.md and to rank)", rel, top)
			return nil
		}
		checked++
		for _, imp := range pkg.Imports {
			if msg := engineRule(filepath.ToSlash(rel), imp); msg != "" {
				t.Error(msg)
			}
			target, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			to := strings.Split(target, "/")[0]
			switch {
			case to == top:
			case to == "embed" && top != "cmd":
				t.Errorf("%s imports %s: only cmd imports embed; declare the interface you need", rel, target)
			case rank[to] >= from:
				t.Errorf("%s (rank %d) imports %s (rank %d): imports must run down the data flow", rel, from, target, rank[to])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 10 {
		t.Fatalf("checked only %d packages under %s", checked, root)
	}
}

func TestLayeringSeesTheRepository(t *testing.T) {
	// The walk above starts two levels up; make sure that is the module root.
	b, err := os.ReadFile("../../go.mod")
	if err != nil || !strings.Contains(string(b), "module "+strings.TrimSuffix(module, "/")) {
		t.Fatalf("../../go.mod is not this module's: %v", err)
	}
}

// engineRule enforces the backend seam (DEVELOPERS.md): bleve's index and search API is used
// only by the bleve engine, and the local engines are named only inside indexer, which wires
// them; everything above reads a generation through indexer/backend's interfaces. bleve's
// analysis packages stay free to use: text analysis is not an engine's business.
func engineRule(rel, imp string) string {
	const bleveEngine = "indexer/backend/blevebm25"
	bleveCore := imp == "github.com/blevesearch/bleve/v2" || strings.HasPrefix(imp, "github.com/blevesearch/bleve/v2/search") ||
		strings.HasPrefix(imp, "github.com/blevesearch/bleve/v2/mapping") || strings.HasPrefix(imp, "github.com/blevesearch/bleve/v2/document") ||
		strings.HasPrefix(imp, "github.com/blevesearch/bleve_index_api")
	if bleveCore && rel != bleveEngine {
		return rel + " imports " + imp + ": only " + bleveEngine + " uses bleve's index and search API"
	}
	if target, ok := strings.CutPrefix(imp, module+"indexer/backend/"); ok &&
		!strings.HasPrefix(rel, "indexer") && !strings.HasPrefix(rel, "cmd") {
		return rel + " imports the engine indexer/backend/" + target + ": read generations through indexer/backend's interfaces"
	}
	return ""
}

func TestEngineRule(t *testing.T) {
	tests := []struct {
		rel, imp string
		bad      bool
	}{
		{"indexer/backend/blevebm25", "github.com/blevesearch/bleve/v2", false},
		{"indexer", "github.com/blevesearch/bleve/v2", true},
		{"search", "github.com/blevesearch/bleve/v2/search/query", true},
		{"search", "github.com/blevesearch/bleve/v2/analysis", false},
		{"search", module + "indexer/backend/kpst", true},
		{"server", module + "indexer/backend/hnswvec", true},
		{"indexer", module + "indexer/backend/hnswvec", false},
		{"cmd/cli", module + "indexer/backend/hnswvec", false},
	}
	for _, tc := range tests {
		if got := engineRule(tc.rel, tc.imp) != ""; got != tc.bad {
			t.Errorf("%s importing %s: flagged %v, want %v", tc.rel, tc.imp, got, tc.bad)
		}
	}
}
