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
// empty when it names none: the default depends on the index loaded when it runs. batch is
// set for the form with "queries", whose errors name a query as queries[i].
func decodeSearchRequest(body []byte, l limits) (qs []rerank.Query, batch bool, err error) {
	var b searchBody
	if err := decodeStrict(body, &b); err != nil {
		return nil, false, err
	}
	if b.Queries == nil {
		if b.QueryRequest.IsZero() {
			return nil, false, badRequest(`missing "queries" (or "text" for a single query)`)
		}
		q, err := l.query("", b.QueryRequest)
		if err != nil {
			return nil, false, err
		}
		return []rerank.Query{q}, false, nil
	}
	if !b.QueryRequest.IsZero() {
		return nil, true, badRequest(`give either "queries" or the fields of a single query at the top level, not both`)
	}
	reqs := *b.Queries
	switch {
	case len(reqs) == 0:
		return nil, true, badRequest(`"queries" is empty: want 1 to %d queries`, l.maxQueries)
	case len(reqs) > l.maxQueries:
		return nil, true, badRequest(`"queries" has %d queries, over the limit of %d (max_queries)`, len(reqs), l.maxQueries)
	}
	out := make([]rerank.Query, len(reqs))
	for i, qr := range reqs {
		q, err := l.query(queryPath(true, i), qr)
		if err != nil {
			return nil, true, err
		}
		out[i] = q
	}
	return out, true, nil
}

// queryPath is where the fields of a request's query i are: "queries[i]." in a batch.
func queryPath(batch bool, i int) string {
	if !batch {
		return ""
	}
	return fmt.Sprintf("queries[%d].", i)
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
