package qdrant

import (
	"context"
	"fmt"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer/backend"
)

// PassageReader reads passages from the payload of a collection's points (backend.Passages).
// Its methods take no context (the interface's); each request is bounded by Options.Timeout.
type PassageReader struct {
	e    *Engine
	coll string
	n    int
}

var (
	_ backend.Passages      = (*PassageReader)(nil)
	_ backend.LanguageMeta  = (*PassageReader)(nil)
	_ backend.BlockTypeMeta = (*PassageReader)(nil)
)

// OpenPassages opens the passages of generation gen.
func (e *Engine) OpenPassages(ctx context.Context, gen backend.Gen) (*PassageReader, error) {
	coll := e.Collection(gen.Name)
	n, err := e.countPassages(ctx, coll)
	if err != nil {
		return nil, err
	}
	return &PassageReader{e: e, coll: coll, n: n}, nil
}

// get reads one payload. Get, DocID and Meta take no context (backend.Passages has none on
// them yet), so the request is bounded by the engine's timeout alone.
func (r *PassageReader) get(key uint32, fields ...string) (map[string]*qdrant.Value, error) {
	pls, err := r.getMany(context.Background(), []uint32{key}, fields...)
	if err != nil {
		return nil, err
	}
	return pls[0], nil
}

// Get returns the passage of key.
func (r *PassageReader) Get(key uint32) (corpus.Passage, error) {
	pl, err := r.get(key)
	if err != nil {
		return corpus.Passage{}, err
	}
	return payloadPassage(pl)
}

// DocID returns the document id of key.
func (r *PassageReader) DocID(key uint32) (string, error) {
	pl, err := r.get(key, "doc_id")
	if err != nil {
		return "", err
	}
	return pl["doc_id"].GetStringValue(), nil
}

// Meta returns the date and source of key.
func (r *PassageReader) Meta(key uint32) (time.Time, string, error) {
	pl, err := r.get(key, fieldDate, fieldSource)
	if err != nil {
		return time.Time{}, "", err
	}
	var d time.Time
	if s := pl[fieldDate].GetStringValue(); s != "" {
		if d, err = time.Parse(time.RFC3339Nano, s); err != nil {
			return time.Time{}, "", fmt.Errorf("qdrant collection %s: passage %d: date %q: %v", r.coll, key, s, err)
		}
	}
	return d, pl[fieldSource].GetStringValue(), nil
}

// Language returns the language of key ("" when its payload has none: a single-language
// index), for language filters of engines that filter by hand (backend.LanguageMeta).
func (r *PassageReader) Language(key uint32) (string, error) {
	pl, err := r.get(key, fieldLanguage)
	if err != nil {
		return "", err
	}
	return pl[fieldLanguage].GetStringValue(), nil
}

// BlockType returns the block type of key ("" when its payload has none: prose), for block
// type filters of engines that filter by hand (backend.BlockTypeMeta).
func (r *PassageReader) BlockType(key uint32) (string, error) {
	pl, err := r.get(key, fieldBlockType)
	if err != nil {
		return "", err
	}
	return pl[fieldBlockType].GetStringValue(), nil
}

// Each calls fn for every passage in key order (Qdrant scrolls by point id).
func (r *PassageReader) Each(fn func(key uint32, p corpus.Passage) error) error {
	var offset *qdrant.PointId
	for {
		var pts []*qdrant.RetrievedPoint
		var next *qdrant.PointId
		err := r.e.do(context.Background(), "scroll passages", r.coll, func(ctx context.Context, c *qdrant.Client) error {
			var err error
			pts, next, err = c.ScrollAndOffset(ctx, &qdrant.ScrollPoints{CollectionName: r.coll, Filter: passagesFilter(),
				Offset: offset, Limit: qdrant.PtrOf(uint32(r.e.opts.Batch)), WithPayload: qdrant.NewWithPayload(true)})
			return err
		})
		if err != nil {
			return err
		}
		for _, pt := range pts {
			p, err := payloadPassage(pt.GetPayload())
			if err != nil {
				return fmt.Errorf("qdrant collection %s: point %d: %w", r.coll, pt.GetId().GetNum(), err)
			}
			if err := fn(uint32(pt.GetId().GetNum()), p); err != nil {
				return err
			}
		}
		if next == nil {
			return nil
		}
		offset = next
	}
}

// Len and Live are the passages counted at open: a deleted passage's point is removed, so
// there are no tombstones.
func (r *PassageReader) Len() int  { return r.n }
func (r *PassageReader) Live() int { return r.n }

// Dead reports whether key has no passage.
func (r *PassageReader) Dead(key uint32) bool {
	_, err := r.get(key, fieldKey)
	return err != nil
}
