package qdrant

import (
	"context"
	"fmt"

	"github.com/qdrant/go-client/qdrant"

	"github.com/kairos-rag/kairos/corpus"
)

// DocIDs returns the document ids of keys, in one request: a search that needs the documents
// of its candidates (document evidence) asks once instead of once per candidate.
func (r *PassageReader) DocIDs(ctx context.Context, keys []uint32) ([]string, error) {
	pls, err := r.getMany(ctx, keys, "doc_id")
	if err != nil {
		return nil, err
	}
	out := make([]string, len(keys))
	for i, pl := range pls {
		out[i] = pl["doc_id"].GetStringValue()
	}
	return out, nil
}

// GetMany returns the passages of keys, in one request.
func (r *PassageReader) GetMany(ctx context.Context, keys []uint32) ([]corpus.Passage, error) {
	pls, err := r.getMany(ctx, keys)
	if err != nil {
		return nil, err
	}
	out := make([]corpus.Passage, len(keys))
	for i, pl := range pls {
		if out[i], err = payloadPassage(pl); err != nil {
			return nil, fmt.Errorf("qdrant collection %s: passage %d: %w", r.coll, keys[i], err)
		}
	}
	return out, nil
}

// getMany returns the payloads (fields, or all) of keys in their order; a missing key is an
// error, as in Get.
func (r *PassageReader) getMany(ctx context.Context, keys []uint32, fields ...string) ([]map[string]*qdrant.Value, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, r.e.opts.Timeout)
	defer cancel()
	sel := qdrant.NewWithPayload(true)
	if len(fields) > 0 {
		sel = qdrant.NewWithPayloadInclude(fields...)
	}
	var pts []*qdrant.RetrievedPoint
	err := r.e.do(ctx, "get passages", r.coll, func(ctx context.Context, c *qdrant.Client) error {
		var err error
		pts, err = c.Get(ctx, &qdrant.GetPoints{CollectionName: r.coll, Ids: keyIDs(keys), WithPayload: sel})
		return err
	})
	if err != nil {
		return nil, err
	}
	byKey := make(map[uint64]map[string]*qdrant.Value, len(pts))
	for _, p := range pts {
		byKey[p.GetId().GetNum()] = p.GetPayload()
	}
	out := make([]map[string]*qdrant.Value, len(keys))
	for i, k := range keys {
		pl, ok := byKey[uint64(k)]
		if !ok {
			return nil, fmt.Errorf("qdrant collection %s: %w %d", r.coll, errNoPassage, k)
		}
		out[i] = pl
	}
	return out, nil
}
