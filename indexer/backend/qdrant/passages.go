package qdrant

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer/backend"
)

// PassageReader reads passages from the payload of a collection's points (backend.Passages).
// Each request runs under its caller's context, bounded by Options.Timeout besides; a request
// that fails returns its error (a missing passage is an error of its own, errNoPassage).
type PassageReader struct {
	e    *Engine
	coll string
	n    int
}

var _ backend.Passages = (*PassageReader)(nil)

// Close has nothing to release: the connection is the engine's.
func (r *PassageReader) Close() error { return nil }

// OpenPassages opens the passages of generation gen.
func (e *Engine) OpenPassages(ctx context.Context, gen backend.Gen) (*PassageReader, error) {
	coll := e.Collection(gen.Name)
	n, err := e.countPassages(ctx, coll)
	if err != nil {
		return nil, err
	}
	return &PassageReader{e: e, coll: coll, n: n}, nil
}

// errNoPassage is wrapped by the error of a read of a key the collection has no point for, so
// that Dead tells a missing passage from a failed request.
var errNoPassage = errors.New("no passage")

// get reads one payload.
func (r *PassageReader) get(ctx context.Context, key uint32, fields ...string) (map[string]*qdrant.Value, error) {
	pls, err := r.getMany(ctx, []uint32{key}, fields...)
	if err != nil {
		return nil, err
	}
	return pls[0], nil
}

// Get returns the passage of key.
func (r *PassageReader) Get(ctx context.Context, key uint32) (corpus.Passage, error) {
	pl, err := r.get(ctx, key)
	if err != nil {
		return corpus.Passage{}, err
	}
	return payloadPassage(pl)
}

// DocID returns the document id of key.
func (r *PassageReader) DocID(ctx context.Context, key uint32) (string, error) {
	pl, err := r.get(ctx, key, "doc_id")
	if err != nil {
		return "", err
	}
	return pl["doc_id"].GetStringValue(), nil
}

// Meta returns the date and source of key.
func (r *PassageReader) Meta(ctx context.Context, key uint32) (time.Time, string, error) {
	pl, err := r.get(ctx, key, fieldDate, fieldSource)
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
// index), for language filters of engines that filter by hand (backend.Meta).
func (r *PassageReader) Language(ctx context.Context, key uint32) (string, error) {
	pl, err := r.get(ctx, key, fieldLanguage)
	if err != nil {
		return "", err
	}
	return pl[fieldLanguage].GetStringValue(), nil
}

// BlockType returns the block type of key ("" when its payload has none: prose), for block
// type filters of engines that filter by hand (backend.Meta).
func (r *PassageReader) BlockType(ctx context.Context, key uint32) (string, error) {
	pl, err := r.get(ctx, key, fieldBlockType)
	if err != nil {
		return "", err
	}
	return pl[fieldBlockType].GetStringValue(), nil
}

// Each calls fn for every passage in key order (Qdrant scrolls by point id).
func (r *PassageReader) Each(ctx context.Context, fn func(key uint32, p corpus.Passage) error) error {
	var offset *qdrant.PointId
	for {
		var pts []*qdrant.RetrievedPoint
		var next *qdrant.PointId
		err := r.e.do(ctx, "scroll passages", r.coll, func(ctx context.Context, c *qdrant.Client) error {
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

// Dead reports whether key has no passage; a request that fails is an error, not a dead key.
func (r *PassageReader) Dead(ctx context.Context, key uint32) (bool, error) {
	_, err := r.get(ctx, key, fieldKey)
	switch {
	case errors.Is(err, errNoPassage):
		return true, nil
	case err != nil:
		return false, err
	}
	return false, nil
}
