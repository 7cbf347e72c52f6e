package qdrant

import (
	"context"
	"fmt"
	"sort"
	"sync"

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

// Begin creates gen's collection (or checks an existing one) and starts its lexical part.
// Passages are upserted with their payload at Apply; the BM25 vectors follow at Commit,
// when the collection's average length is known. With a base, every point of the base's
// collection (payload and dense vector) is copied first and the base is left unchanged:
// BM25 weights depend on the average length, so the whole generation is reweighted at
// Commit anyway.
func (l Lexical) Begin(ctx context.Context, gen backend.Gen, base *backend.Gen, o backend.LexicalBegin) (backend.LexicalWriter, error) {
	e := l.e
	an, err := langanalysis.NewPassages(o.Analyzer)
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
	w := &lexWriter{e: e, coll: coll, gen: gen.Name, an: an, spill: sp, deleted: map[uint32]uint64{}}
	if base != nil {
		if err := w.copyBase(ctx, e.Collection(base.Name)); err != nil {
			w.Abort()
			return nil, err
		}
	}
	return w, nil
}

type lexWriter struct {
	e     *Engine
	coll  string
	gen   string
	an    *langanalysis.Passages // each passage in its language when multilingual
	mu    sync.Mutex             // guards what follows
	spill *spill
	// seq numbers the spilled additions and the deletions in the order they were applied
	// (base passages are 0); deleted maps a key to its last deletion, so an addition is live
	// when it came after it.
	seq         uint64
	deleted     map[uint32]uint64
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
func (b *lexBatch) Delete(key uint32, _ *corpus.Passage) { b.dels = append(b.dels, key) }
func (b *lexBatch) Len() int                             { return len(b.adds) + len(b.dels) }

// Apply analyses the batch's passages, upserts them with their payload, deletes the batch's
// deletions and spills the term frequencies for Commit.
func (w *lexWriter) Apply(ctx context.Context, lb backend.LexicalBatch) error {
	b, ok := lb.(*lexBatch)
	if !ok {
		return fmt.Errorf("qdrant: batch of another engine (%T)", lb)
	}
	points := make([]*qdrant.PointStruct, len(b.adds))
	type termsOf struct {
		terms []string
		freqs []int
		n     int
	}
	recs := make([]termsOf, len(b.adds))
	var tokens int64
	for i := range b.adds {
		a := &b.adds[i]
		toks, err := w.an.Terms(a.p.Language, a.p.Text, nil)
		if err != nil {
			return fmt.Errorf("passage %s: %w", a.p.ID, err)
		}
		tf := make(map[string]int, len(toks))
		var terms []string
		for _, t := range toks {
			if tf[t] == 0 {
				terms = append(terms, t)
			}
			tf[t]++
		}
		freqs := make([]int, len(terms))
		for j, t := range terms {
			freqs[j] = tf[t]
		}
		tokens += int64(len(toks))
		pl, err := passagePayload(a.key, &a.p, len(toks), w.gen)
		if err != nil {
			return err
		}
		points[i] = &qdrant.PointStruct{Id: qdrant.NewIDNum(uint64(a.key)), Payload: pl,
			Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{})}
		recs[i] = termsOf{terms, freqs, len(toks)}
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
	for i, r := range recs {
		w.seq++
		if err := w.spill.write(termsRecord(w.seq, b.adds[i].key, r.n, r.terms, r.freqs)); err != nil {
			return fmt.Errorf("qdrant spill: %w", err)
		}
	}
	for _, k := range b.dels {
		w.seq++
		w.deleted[k] = w.seq
	}
	w.tokensAdded += tokens
	return nil
}

// Commit computes the collection's statistics and document frequencies from the spilled
// term frequencies, writes the BM25 and tf sparse vectors of every passage and the metadata
// points, and checks the count.
func (w *lexWriter) Commit(ctx context.Context, _ backend.CommitOptions) (backend.LexicalCommit, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	defer w.close()
	df := map[string]int{}
	docs, tokens := 0, int64(0)
	err := w.spill.each(func(rec []byte) error {
		seq, key, length, err := decodeTerms(rec, func(t []byte, f int) {})
		if err != nil || !w.live(seq, key) {
			return err
		}
		_, _, _, err = decodeTerms(rec, func(t []byte, f int) { df[string(t)]++ })
		docs++
		tokens += int64(length)
		return err
	})
	if err != nil {
		return backend.LexicalCommit{}, err
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
		seq, key, length, err := decodeTerms(rec, func(t []byte, f int) {
			idx = append(idx, ids[string(t)])
			tf = append(tf, float32(f))
		})
		if err != nil || !w.live(seq, key) {
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
		return backend.LexicalCommit{}, err
	}
	m := meta{K1: p.K1, B: p.B, Docs: docs, Tokens: tokens}
	if err := w.e.writeMeta(ctx, w.coll, m, vocab, ids, df); err != nil {
		return backend.LexicalCommit{}, err
	}
	n, err := w.e.countPassages(ctx, w.coll)
	if err != nil {
		return backend.LexicalCommit{}, err
	}
	if n != docs {
		return backend.LexicalCommit{}, fmt.Errorf("qdrant collection %s: %d passages after commit, %d written", w.coll, n, docs)
	}
	return backend.LexicalCommit{Docs: docs, TokensAdded: w.tokensAdded}, nil
}

// live reports whether the addition numbered seq of key survives the deletions.
func (w *lexWriter) live(seq uint64, key uint32) bool {
	d, ok := w.deleted[key]
	return !ok || seq > d
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
