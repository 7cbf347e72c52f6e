package qdrant

import (
	"context"

	"github.com/qdrant/go-client/qdrant"
	"golang.org/x/sync/errgroup"
)

// upsert writes points in batches of opts.Batch, opts.Parallel requests at a time, each
// retried by do. It waits for the writes to be applied.
func (e *Engine) upsert(ctx context.Context, coll string, points []*qdrant.PointStruct) error {
	return e.batched(ctx, len(points), func(ctx context.Context, lo, hi int) error {
		return e.do(ctx, "upsert", coll, func(ctx context.Context, c *qdrant.Client) error {
			_, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: coll, Points: points[lo:hi], Wait: qdrant.PtrOf(true)})
			return err
		})
	})
}

// updateVectors sets named vectors of existing points, batched and parallel like upsert.
func (e *Engine) updateVectors(ctx context.Context, coll string, points []*qdrant.PointVectors) error {
	return e.batched(ctx, len(points), func(ctx context.Context, lo, hi int) error {
		return e.do(ctx, "update vectors", coll, func(ctx context.Context, c *qdrant.Client) error {
			_, err := c.UpdateVectors(ctx, &qdrant.UpdatePointVectors{CollectionName: coll, Points: points[lo:hi], Wait: qdrant.PtrOf(true)})
			return err
		})
	})
}

// batched runs fn on [lo, hi) slices of n items of opts.Batch each, opts.Parallel at once.
func (e *Engine) batched(ctx context.Context, n int, fn func(ctx context.Context, lo, hi int) error) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(e.opts.Parallel)
	for lo := 0; lo < n; lo += e.opts.Batch {
		hi := min(lo+e.opts.Batch, n)
		g.Go(func() error { return fn(ctx, lo, hi) })
	}
	return g.Wait()
}

func keyIDs(keys []uint32) []*qdrant.PointId {
	ids := make([]*qdrant.PointId, len(keys))
	for i, k := range keys {
		ids[i] = qdrant.NewIDNum(uint64(k))
	}
	return ids
}
