// Package rerank reorders retrieved passages: by a cross-encoder, by time, or both (cross-encoder
// first, since a time signal applied before a cross-encoder would be erased by it).
package rerank

import (
	"time"

	"github.com/kairos-rag/kairos/corpus/timex"
	"github.com/kairos-rag/kairos/search"
)

// Stage names one reranking step.
type Stage string

const (
	StageTime     Stage = "time"     // Kairos's time-aware reranker
	StageCross    Stage = "cross"    // cross-encoder relevance
	StageWikiChat Stage = "wikichat" // WikiChat v1's stable sort by year, for comparison
)

// Query is a search request plus what to do with its candidates.
type Query struct {
	search.Request
	Time       timex.Spec // time need; KindAuto is resolved from Request.Text
	Rerank     []Stage    // applied in order; empty means no reranking
	Candidates int        // how many retrieved passages the rerankers see; 0 means a default
	Explain    bool       // fill Hit.Explain
	// Now is the moment the question is asked as of: it anchors "recent", "last year" and
	// "since 2010" for this query. Zero means the engine's Options.Now (itself time.Now()).
	Now time.Time
	// RecentHalfLifeYears overrides the engine's Options.RecentHalfLifeYears for this query;
	// 0 keeps the engine's.
	RecentHalfLifeYears float64
}

// Result is the answer to one Query.
type Result struct {
	Hits []Hit
	Time timex.Spec // the time need actually used (KindAuto resolved)
}

// Hit is a search hit after reranking.
type Hit struct {
	search.Hit
	Explain *Explanation `json:"explain,omitempty"`
}
