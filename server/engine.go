// Package server is Kairos's HTTP retrieval service: a versioned native API (/v1/...), a
// drop-in replacement for WikiChat's retriever (POST /search, both request shapes), and the
// operations endpoints a production deployment needs (health, readiness, Prometheus metrics,
// OpenAPI, hot reload), for one index or several (collections routed by path, as WikiChat's
// corpus_id endpoints are). It depends on search, rerank and chat through the small interfaces
// declared here, so its tests run against a fake engine and cmd wires the real one.
package server

import (
	"context"
	"errors"
	"io"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/search"
)

// Engine is what the server needs from an opened index. Implementations must be safe for
// concurrent use: the server calls them from every request goroutine.
type Engine interface {
	// Search answers one query. An error wrapping ErrInvalid becomes a 400 (e.g. dense mode on
	// an index without embeddings); a context error becomes a 504; anything else a 500.
	Search(ctx context.Context, q rerank.Query) (rerank.Result, error)
	// Passage returns one passage by id, or an error wrapping ErrNotFound.
	Passage(ctx context.Context, id string) (corpus.Passage, error)
	// Stats describes the index; it is read once per load and on GET /v1/stats.
	Stats(ctx context.Context) (search.Stats, error)
	// DocFreq says how many passages hold each word, and how many the index has: how rare a
	// word is, for the chat layer's attribution check (search.Index.DocFreq).
	DocFreq(ctx context.Context, words []string) ([]int, int, error)
}

// Loader opens the index directory afresh. The server calls it once at start and again on
// every reload; the Closer is closed once no request uses that engine any more.
type Loader func(ctx context.Context) (Engine, io.Closer, error)

// Errors an Engine (or Chatter) wraps to choose the HTTP status.
var (
	ErrNotFound = errors.New("not found")       // 404
	ErrInvalid  = errors.New("invalid request") // 400
)
