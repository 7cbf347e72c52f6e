package qdrant

import (
	"context"
	"fmt"

	"github.com/qdrant/go-client/qdrant"
)

// copyBase copies every passage point of the base collection into the writer's collection
// (payload, relabelled with the new generation, and dense vector) and spills its term
// frequencies, read from the base's "tf" vector and vocabulary, as additions numbered 0.
func (w *lexWriter) copyBase(ctx context.Context, baseColl string) error {
	_, vocab, err := w.e.readMeta(ctx, baseColl)
	if err != nil {
		return err
	}
	terms := make(map[uint32]string, len(vocab))
	for t, v := range vocab {
		terms[v.id] = t
	}
	var offset *qdrant.PointId
	for {
		var pts []*qdrant.RetrievedPoint
		var next *qdrant.PointId
		err := w.e.do(ctx, "scroll base", baseColl, func(ctx context.Context, c *qdrant.Client) error {
			var err error
			pts, next, err = c.ScrollAndOffset(ctx, &qdrant.ScrollPoints{CollectionName: baseColl, Filter: passagesFilter(),
				Offset: offset, Limit: qdrant.PtrOf(uint32(w.e.opts.Batch * w.e.opts.Parallel)), WithPayload: qdrant.NewWithPayload(true),
				WithVectors: qdrant.NewWithVectorsInclude(vecDense, vecTF)})
			return err
		})
		if err != nil {
			return err
		}
		points := make([]*qdrant.PointStruct, 0, len(pts))
		for _, p := range pts {
			key := uint32(p.GetId().GetNum())
			pl := p.GetPayload()
			pl[fieldGen] = qdrant.NewValueString(w.gen)
			vs := map[string]*qdrant.Vector{}
			named := p.GetVectors().GetVectors().GetVectors()
			if d := named[vecDense]; d != nil {
				data := d.GetDense().GetData()
				if data == nil {
					//lint:ignore SA1019 the 1.16 server's format
					data = d.GetData()
				}
				vs[vecDense] = qdrant.NewVectorDense(data)
			}
			points = append(points, &qdrant.PointStruct{Id: p.GetId(), Payload: pl, Vectors: qdrant.NewVectorsMap(vs)})
			ids, vals := sparseOf(named[vecTF])
			ts := make([]string, len(ids))
			fs := make([]int, len(ids))
			for i, id := range ids {
				t, ok := terms[id]
				if !ok {
					return fmt.Errorf("qdrant collection %s: passage %d: term id %d not in the vocabulary", baseColl, key, id)
				}
				ts[i], fs[i] = t, int(vals[i])
			}
			if err := w.spill.write(termsRecord(0, key, int(pl[fieldLen].GetIntegerValue()), ts, fs)); err != nil {
				return fmt.Errorf("qdrant spill: %w", err)
			}
		}
		if err := w.e.upsert(ctx, w.coll, points); err != nil {
			return err
		}
		if next == nil {
			return nil
		}
		offset = next
	}
}
