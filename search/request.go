// Package search retrieves passages from a Kairos index: BM25 through the generation's
// lexical engine, dense through its vector engine (indexer/backend), and hybrid fusion of
// both, with document evidence, per-document caps and ties broken by passage key.
package search

import (
	"fmt"
	"time"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer/backend"
)

// Mode selects the retriever.
type Mode string

const (
	ModeBM25   Mode = "bm25"
	ModeDense  Mode = "dense"
	ModeHybrid Mode = "hybrid"
)

// ParseMode accepts "bm25", "dense" and "hybrid"; "" gives def.
func ParseMode(s string, def Mode) (Mode, error) {
	switch Mode(s) {
	case "":
		return def, nil
	case ModeBM25, ModeDense, ModeHybrid:
		return Mode(s), nil
	}
	return "", fmt.Errorf("unknown search mode %q (want bm25, dense or hybrid)", s)
}

// Filters restrict the passages a search may return: backend.Filter, the one definition of
// the filter fields, which search hands to its engines once it has resolved the languages
// (Index.filter). A query is analysed in each language searched.
type Filters = backend.Filter

// Request is one query.
type Request struct {
	Text    string
	K       int // number of hits, >= 1 (callers that default it use DefaultK)
	Mode    Mode
	Filters Filters
	Exact   bool // dense: brute-force search instead of HNSW (reference, slow)
	// PerDoc caps the passages of one document among the hits (its best ones are kept);
	// 0 means no cap. PerDoc 1 gives a ranking of documents, as document-level evaluations
	// (BEIR) expect.
	PerDoc int
	// Fusion, Alpha and RRFK override the index's Options for this hybrid request; their zero
	// values keep the index's.
	Fusion Fusion
	Alpha  float64
	RRFK   int
	// MinScore drops the hits scoring below it (nil: none), so that a caller can prefer no
	// hit to a weak one. It compares with Hit.Score, whose scale is the mode's (BM25, cosine
	// or fused).
	MinScore *float64
	// Passages returns the passages matched as they are: an FAQ question passage stays itself
	// instead of becoming its entry (Index.entries). For passage-level checks of the rankings.
	Passages bool
}

// DefaultK is the number of hits of a query that names none: the one definition, which
// rerank/request (the CLI and the HTTP API) and rerank apply. Index.Search itself refuses a
// k below 1 rather than guessing.
const DefaultK = 10

// Hit is one retrieved passage.
type Hit struct {
	corpus.Passage
	Score float64 `json:"score"`
	Rank  int     `json:"rank"` // 1-based
	// Scores holds the components behind Score when there are several (e.g. "bm25", "dense").
	// In BM25 mode with document evidence, Score = bm25 + doc_evidence (ScoreDocEvidence).
	Scores map[string]float64 `json:"scores,omitempty"`
}

// ScoreDocEvidence is the Hit.Scores key of what document evidence added to a BM25 score
// (Options.DocEvidence times the scores of the document's other candidates).
const ScoreDocEvidence = "doc_evidence"

// Stats describes an opened index, for `kairos stats`, GET /v1/stats and the chat layer.
type Stats struct {
	// Generation is the number of the generation opened (the N of g-NNNNNN, the manifest's
	// generation): one more at every commit of the index, as kairos stats reports it.
	Generation int            `json:"generation"`
	Documents  int            `json:"documents"`
	Passages   int            `json:"passages"`          // live: deleted and superseded ones excluded
	Deleted    int            `json:"deleted,omitempty"` // tombstoned passages awaiting compaction
	Sources    map[string]int `json:"sources"`           // passages per source
	DateFrom   time.Time      `json:"date_from,omitzero"`
	DateTo     time.Time      `json:"date_to,omitzero"`
	Dense      bool           `json:"dense"` // the index has embeddings and an HNSW graph
	Model      string         `json:"model,omitempty"`
	Created    time.Time      `json:"created"`
	Version    int            `json:"format_version"`
	SizeBytes  int64          `json:"size_bytes"`
	// Language is the language the index is analysed in, and Analyzer its text analyzer,
	// which queries use too.
	Language string `json:"language"`
	Analyzer string `json:"analyzer"`
	// Languages counts the live passages per language (one entry for a single-language index).
	Languages map[string]int `json:"languages,omitempty"`
	// Outdated says what the index lacks that this version writes, and that `kairos compact`
	// adds without embedding again (indexer.Generation.Outdated); "" when nothing.
	Outdated string `json:"outdated,omitempty"`
}
