package server

import (
	"errors"
	"fmt"

	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/rerank/request"
)

// limits are the request limits of Options: the per-query ones request.Parse checks and the
// batch size, which only the server knows.
type limits struct {
	request.Limits
	maxQueries int
}

func (o Options) limits() limits {
	return limits{maxQueries: o.MaxQueries, Limits: request.Limits{
		MaxChars: o.MaxQueryChars, MaxK: o.MaxK, MaxCandidates: o.MaxCandidates, MaxTotalHits: o.MaxTotalHits}}
}

// searchBody accepts both the batch form and the single-query shorthand.
type searchBody struct {
	Queries *[]QueryRequest `json:"queries"`
	QueryRequest
}

// decodeSearchRequest parses and validates a POST /v1/search body. A query's Mode is left
// empty when it names none: the default depends on the index loaded when it runs.
func decodeSearchRequest(body []byte, l limits) ([]rerank.Query, error) {
	var b searchBody
	if err := decodeStrict(body, &b); err != nil {
		return nil, err
	}
	if b.Queries == nil {
		if b.QueryRequest.IsZero() {
			return nil, badRequest(`missing "queries" (or "text" for a single query)`)
		}
		q, err := l.query("", b.QueryRequest)
		if err != nil {
			return nil, err
		}
		return []rerank.Query{q}, nil
	}
	if !b.QueryRequest.IsZero() {
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

// query validates one query through request.Parse; path places its errors in the body.
func (l limits) query(path string, qr QueryRequest) (rerank.Query, error) {
	q, err := request.Parse(qr, l.Limits)
	var re *request.Error
	if errors.As(err, &re) {
		return q, re.In(path)
	}
	return q, err
}

// text validates a query text outside POST /v1/search (chat messages, WikiChat queries).
func (l limits) text(field, s string) (string, error) { return l.Limits.Text(field, s) }
