package indexer

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"
)

// Problem is one defect found by Verify.
type Problem struct {
	Path string `json:"path"` // file or directory concerned
	What string `json:"what"`
}

func (p Problem) String() string { return p.Path + ": " + p.What }

// VerifyReport lists what Verify checked and what it found.
type VerifyReport struct {
	Generation string    `json:"generation"`
	Files      int       `json:"files_checked"`
	Passages   int       `json:"passages"`
	Problems   []Problem `json:"problems"`
}

// OK reports whether no problem was found.
func (r *VerifyReport) OK() bool { return len(r.Problems) == 0 }

// Verify checks the live generation of the index at dir: the manifest's own checksum and
// version, the size and sha256 of every file it lists (and no unlisted files), the passage
// store's checksum and count, and that the BM25 index holds exactly the store's passages.
// It returns an error only when it cannot check at all; defects are in the report.
func Verify(ctx context.Context, dir string) (*VerifyReport, error) {
	gen, err := Current(dir)
	if err != nil {
		return nil, err
	}
	rep := &VerifyReport{Generation: gen}
	bad := func(path, format string, a ...any) {
		rep.Problems = append(rep.Problems, Problem{Path: path, What: fmt.Sprintf(format, a...)})
	}
	man, err := ReadManifest(gen)
	if err != nil {
		bad(filepath.Join(gen, manifestName), "%v", err)
		return rep, nil
	}
	for name, want := range man.Files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		path := filepath.Join(gen, filepath.FromSlash(name))
		got, err := fileSHA256(path)
		switch {
		case err != nil:
			bad(path, "%v", err)
		case got.Size != want.Size:
			bad(path, "size %d, manifest says %d", got.Size, want.Size)
		case got.SHA256 != want.SHA256:
			bad(path, "sha256 %s, manifest says %s", got.SHA256, want.SHA256)
		}
		rep.Files++
	}
	onDisk := map[string]FileSum{}
	for _, sub := range []string{storeName, bm25Name, hnswName} {
		if err := sumTree(gen, filepath.Join(gen, sub), onDisk); err != nil && !os.IsNotExist(err) {
			bad(filepath.Join(gen, sub), "%v", err)
		}
	}
	for name := range onDisk {
		if _, ok := man.Files[name]; !ok {
			bad(filepath.Join(gen, name), "file not in the manifest")
		}
	}
	store, err := OpenStore(filepath.Join(gen, storeName))
	if err != nil {
		bad(filepath.Join(gen, storeName), "%v", err)
		return rep, nil
	}
	rep.Passages = store.Len()
	if store.Len() != man.Counts.Passages {
		bad(filepath.Join(gen, storeName), "%d passages, manifest says %d", store.Len(), man.Counts.Passages)
	}
	if man.Dense != nil {
		g, err := openHNSW(gen, man)
		if err != nil {
			bad(hnswPath(gen), "%v", err)
		} else {
			missing := 0
			for k := 0; k < store.Len(); k++ {
				if !g.Contains(uint64(k)) {
					missing++
				}
			}
			if missing > 0 || g.Len() != store.Len() {
				bad(hnswPath(gen), "%d vectors, %d passages of the store have none", g.Len(), missing)
			}
		}
	}
	idx, err := OpenBM25(gen)
	if err != nil {
		bad(bm25Path(gen), "opening: %v", err)
		return rep, nil
	}
	defer idx.Close()
	if err := checkBM25Keys(ctx, idx, store.Len(), func(f string, a ...any) { bad(bm25Path(gen), f, a...) }); err != nil {
		return nil, err
	}
	return rep, nil
}

// checkBM25Keys checks that bleve holds the document ids 0..n-1 and nothing else.
func checkBM25Keys(ctx context.Context, idx bleve.Index, n int, bad func(string, ...any)) error {
	count, err := idx.DocCount()
	if err != nil {
		bad("doc count: %v", err)
		return nil
	}
	if int(count) != n {
		bad("%d documents, passage store has %d", count, n)
	}
	const chunk = 1000
	missing := 0
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		ids := make([]string, 0, hi-lo)
		for k := lo; k < hi; k++ {
			ids = append(ids, strconv.Itoa(k))
		}
		req := bleve.NewSearchRequestOptions(query.NewDocIDQuery(ids), len(ids), 0, false)
		res, err := idx.SearchInContext(ctx, req)
		if err != nil {
			return err
		}
		missing += len(ids) - len(res.Hits)
	}
	if missing > 0 {
		bad("%d passages of the store are missing from the BM25 index", missing)
	}
	return nil
}
