package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/rerank/request"
	"github.com/kairos-rag/kairos/search"
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
	if err := emptyListFilters(body); err != nil {
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
	if err == nil {
		err = zeroDateBounds(qr.Filters, &q.Filters)
	}
	var re *request.Error
	if errors.As(err, &re) {
		return q, re.In(path)
	}
	return q, err
}

// zeroDateBounds restores the date bounds of wire that request.Parse read as Go's zero
// instant ("0001-01-01T00:00:00Z", or "0001-01-01" as date_from) into f, where a zero time
// means no bound: a bound there is one (dateBounds.apply). request.Parse checks crossed
// bounds only between non-zero ones, so the crossing of a zero date_to is checked here.
func zeroDateBounds(wire request.Filters, f *search.Filters) error {
	fromZero := wire.DateFrom != "" && f.DateFrom.IsZero()
	toZero := wire.DateTo != "" && f.DateTo.IsZero()
	if !fromZero && !toZero {
		return nil
	}
	b := dateBounds{from: f.DateFrom, to: f.DateTo, hasFrom: wire.DateFrom != "", hasTo: wire.DateTo != ""}
	if toZero && b.hasFrom && b.from.After(b.to) {
		return &request.Error{Field: "filters.date_to", Msg: fmt.Sprintf("%s is before date_from %s", wire.DateTo, wire.DateFrom)}
	}
	b.apply(f)
	return nil
}

// text validates a query text outside POST /v1/search (chat messages, WikiChat queries).
func (l limits) text(field, s string) (string, error) { return l.Limits.Text(field, s) }

// dateBounds are a filter's date bounds as a request sets them, with whether each is set
// kept apart from its value: a bound at Go's zero instant (0001-01-01T00:00:00Z) is a bound,
// where search.Filters reads a zero time as none, and so had let every passage through.
type dateBounds struct {
	from, to       time.Time
	hasFrom, hasTo bool
}

// lower narrows the lower bound to t (bounds AND: the later one holds).
func (b *dateBounds) lower(t time.Time) {
	if !b.hasFrom || t.After(b.from) {
		b.from, b.hasFrom = t, true
	}
}

// upper narrows the upper bound to t (the earlier one holds).
func (b *dateBounds) upper(t time.Time) {
	if !b.hasTo || t.Before(b.to) {
		b.to, b.hasTo = t, true
	}
}

// apply writes b into f as the engines read bounds. A passage dated at the zero instant is an
// undated one (corpus.Passage.Date), which fails every bound. So a lower bound at the zero
// instant passes the dated passages, all of which lie after it: it moves on by a nanosecond,
// the resolution of passage dates, and becomes one the engines see. An upper bound there
// passes no passage: none is dated before the year 1 (Qdrant's and bleve's dates could not
// hold one), and the undated fail it.
func (b dateBounds) apply(f *search.Filters) {
	if b.hasFrom {
		f.DateFrom = b.from
		if b.from.IsZero() {
			f.DateFrom = b.from.Add(time.Nanosecond)
		}
	}
	if b.hasTo {
		f.DateTo = b.to
		if b.to.IsZero() {
			f.None = true
		}
	}
}

// listFilters are the filters of a query that request.List reads, as written.
type listFilters struct {
	Source    json.RawMessage `json:"source"`
	Language  json.RawMessage `json:"language"`
	BlockType json.RawMessage `json:"block_type"`
}

// emptyListFilters refuses a list filter written as "" ("source": ""), as request.Parse
// refuses [""]: request.List reads "" as no list, so the filter meant "any source", the
// opposite of what a client writing it could mean. body has passed decodeStrict.
func emptyListFilters(body []byte) error {
	var b struct {
		Queries []struct {
			Filters listFilters `json:"filters"`
		} `json:"queries"`
		Filters listFilters `json:"filters"`
	}
	if json.Unmarshal(body, &b) != nil {
		return nil // not the shapes above: decodeStrict's errors are the ones to report
	}
	check := func(path string, f listFilters) error {
		for _, x := range []struct {
			name string
			raw  json.RawMessage
		}{{"source", f.Source}, {"language", f.Language}, {"block_type", f.BlockType}} {
			if bytes.Equal(bytes.TrimSpace(x.raw), []byte(`""`)) {
				return &request.Error{Field: path + "filters." + x.name, Msg: "empty string"}
			}
		}
		return nil
	}
	if err := check("", b.Filters); err != nil {
		return err
	}
	for i, q := range b.Queries {
		if err := check(fmt.Sprintf("queries[%d].", i), q.Filters); err != nil {
			return err
		}
	}
	return nil
}
