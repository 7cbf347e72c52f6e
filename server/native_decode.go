package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kairos-rag/kairos/corpus/timex"
	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/search"
)

// limits are the request limits of Options, named as the 400 answers name them.
type limits struct {
	maxQueries, maxChars, maxK, maxCandidates int
}

func (o Options) limits() limits {
	return limits{maxQueries: o.MaxQueries, maxChars: o.MaxQueryChars, maxK: o.MaxK, maxCandidates: o.MaxCandidates}
}

// searchBody accepts both the batch form and the single-query shorthand.
type searchBody struct {
	Queries *[]QueryRequest `json:"queries"`
	QueryRequest
}

func (q *QueryRequest) empty() bool {
	return q.Text == "" && q.K == 0 && q.Mode == "" && q.Time == "" && len(q.Rerank) == 0 &&
		q.Candidates == 0 && !q.Explain && q.Filters == nil
}

// decodeSearchRequest parses and validates a POST /v1/search body. A query's Mode is left
// empty when it names none: the default depends on the index loaded when it runs.
func decodeSearchRequest(body []byte, l limits) ([]rerank.Query, error) {
	var b searchBody
	if err := decodeStrict(body, &b); err != nil {
		return nil, err
	}
	if b.Queries == nil {
		if b.QueryRequest.empty() {
			return nil, badRequest(`missing "queries" (or "text" for a single query)`)
		}
		q, err := l.query("", b.QueryRequest)
		if err != nil {
			return nil, err
		}
		return []rerank.Query{q}, nil
	}
	if !b.QueryRequest.empty() {
		return nil, badRequest(`give either "queries" or the fields of a single query at the top level, not both`)
	}
	qs := *b.Queries
	switch {
	case len(qs) == 0:
		return nil, badRequest(`"queries" is empty: want 1 to %d queries`, l.maxQueries)
	case len(qs) > l.maxQueries:
		return nil, badRequest(`"queries" has %d queries, over the limit of %d (max_queries)`, len(qs), l.maxQueries)
	}
	out := make([]rerank.Query, len(qs))
	for i, qr := range qs {
		q, err := l.query(fmt.Sprintf("queries[%d].", i), qr)
		if err != nil {
			return nil, err
		}
		out[i] = q
	}
	return out, nil
}

// query validates one query; path prefixes every field name in error messages.
func (l limits) query(path string, qr QueryRequest) (rerank.Query, error) {
	var q rerank.Query
	text, err := l.text(path+"text", qr.Text)
	if err != nil {
		return q, err
	}
	q.Text = text
	if q.K, err = l.k(path+"k", qr.K, search.DefaultK); err != nil {
		return q, err
	}
	if q.Mode, err = search.ParseMode(qr.Mode, ""); err != nil {
		return q, badRequest("%smode: %v", path, err)
	}
	stages, err := stringList(path+"rerank", qr.Rerank)
	if err != nil {
		return q, err
	}
	if len(stages) > 0 {
		if q.Rerank, err = rerank.ParseStages(strings.Join(stages, ",")); err != nil {
			return q, badRequest("%srerank: %v", path, err)
		}
	}
	if q.Time, err = timex.Parse(qr.Time); err != nil {
		return q, badRequest("%stime: %v", path, err)
	}
	if strings.TrimSpace(qr.Time) == "" && hasStage(q.Rerank, rerank.StageTime) {
		q.Time = timex.Spec{Kind: timex.KindAuto} // asking for time reranking implies a time need
	}
	switch {
	case qr.Candidates < 0:
		return q, badRequest("%scandidates: %d is negative", path, qr.Candidates)
	case qr.Candidates > l.maxCandidates:
		return q, badRequest("%scandidates: %d is over the limit of %d (max_candidates)", path, qr.Candidates, l.maxCandidates)
	}
	q.Candidates = qr.Candidates
	q.Explain = qr.Explain
	if qr.Filters != nil {
		if q.Filters, err = filters(path+"filters.", *qr.Filters); err != nil {
			return q, err
		}
	}
	return q, nil
}

func (l limits) text(field, s string) (string, error) {
	if !utf8.ValidString(s) {
		return "", badRequest("%s: not valid UTF-8", field)
	}
	if strings.TrimSpace(s) == "" {
		return "", badRequest("%s: empty query", field)
	}
	if n := utf8.RuneCountInString(s); n > l.maxChars {
		return "", badRequest("%s: %d characters, over the limit of %d (max_query_chars)", field, n, l.maxChars)
	}
	return s, nil
}

// k validates a hit count; 0 gives def.
func (l limits) k(field string, k, def int) (int, error) {
	switch {
	case k == 0:
		return def, nil
	case k < 0:
		return 0, badRequest("%s: %d is negative", field, k)
	case k > l.maxK:
		return 0, badRequest("%s: %d is over the limit of %d (max_k)", field, k, l.maxK)
	}
	return k, nil
}

func hasStage(stages []rerank.Stage, st rerank.Stage) bool {
	for _, s := range stages {
		if s == st {
			return true
		}
	}
	return false
}

// stringList reads a field that may be one string or an array of strings.
func stringList(field string, raw json.RawMessage) ([]string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		if one == "" {
			return nil, nil
		}
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, badRequest("%s: want a string or an array of strings", field)
	}
	for i, s := range many {
		if strings.TrimSpace(s) == "" {
			return nil, badRequest("%s[%d]: empty string", field, i)
		}
	}
	return many, nil
}

func filters(path string, fr FilterRequest) (search.Filters, error) {
	var f search.Filters
	var err error
	if f.DateFrom, err = parseDate(path+"date_from", fr.DateFrom, false); err != nil {
		return f, err
	}
	if f.DateTo, err = parseDate(path+"date_to", fr.DateTo, true); err != nil {
		return f, err
	}
	if !f.DateFrom.IsZero() && !f.DateTo.IsZero() && f.DateTo.Before(f.DateFrom) {
		return f, badRequest("%sdate_to (%s) is before date_from (%s)", path, fr.DateTo, fr.DateFrom)
	}
	if f.Sources, err = stringList(path+"source", fr.Source); err != nil {
		return f, err
	}
	return f, nil
}

// parseDate reads YYYY-MM-DD or RFC 3339. A bare date as an upper bound means the end of
// that day, so date_to "2020-12-31" includes passages dated during the 31st.
func parseDate(field, s string, endOfDay bool) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		if endOfDay {
			t = t.Add(24*time.Hour - time.Nanosecond)
		}
		return t, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, badRequest("%s: %q is not a date (want YYYY-MM-DD or RFC 3339)", field, s)
	}
	return t.UTC(), nil
}
