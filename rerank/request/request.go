// Package request is the one front door of a Kairos search. Query is the request as a caller
// writes it (command-line flags, a line of a batch file, a JSON body of POST /v1/search, the
// parameters of the web page); Parse is its only parser and validator, and turns it into the
// engine's rerank.Query. Every default a caller sees (k, the time need implied by a time
// stage) is decided here, so the CLI, the HTTP API and the web page cannot disagree.
//
// It sits below server and cmd and above rerank, because it produces rerank.Query.
package request

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"

	"github.com/kairos-rag/kairos/search"
)

// Defaults of a Query's fields. A Query field left at its zero value takes these.
const (
	// DefaultK is the number of hits of a query that names no k (search.DefaultK, the one
	// definition).
	DefaultK = search.DefaultK
	// DefaultBatchK is the k of `kairos search --batch` when no -k is given: runs written
	// for evaluation need depth (BEIR's tools read 100 or 1000 per query).
	DefaultBatchK = 100
)

// Query is one search request. Zero fields take their defaults; JSON names are the API's.
type Query struct {
	// Text is the query; required, valid UTF-8, at most Limits.MaxChars characters.
	Text string `json:"text"`
	// K is the number of hits, 1..Limits.MaxK. Absent (nil) means DefaultK; 0 or a negative
	// number is an error, never silently replaced.
	K *int `json:"k,omitempty"`
	// Mode is bm25, dense or hybrid; "" leaves the choice to the index (hybrid when it has
	// embeddings and the server or CLI an encoder, else bm25).
	Mode string `json:"mode,omitempty"`
	// Time is the time need: none, recent, auto (read from Text), YYYY, YYYY..YYYY or
	// "from YYYY to YYYY". Empty means auto when Rerank has a stage that uses time (time or
	// wikichat), and none otherwise: asking for time reranking without saying which time
	// asks Kairos to read it from the question.
	Time string `json:"time,omitempty"`
	// Rerank names the stages: "none", "time", "cross", "cross,time" or "wikichat", as one
	// string or as a list ("cross", "time").
	Rerank List `json:"rerank,omitempty"`
	// Candidates is how many retrieved passages the rerankers see, 0..Limits.MaxCandidates;
	// 0 means the engine's (rerank.DefaultCandidates unless configured).
	Candidates int `json:"candidates,omitempty"`
	// Explain adds each hit's score breakdown.
	Explain bool `json:"explain,omitempty"`
	// Exact makes dense search brute-force instead of HNSW (a reference; slow).
	Exact bool `json:"exact,omitempty"`
	// PerDoc keeps at most this many passages per document (1: a ranking of documents);
	// 0 means no cap.
	PerDoc int `json:"per_doc,omitempty"`
	// Fusion (rrf or convex), Alpha (convex: weight of dense, in (0,1]) and RRFK (rrf: k,
	// >= 1) override the index's hybrid fusion for this query; zero values keep it.
	Fusion string  `json:"fusion,omitempty"`
	Alpha  float64 `json:"alpha,omitempty"`
	RRFK   int     `json:"rrf_k,omitempty"`
	// MinScore drops the hits whose score is below it, so that a caller can prefer no hit
	// to a weak one. It compares with the score returned: the last rerank stage's when the
	// query reranks, else the retrieval score (BM25, cosine or fused, by mode). Absent: none.
	MinScore *float64 `json:"min_score,omitempty"`
	// Now is the date the question is asked as of (YYYY-MM-DD or RFC 3339): it anchors
	// "recent", "last year" and "since 2010". Empty means the engine's clock.
	Now string `json:"now,omitempty"`
	// RecentHalfLifeYears overrides, for this query, the age in years at which a passage
	// earns half the credit of a current one under the time need "recent"; > 0. 0 keeps the
	// engine's (the serve or search option, default 3).
	RecentHalfLifeYears float64 `json:"recent_half_life_years,omitempty"`
	// Filters restrict the passages the query may return.
	Filters Filters `json:"filters,omitzero"`
}

// Filters restrict the passages of one query: the wire form of search.Filters (backend.Filter,
// the one definition of what a filter means), strings as a caller writes them, which Parse
// validates and converts.
type Filters struct {
	// DateFrom and DateTo bound the passage date, YYYY-MM-DD or RFC 3339. A bare DateTo
	// includes its whole day.
	DateFrom string `json:"date_from,omitempty"`
	DateTo   string `json:"date_to,omitempty"`
	// Source keeps passages of these sources only: "name" or ["a", "b"].
	Source List `json:"source,omitempty"`
	// Language keeps passages in these languages only (codes as the index records them,
	// "de"; a region is ignored): "de" or ["de", "fr"]. A query is analysed in each.
	Language List `json:"language,omitempty"`
	// BlockType keeps passages of these block types only: "text" (prose), "table" or
	// "infobox" (corpus.BlockTypes), as one string or a list.
	BlockType List `json:"block_type,omitempty"`
}

// IsZero reports whether f filters nothing.
func (f Filters) IsZero() bool {
	return f.DateFrom == "" && f.DateTo == "" && len(f.Source) == 0 && len(f.Language) == 0 && len(f.BlockType) == 0
}

// IsZero reports whether q sets no field at all (an empty JSON object).
func (q Query) IsZero() bool {
	return q.Text == "" && q.K == nil && q.Mode == "" && q.Time == "" && blankRerank(q.Rerank) &&
		q.Candidates == 0 && !q.Explain && !q.Exact && q.PerDoc == 0 && q.Fusion == "" &&
		q.Alpha == 0 && q.RRFK == 0 && q.MinScore == nil && q.Now == "" && q.RecentHalfLifeYears == 0 && q.Filters.IsZero()
}

// blankRerank reports a rerank field that asks for no stage by being empty: absent, "" or
// [""] (stages reads it as none).
func blankRerank(l List) bool { return len(l) == 0 || len(l) == 1 && strings.TrimSpace(l[0]) == "" }

// Int returns a pointer to n, for Query.K.
func Int(n int) *int { return &n }

// List is a JSON field that may be written as one string or as a list of strings.
type List []string

// UnmarshalJSON accepts null, "a" and ["a", "b"]. Anything else is a *json.UnmarshalTypeError,
// which encoding/json completes with the field's name. "" is kept as a list of one empty
// string, not read as no list: "source": "" is a filter that Parse refuses, where reading it
// as none would have let every source through, the opposite of what it could mean.
func (l *List) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		*l = nil
		return nil
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*l = List{s}
		return nil
	case len(b) > 0 && b[0] == '[':
		var many []string
		if err := json.Unmarshal(b, &many); err == nil {
			*l = many
			return nil
		}
	}
	return &json.UnmarshalTypeError{Value: jsonValueKind(b), Type: reflect.TypeFor[List]()}
}

func jsonValueKind(b []byte) string {
	if len(b) == 0 {
		return "value"
	}
	switch b[0] {
	case '{':
		return "object"
	case '[':
		return "array with a non-string"
	case 't', 'f':
		return "boolean"
	}
	return "number"
}
