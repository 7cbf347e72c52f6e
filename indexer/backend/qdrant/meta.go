package qdrant

import (
	"context"
	"fmt"

	"github.com/qdrant/go-client/qdrant"
)

// Metadata points: the header at metaID, the vocabulary in chunks after it. Their ids lie
// above every passage key (uint32), and they carry no vectors, so no search returns them.
const (
	metaID    = uint64(1) << 40
	metaChunk = 20000 // terms per chunk point
)

// meta is what a lexical reader needs besides the vocabulary: the build's BM25 parameters
// and statistics, baked into the sparse vectors.
type meta struct {
	K1, B  float64
	Docs   int
	Tokens int64
	Chunks int
}

type vocabEntry struct {
	id uint32
	df int
}

func (e *Engine) writeMeta(ctx context.Context, coll string, m meta, vocab []string, ids map[string]uint32, df map[string]int) error {
	var points []*qdrant.PointStruct
	for lo := 0; lo < len(vocab); lo += metaChunk {
		hi := min(lo+metaChunk, len(vocab))
		terms := make([]any, 0, hi-lo)
		tids := make([]any, 0, hi-lo)
		dfs := make([]any, 0, hi-lo)
		for _, t := range vocab[lo:hi] {
			terms = append(terms, t)
			tids = append(tids, int64(ids[t]))
			dfs = append(dfs, int64(df[t]))
		}
		pl, err := qdrant.TryValueMap(map[string]any{"terms": terms, "ids": tids, "df": dfs})
		if err != nil {
			return err
		}
		points = append(points, &qdrant.PointStruct{Id: qdrant.NewIDNum(metaID + 1 + uint64(len(points))), Payload: pl,
			Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{})})
	}
	m.Chunks = len(points)
	head := map[string]any{"kind": "kairos-bm25", "k1": m.K1, "b": m.B, "docs": int64(m.Docs), "tokens": m.Tokens, "chunks": int64(m.Chunks)}
	points = append(points, &qdrant.PointStruct{Id: qdrant.NewIDNum(metaID), Payload: qdrant.NewValueMap(head),
		Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{})})
	return e.upsert(ctx, coll, points)
}

func (e *Engine) readMeta(ctx context.Context, coll string) (meta, map[string]vocabEntry, error) {
	get := func(ids ...uint64) ([]*qdrant.RetrievedPoint, error) {
		pids := make([]*qdrant.PointId, len(ids))
		for i, id := range ids {
			pids[i] = qdrant.NewIDNum(id)
		}
		var out []*qdrant.RetrievedPoint
		err := e.do(ctx, "read BM25 metadata", coll, func(ctx context.Context, c *qdrant.Client) error {
			var err error
			out, err = c.Get(ctx, &qdrant.GetPoints{CollectionName: coll, Ids: pids, WithPayload: qdrant.NewWithPayload(true)})
			return err
		})
		return out, err
	}
	head, err := get(metaID)
	if err != nil {
		return meta{}, nil, err
	}
	if len(head) != 1 || head[0].GetPayload()["kind"].GetStringValue() != "kairos-bm25" {
		return meta{}, nil, fmt.Errorf("qdrant collection %s: no BM25 metadata (not committed by Kairos)", coll)
	}
	pl := head[0].GetPayload()
	m := meta{K1: pl["k1"].GetDoubleValue(), B: pl["b"].GetDoubleValue(), Docs: int(pl["docs"].GetIntegerValue()),
		Tokens: pl["tokens"].GetIntegerValue(), Chunks: int(pl["chunks"].GetIntegerValue())}
	vocab := map[string]vocabEntry{}
	for c := 0; c < m.Chunks; c++ {
		pts, err := get(metaID + 1 + uint64(c))
		if err != nil {
			return meta{}, nil, err
		}
		if len(pts) != 1 {
			return meta{}, nil, fmt.Errorf("qdrant collection %s: BM25 vocabulary chunk %d of %d missing", coll, c, m.Chunks)
		}
		p := pts[0].GetPayload()
		terms, ids, dfs := p["terms"].GetListValue().GetValues(), p["ids"].GetListValue().GetValues(), p["df"].GetListValue().GetValues()
		if len(ids) != len(terms) || len(dfs) != len(terms) {
			return meta{}, nil, fmt.Errorf("qdrant collection %s: BM25 vocabulary chunk %d damaged", coll, c)
		}
		for i, t := range terms {
			vocab[t.GetStringValue()] = vocabEntry{id: uint32(ids[i].GetIntegerValue()), df: int(dfs[i].GetIntegerValue())}
		}
	}
	return m, vocab, nil
}

// passagesFilter selects passage points (not metadata).
func passagesFilter() *qdrant.Filter {
	return &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewRange(fieldKey, &qdrant.Range{Gte: qdrant.PtrOf(0.0)})}}
}

func (e *Engine) countPassages(ctx context.Context, coll string) (int, error) {
	var n uint64
	err := e.do(ctx, "count", coll, func(ctx context.Context, c *qdrant.Client) error {
		var err error
		n, err = c.Count(ctx, &qdrant.CountPoints{CollectionName: coll, Filter: passagesFilter(), Exact: qdrant.PtrOf(true)})
		return err
	})
	return int(n), err
}
