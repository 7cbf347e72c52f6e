package server

import (
	"github.com/kairos-rag/kairos/corpus/timex"
	"github.com/kairos-rag/kairos/rerank/request"
)

// QueryRequest is one query of POST /v1/search. It is the request every Kairos front end
// shares (the CLI, batch files, the web page): see package rerank/request for its fields,
// their defaults and their validation.
type QueryRequest = request.Query

// FilterRequest restricts the passages of one query. Dates are YYYY-MM-DD or RFC 3339; a
// bare date_to includes its whole day.
type FilterRequest = request.Filters

// SearchResponse answers POST /v1/search: one result per query, in request order.
type SearchResponse struct {
	Results []QueryResult `json:"results"`
	TookMS  float64       `json:"took_ms"`
}

// QueryResult is the answer to one query.
type QueryResult struct {
	Query  string      `json:"query"`
	Mode   string      `json:"mode"`
	Rerank []string    `json:"rerank"`
	Time   TimeNeed    `json:"time"` // the time need used, auto resolved
	Hits   []HitResult `json:"hits"`
}

// HitResult is one retrieved passage.
type HitResult struct {
	Rank      int                `json:"rank"`
	Score     float64            `json:"score"`
	PassageID string             `json:"passage_id"`
	DocID     string             `json:"doc_id"`
	Title     string             `json:"title"`
	Section   string             `json:"section"`
	Text      string             `json:"text"`
	URL       string             `json:"url"`
	Date      string             `json:"date,omitempty"` // RFC 3339, absent when unknown
	Source    string             `json:"source,omitempty"`
	BlockType string             `json:"block_type"` // text, table or infobox (corpus.BlockTypes)
	Scores    map[string]float64 `json:"scores,omitempty"`
	Explain   *ExplainResult     `json:"explain,omitempty"`
}

// ExplainResult is the score breakdown of one hit, when the query set "explain".
type ExplainResult struct {
	Retrieval float64  `json:"retrieval"`
	Relevance float64  `json:"relevance"`
	Cross     *float64 `json:"cross,omitempty"`
	Time      *float64 `json:"time,omitempty"`
	Final     float64  `json:"final"`
	Notes     []string `json:"notes,omitempty"`
	// Unscored: the cross-encoder did not reach this candidate within its latency budget.
	Unscored    bool `json:"unscored,omitempty"`
	WikiChatKey *int `json:"wikichat_key,omitempty"` // the wikichat stage's sort key
}

// PassageResponse answers GET /v1/passages/{id}.
type PassageResponse struct {
	PassageID string        `json:"passage_id"`
	DocID     string        `json:"doc_id"`
	Title     string        `json:"title"`
	Section   string        `json:"section"`
	Text      string        `json:"text"`
	URL       string        `json:"url"`
	Date      string        `json:"date,omitempty"`
	Source    string        `json:"source,omitempty"`
	BlockType string        `json:"block_type"` // text, table or infobox (corpus.BlockTypes)
	Ordinal   int           `json:"ordinal"`
	Years     []YearMention `json:"years,omitempty"`
}

// TimeNeed is the time need a query was answered with (a query's "auto" resolved): none,
// recent, year or range, with the years of a range (From = To for a year).
type TimeNeed struct {
	Kind string `json:"kind"`
	From int    `json:"from,omitempty"`
	To   int    `json:"to,omitempty"`
}

// YearMention is a year or span of years a passage mentions, at byte Pos of its text.
type YearMention struct {
	From int `json:"from"`
	To   int `json:"to"`
	Pos  int `json:"pos"`
}

// timeNeed and yearMentions copy the engine's values into the API's types, which change
// only with the API.
func timeNeed(t timex.Spec) TimeNeed { return TimeNeed{Kind: string(t.Kind), From: t.From, To: t.To} }

func yearMentions(ms []timex.Mention) []YearMention {
	if len(ms) == 0 {
		return nil
	}
	out := make([]YearMention, len(ms))
	for i, m := range ms {
		out[i] = YearMention{From: m.From, To: m.To, Pos: m.Pos}
	}
	return out
}

// StatsResponse answers GET /v1/stats.
type StatsResponse struct {
	Index  IndexStats `json:"index"`
	Server ServerInfo `json:"server"`
}

// IndexStats describes the loaded index.
type IndexStats struct {
	Documents     int            `json:"documents"`
	Passages      int            `json:"passages"`
	Sources       map[string]int `json:"sources"`
	DateFrom      string         `json:"date_from,omitempty"`
	DateTo        string         `json:"date_to,omitempty"`
	Dense         bool           `json:"dense"`
	Model         string         `json:"model,omitempty"`
	Created       string         `json:"created,omitempty"`
	FormatVersion int            `json:"format_version"`
	SizeBytes     int64          `json:"size_bytes"`
	DefaultMode   string         `json:"default_mode"`
	// Language is the language the index is analysed in (its passages and the queries).
	Language string `json:"language"`
	Analyzer string `json:"analyzer"`
	// Languages counts the passages per language ("multilingual" analyzer: several).
	Languages map[string]int `json:"languages,omitempty"`
	// Outdated says what the index lacks that this version writes, which `kairos compact`
	// adds; absent when nothing.
	Outdated string `json:"outdated,omitempty"`
}

// ServerInfo describes the running server and its build.
type ServerInfo struct {
	Version    string `json:"version"`
	Revision   string `json:"revision,omitempty"`
	GoVersion  string `json:"go_version"`
	Started    string `json:"started"`
	Collection string `json:"collection"` // the collection these stats are of
	// Generation is the generation number of the index served (as kairos stats reports it):
	// a reload onto a new commit raises it. Reloads counts the successful reloads of this
	// collection since the server started, whatever they loaded.
	Generation int       `json:"generation"`
	Reloads    uint64    `json:"reloads"`
	LoadedAt   string    `json:"loaded_at"`
	Chat       *ChatInfo `json:"chat,omitempty"` // absent when POST /v1/chat is not configured
}

// ChatInfo describes the chat endpoint of the server.
type ChatInfo struct {
	Pipelines []string `json:"pipelines"` // default first; empty when the Chatter does not say
}
