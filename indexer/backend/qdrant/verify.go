package qdrant

import (
	"context"
	"fmt"

	"github.com/qdrant/go-client/qdrant"

	"github.com/kairos-rag/kairos/indexer/backend"
)

// Counts is what Verify found in a generation's collection.
type Counts struct {
	Passages int // passage points
	Dense    int // passage points with a dense vector
	BM25     int // passage points with BM25 weights
}

// Verify counts gen's passages and those with each vector, and fails when a passage lacks
// one (an interrupted commit) or the BM25 metadata is missing or disagrees.
func (e *Engine) Verify(ctx context.Context, gen backend.Gen) (Counts, error) {
	return e.VerifyParts(ctx, gen, true)
}

// VerifyParts is Verify; dense false leaves out the dense check (an index without
// embeddings, whose points have no dense vector).
func (e *Engine) VerifyParts(ctx context.Context, gen backend.Gen, dense bool) (Counts, error) {
	coll := e.Collection(gen.Name)
	if err := e.checkCollection(ctx, coll); err != nil {
		return Counts{}, err
	}
	count := func(vec string) (int, error) {
		f := passagesFilter()
		if vec != "" {
			f.Must = append(f.Must, qdrant.NewHasVector(vec))
		}
		var n uint64
		err := e.do(ctx, "count", coll, func(ctx context.Context, c *qdrant.Client) error {
			var err error
			n, err = c.Count(ctx, &qdrant.CountPoints{CollectionName: coll, Filter: f, Exact: qdrant.PtrOf(true)})
			return err
		})
		return int(n), err
	}
	var c Counts
	var err error
	if c.Passages, err = count(""); err != nil {
		return c, err
	}
	if c.Dense, err = count(vecDense); err != nil {
		return c, err
	}
	if c.BM25, err = count(vecBM25); err != nil {
		return c, err
	}
	m, _, err := e.readMeta(ctx, coll)
	if err != nil {
		return c, err
	}
	switch {
	case m.Docs != c.Passages:
		return c, fmt.Errorf("qdrant collection %s: %d passages, the BM25 metadata counts %d", coll, c.Passages, m.Docs)
	case dense && c.Dense != c.Passages:
		return c, fmt.Errorf("qdrant collection %s: %d of %d passages lack a dense vector", coll, c.Passages-c.Dense, c.Passages)
	case c.BM25 != c.Passages:
		return c, fmt.Errorf("qdrant collection %s: %d of %d passages lack BM25 weights", coll, c.Passages-c.BM25, c.Passages)
	}
	return c, nil
}
