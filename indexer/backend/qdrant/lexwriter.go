package qdrant

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/qdrant/go-client/qdrant"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/internal/langanalysis"
)

// Lexical is the engine's lexical part (backend.Lexical); Engine.Lexical returns it.
type Lexical struct{ e *Engine }

var _ backend.Lexical = Lexical{}

// Lexical returns the lexical part of the engine.
func (e *Engine) Lexical() Lexical { return Lexical{e} }

// Drop deletes gen's collection: all its parts at once.
func (l Lexical) Drop(ctx context.Context, gen backend.Gen) error { return l.e.Drop(ctx, gen) }

// ErrDerive is returned by Begin with a base generation: deriving a generation on Qdrant
// (copying the base collection's points and recomputing every BM25 weight for the new
// average length) is not implemented yet.
var ErrDerive = errors.New("qdrant: deriving a generation from a base is not implemented")

// Begin creates gen's collection (or checks an existing one) and starts its lexical part.
// Passages are upserted with their payload at Apply; the BM25 vectors follow at Commit,
// when the collection's average length is known.
func (l Lexical) Begin(ctx context.Context, gen backend.Gen, base *backend.Gen, analyzer string) (backend.LexicalWriter, error) {
	e := l.e
	if base != nil {
		return nil, ErrDerive
	}
	an, err := langanalysis.New(analyzer)
	if err != nil {
		return nil, err
	}
	coll := e.Collection(gen.Name)
	if err := e.ensureCollection(ctx, coll); err != nil {
		return nil, err
	}
	sp, err := newSpill(e.opts.SpillDir, "kairos-qdrant-lex-*")
	if err != nil {
		return nil, err
	}
	return &lexWriter{e: e, coll: coll, gen: gen.Name, an: an, spill: sp, deleted: map[uint32]bool{}}, nil
}

type lexWriter struct {
	e     *Engine
	coll  string
	gen   string
	an    analysis.Analyzer
	mu    sync.Mutex // guards what follows
	spill *spill
	// deleted are keys deleted by this writer; a key is added at most once per writer.
	deleted     map[uint32]bool
	tokensAdded int64
	done        bool
}

type lexBatch struct {
	adds []lexAdd
	dels []uint32
}

type lexAdd struct {
	key uint32
	p   corpus.Passage
}

func (w *lexWriter) NewBatch() backend.LexicalBatch { return &lexBatch{} }

func (b *lexBatch) Add(key uint32, p *corpus.Passage) error {
	b.adds = append(b.adds, lexAdd{key, *p})
	return nil
}
func (b *lexBatch) Delete(key uint32) { b.dels = append(b.dels, key) }
func (b *lexBatch) Len() int          { return len(b.adds) + len(b.dels) }

// Apply analyses the batch's passages, upserts them with their payload, deletes the batch's
// deletions and spills the term frequencies for Commit.
func (w *lexWriter) Apply(ctx context.Context, lb backend.LexicalBatch) error {
	b, ok := lb.(*lexBatch)
	if !ok {
		return fmt.Errorf("qdrant: batch of another engine (%T)", lb)
	}
	points := make([]*qdrant.PointStruct, len(b.adds))
	recs := make([][]byte, len(b.adds))
	var tokens int64
	for i := range b.adds {
		a := &b.adds[i]
		toks := w.an.Analyze([]byte(a.p.Text))
		tf := make(map[string]int, len(toks))
		for _, t := range toks {
			tf[string(t.Term)]++
		}
		tokens += int64(len(toks))
		pl, err := passagePayload(a.key, &a.p, len(toks), w.gen)
		if err != nil {
			return err
		}
		points[i] = &qdrant.PointStruct{Id: qdrant.NewIDNum(uint64(a.key)), Payload: pl,
			Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{})}
		recs[i] = termsRecord(a.key, len(toks), tf)
	}
	if err := w.e.upsert(ctx, w.coll, points); err != nil {
		return err
	}
	if len(b.dels) > 0 {
		err := w.e.do(ctx, "delete points", w.coll, func(ctx context.Context, c *qdrant.Client) error {
			_, err := c.Delete(ctx, &qdrant.DeletePoints{CollectionName: w.coll, Points: qdrant.NewPointsSelector(keyIDs(b.dels)...), Wait: qdrant.PtrOf(true)})
			return err
		})
		if err != nil {
			return err
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range recs {
		if err := w.spill.write(r); err != nil {
			return fmt.Errorf("qdrant spill: %w", err)
		}
	}
	for _, k := range b.dels {
		w.deleted[k] = true
	}
	w.tokensAdded += tokens
	return nil
}

// Commit computes the collection's statistics and document frequencies from the spilled
// term frequencies, writes the BM25 and tf sparse vectors of every passage and the metadata
// points, and checks the count.
func (w *lexWriter) Commit(ctx context.Context) (backend.LexicalCounts, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	defer w.close()
	df := map[string]int{}
	docs, tokens := 0, int64(0)
	err := w.spill.each(func(rec []byte) error {
		key, length, err := decodeTerms(rec, func(t []byte, f int) {})
		if err != nil || w.deleted[key] {
			return err
		}
		_, _, err = decodeTerms(rec, func(t []byte, f int) { df[string(t)]++ })
		docs++
		tokens += int64(length)
		return err
	})
	if err != nil {
		return backend.LexicalCounts{}, err
	}
	vocab := make([]string, 0, len(df))
	for t := range df {
		vocab = append(vocab, t)
	}
	sort.Strings(vocab)
	ids, moved := assignIDs(vocab)
	if moved > 0 {
		w.e.opts.Logger.Info("qdrant: term hash collisions resolved", "collection", w.coll, "moved", moved, "terms", len(vocab))
	}
	p := w.e.opts.BM25
	avg := avgLen(tokens, docs)
	var pending []*qdrant.PointVectors
	flush := func() error {
		err := w.e.updateVectors(ctx, w.coll, pending)
		pending = pending[:0]
		return err
	}
	err = w.spill.each(func(rec []byte) error {
		var idx []uint32
		var bm, tf []float32
		var length int
		key, length, err := decodeTerms(rec, func(t []byte, f int) {
			idx = append(idx, ids[string(t)])
			tf = append(tf, float32(f))
			_ = length
		})
		if err != nil || w.deleted[key] {
			return err
		}
		for _, f := range tf {
			bm = append(bm, float32(docWeight(int(f), length, p.K1, p.B, avg)))
		}
		pending = append(pending, &qdrant.PointVectors{Id: qdrant.NewIDNum(uint64(key)), Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{
			vecBM25: qdrant.NewVectorSparse(idx, bm),
			vecTF:   qdrant.NewVectorSparse(append([]uint32(nil), idx...), tf),
		})})
		if len(pending) >= w.e.opts.Batch*w.e.opts.Parallel*4 {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return backend.LexicalCounts{}, err
	}
	m := meta{K1: p.K1, B: p.B, Docs: docs, Tokens: tokens}
	if err := w.e.writeMeta(ctx, w.coll, m, vocab, ids, df); err != nil {
		return backend.LexicalCounts{}, err
	}
	n, err := w.e.countPassages(ctx, w.coll)
	if err != nil {
		return backend.LexicalCounts{}, err
	}
	if n != docs {
		return backend.LexicalCounts{}, fmt.Errorf("qdrant collection %s: %d passages after commit, %d written", w.coll, n, docs)
	}
	return backend.LexicalCounts{Docs: docs, TokensAdded: w.tokensAdded}, nil
}

func (w *lexWriter) close() {
	if !w.done {
		w.done = true
		w.spill.close()
	}
}

// Abort releases the spill file; the caller drops the generation.
func (w *lexWriter) Abort() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.close()
}
