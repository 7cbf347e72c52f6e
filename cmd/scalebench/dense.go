package scalebench

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/kairos-rag/kairos/embed"
	"github.com/kairos-rag/kairos/indexer/backend/hnswvec"
	"github.com/kairos-rag/kairos/indexer/backend/ivfvec"
	"github.com/kairos-rag/kairos/indexer/manifest"
	"github.com/kairos-rag/kairos/internal/hnsw"
	"github.com/kairos-rag/kairos/internal/hnsw/annbench"
	"github.com/kairos-rag/kairos/internal/ivf"
)

// denseCompare is the dense anchors' part of a collection (--dense-engines): the vectors the
// `kairos index` child embedded, read back from the built index's graph file, and the queries
// embedded as search embeds them, compared on every engine named (annbench.Compare: each
// built and served by its own child processes, recall@10 against exact search on the same
// vectors). Kairos's entry (kairos-hnsw) builds its graph from those vectors as `kairos index`
// does, with the same parameters, so its build time and peak are the vector index's alone,
// as the anchors' are; the row's own build figures are the whole index's.
func denseCompare(ctx context.Context, cfg Options, idx string, queries []string, dir string, log io.Writer) (*annbench.Report, error) {
	ds, err := indexVectors(idx)
	if err != nil {
		return nil, err
	}
	eo := cfg.Embed
	eo.ModelDir = cfg.Model
	enc, err := embed.OpenEncoder(ctx, eo)
	if err != nil {
		return nil, fmt.Errorf("opening model %s: %w", cfg.Model, err)
	}
	ds.Queries, err = enc.Encode(ctx, embed.Query, queries)
	enc.Close()
	if err != nil {
		return nil, fmt.Errorf("embedding the queries: %w", err)
	}
	co := cfg.denseOptions()
	co.Work, co.Keep, co.Log = filepath.Join(dir, "ann"), cfg.Keep, log
	co.Data = "the index's vectors, " + cfg.Model + "; the bench's real queries"
	return annbench.Compare(ctx, &ds, co, nil)
}

// denseOptions are the comparison's options: the engines asked for, and the kairos binary
// and python of the run.
func (o *Options) denseOptions() annbench.CompareOptions {
	co := annbench.CompareOptions{Engines: o.DenseEngines, Python: o.Python}
	if o.Kairos != "" {
		co.Kairos = []string{o.Kairos, "bench", "ann-engine"}
	}
	return co
}

// indexVectors reads the vectors of the live generation's dense index, key by key: Kairos
// numbers passages 0, 1, 2, ..., so row i of the data set is passage i. The graph keeps the
// float vectors; the inverted file (kairos index's default from ivf's size on) keeps each as
// int8, its canonical form, which is then what every engine is given. The index is opened
// memory-mapped and each vector read from the file, so only the vectors are held.
func indexVectors(idx string) (annbench.Dataset, error) {
	gen, err := manifest.Current(idx)
	if err != nil {
		return annbench.Dataset{}, err
	}
	man, err := manifest.Read(gen)
	if err != nil {
		return annbench.Dataset{}, err
	}
	var (
		path   string
		n, dim int
		vector func(k int) ([]float32, bool)
	)
	if man.Dense != nil && man.Dense.IndexKind() == manifest.VectorIndexIVF {
		path = ivfvec.Dir(gen)
		r, err := ivf.Open(path, ivf.OpenOptions{})
		if err != nil {
			return annbench.Dataset{}, fmt.Errorf("%s: %w", path, err)
		}
		defer r.Close()
		n, dim = r.Live(), r.Dim()
		vector = func(k int) ([]float32, bool) { return r.Vector(uint32(k)) }
	} else {
		path = hnswvec.Path(gen)
		g, err := hnsw.LoadWith(path, hnsw.LoadOptions{Mapped: true})
		if err != nil {
			return annbench.Dataset{}, fmt.Errorf("%s: %w", path, err)
		}
		defer g.Close()
		n, dim = g.Live(), g.Dim()
		vector = func(k int) ([]float32, bool) { return g.Vector(uint64(k)) }
	}
	ds := annbench.Dataset{Dim: dim, Base: make([][]float32, n)}
	flat := make([]float32, n*dim)
	for k := range n {
		v, ok := vector(k)
		if !ok {
			return ds, fmt.Errorf("%s: no vector for passage %d of %d: the keys are not 0..n-1", path, k, n)
		}
		ds.Base[k] = flat[k*dim : (k+1)*dim : (k+1)*dim]
		copy(ds.Base[k], v)
	}
	return ds, nil
}
