package live

import (
	"context"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer"
	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/search"
)

// Engine is one opened load of an index: what a live Index serves between two reloads.
// Opener's is the index's live generation with its models (search and rerank); the tests of
// the layers above give fakes. It must be safe for concurrent use. The Index checks every
// query against Capabilities and fills its mode before Search sees it.
type Engine interface {
	Search(ctx context.Context, q rerank.Query) (rerank.Result, error)
	// Passage returns one passage by id, or an error wrapping search.ErrNotFound.
	Passage(ctx context.Context, id string) (corpus.Passage, error)
	// DocFreq says how many passages hold each word, and how many the index has
	// (search.Index.DocFreq).
	DocFreq(ctx context.Context, words []string) ([]int, int, error)
	// Stats and Capabilities are read once, when the engine is loaded.
	Stats() search.Stats
	Capabilities() Capabilities
	// Close releases the engine; the Index calls it once no query uses it any more.
	Close() error
}

// OpenFunc opens an engine afresh: at the first load and at every reload.
type OpenFunc func(ctx context.Context) (Engine, error)

// Capabilities say what a load can serve beyond BM25 and no reranking or the time stage.
type Capabilities struct {
	// Dense: the dense and hybrid modes (the index has vectors and a query encoder is given).
	Dense bool
	// Cross: the cross rerank stage (a cross-encoder is given).
	Cross bool
}

// DefaultMode is the mode of a query that names none: hybrid where the load can serve it,
// else bm25. It is decided here only: the CLI, the HTTP API, the web page and chat all leave
// an unnamed mode to the live index. (A dense index served without its encoder answers in
// bm25 rather than refusing every query that names no mode.)
func DefaultMode(c Capabilities) search.Mode {
	if c.Dense {
		return search.ModeHybrid
	}
	return search.ModeBM25
}

// Opener returns the OpenFunc of the index at loc: each call opens its live generation
// (search.Open, with o.Search) under a rerank.Retriever with o's cross-encoder and time
// options.
func Opener(loc indexer.Location, o Options) OpenFunc {
	return func(ctx context.Context) (Engine, error) {
		ix, err := search.Open(ctx, loc, o.Search)
		if err != nil {
			return nil, err
		}
		t := rerank.DefaultOptions()
		if o.RecentHalfLifeYears != 0 {
			t.RecentHalfLifeYears = o.RecentHalfLifeYears
		}
		re, err := rerank.NewRetriever(ix, rerank.RetrieverOptions{Logger: o.Logger, Scorer: o.Scorer, Time: t})
		if err != nil {
			ix.Close()
			return nil, err
		}
		st := ix.Stats()
		caps := Capabilities{Dense: st.Dense && o.Search.Encoder != nil, Cross: o.Scorer != nil}
		return &indexEngine{Retriever: re, ix: ix, stats: st, caps: caps}, nil
	}
}

// indexEngine is an opened index under its reranking retriever.
type indexEngine struct {
	*rerank.Retriever
	ix    *search.Index
	stats search.Stats
	caps  Capabilities
}

var _ Engine = (*indexEngine)(nil)

func (e *indexEngine) Passage(ctx context.Context, id string) (corpus.Passage, error) {
	return e.ix.Passage(ctx, id)
}

func (e *indexEngine) DocFreq(ctx context.Context, words []string) ([]int, int, error) {
	return e.ix.DocFreq(ctx, words)
}

func (e *indexEngine) Stats() search.Stats        { return e.stats }
func (e *indexEngine) Capabilities() Capabilities { return e.caps }
func (e *indexEngine) Close() error               { return e.ix.Close() }
