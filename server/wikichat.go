package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/internal/langanalysis"
	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/rerank/live"
	"github.com/kairos-rag/kairos/rerank/request"
	"github.com/kairos-rag/kairos/search"
)

// WikiChat's retriever API (stanford-oval/WikiChat, retrieval/search_query.py and the older
// ColBERT server) as Kairos answers it on POST /search. Two request shapes share the path:
// the current one ({"query", "num_blocks", ...}) and the v1 one ({"query", "evi_num"}); the
// presence of "evi_num" tells them apart.

// WikiChatRequest is the current WikiChat request. Unknown fields are rejected, as WikiChat's
// pydantic model forbids extras.
type WikiChatRequest struct {
	Query             json.RawMessage  `json:"query"`      // a string or a list of strings; required
	NumBlocks         *int             `json:"num_blocks"` // 1..MaxK; required
	Rerank            bool             `json:"rerank"`
	NumBlocksToRerank int              `json:"num_blocks_to_rerank"` // raised to num_blocks
	SearchFilters     []WikiChatFilter `json:"search_filters"`
}

// WikiChatFilter is one search filter; filters combine with AND.
type WikiChatFilter struct {
	FieldName  string          `json:"field_name"`
	FilterType string          `json:"filter_type"` // eq, ne, lt, lte, gt, gte
	FieldValue json.RawMessage `json:"field_value"`
}

// WikiChatQueryResult is the answer to one query: WikiChat's QueryResult.
type WikiChatQueryResult struct {
	Results []WikiChatBlock `json:"results"`
}

// WikiChatBlock is WikiChat's SearchResultBlock. It carries no extra field, because WikiChat's
// model forbids extras: Kairos's own ids travel in BlockMetadata. Nor does it carry a value
// the model refuses: document_title is never empty, url is an http(s) URL or null.
type WikiChatBlock struct {
	DocumentTitle    string         `json:"document_title"`
	SectionTitle     string         `json:"section_title"`
	Content          string         `json:"content"`        // the passage body, title prefix removed
	LastEditDate     *string        `json:"last_edit_date"` // RFC 3339, null when unknown
	URL              *string        `json:"url"`            // an http(s) URL, else null
	BlockMetadata    map[string]any `json:"block_metadata"`
	SimilarityScore  float64        `json:"similarity_score"`  // rounded to 3 digits, as WikiChat does
	ProbabilityScore float64        `json:"probability_score"` // softmax over the query's scores
}

// WikiChatV1Request is the older ColBERT-server request.
type WikiChatV1Request struct {
	Query  *string `json:"query"`   // required
	EviNum *int    `json:"evi_num"` // 1..MaxK; required
}

// WikiChatV1Response is the older ColBERT-server answer: parallel arrays, best first.
// passage_ids are Kairos passage ids (strings), where ColBERT had integer row numbers.
type WikiChatV1Response struct {
	Passages      []string  `json:"passages"`
	PassageIDs    []string  `json:"passage_ids"`
	PassageRanks  []int     `json:"passage_ranks"`
	PassageScores []float64 `json:"passage_scores"`
	PassageProbs  []float64 `json:"passage_probs"`
}

// wikiChatShape is which of WikiChat's clients a request came from, and so how to answer.
type wikiChatShape int

const (
	shapeV21 wikiChatShape = iota // WikiChat 2.1+: a list of {"results": [blocks]}
	shapeV1                       // the ColBERT server: parallel arrays for one query
	shapeV20                      // WikiChat 2.0: per query, a dict of parallel arrays
)

// wikiChatParsed is a decoded WikiChat request.
type wikiChatParsed struct {
	qs    []rerank.Query
	shape wikiChatShape
	// unreranked: "rerank" was asked for, but the server has no reranker to run.
	unreranked bool
}

// wikiChatDecoder parses one request body into queries, in the language of the index.
type wikiChatDecoder func(body []byte, o Options) (wikiChatParsed, error)

// handleWikiChat serves /search, by POST and by GET with a JSON body: WikiChat 1.0's client
// sends GET, which its ColBERT server accepted as it did POST.
func (s *Server) handleWikiChat(w http.ResponseWriter, r *http.Request) {
	s.serveWikiChat(w, r, decodeWikiChatRequest)
}

// handleWikiChatV2 serves POST /v2/search, for WikiChat 2.0's client.
func (s *Server) handleWikiChatV2(w http.ResponseWriter, r *http.Request) {
	s.serveWikiChat(w, r, decodeWikiChatV20)
}

func (s *Server) serveWikiChat(w http.ResponseWriter, r *http.Request, decode wikiChatDecoder) {
	c, err := s.collection(r) // an unknown collection is a 404 whatever the body
	if err != nil {
		writeErr(w, err, "")
		return
	}
	body, err := readBody(w, r, s.opts.MaxBodyBytes)
	if err != nil {
		writeErr(w, err, "")
		return
	}
	g := c.acquire()
	if g != nil {
		defer g.Release()
	}
	o := s.opts
	o.Language = s.language(g)
	req, err := decode(body, o)
	qs := req.qs
	if err != nil {
		writeErr(w, err, "")
		return
	}
	if g == nil {
		writeErr(w, &apiError{status: http.StatusServiceUnavailable, msg: "no index loaded yet"}, "")
		return
	}
	for i := range qs {
		qs[i].Mode = g.Mode()
	}
	setMode(r, string(g.Mode()))
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.Timeout)
	defer cancel()
	release, err := s.admit(ctx, w, qs)
	if err != nil {
		writeErr(w, err, s.opts.Timeout.String())
		return
	}
	defer release()
	results, err := s.runBatch(ctx, g, qs)
	if err != nil {
		writeErr(w, err, s.opts.Timeout.String())
		return
	}
	// WikiChat asks for reranking with a boolean; without a cross-encoder the server answers
	// in retrieval order, and says so rather than let the client believe it reranked.
	if req.unreranked {
		w.Header().Set(rerankHeader, rerankSkipped)
	}
	var resp any
	switch req.shape {
	case shapeV1:
		resp = wikiChatV1Response(results[0].Hits)
	case shapeV20:
		out := make([]WikiChatV20Result, len(results))
		for i, res := range results {
			out[i] = wikiChatV20Result(res.Hits, o.Language)
		}
		resp = out
	default:
		blocks := make([]WikiChatQueryResult, len(results))
		for i, res := range results {
			blocks[i] = WikiChatQueryResult{Results: wikiChatBlocks(res.Hits, o.Language, req.unreranked)}
		}
		resp = blocks
	}
	out, err := s.encodeCapped(resp, s.opts.MaxResponseBytes)
	if err != nil {
		writeErr(w, err, "")
		return
	}
	s.writeEncoded(w, http.StatusOK, out)
}

// rerankHeader carries rerankSkipped on a WikiChat answer to "rerank": true that was not
// reranked; WikiChat's models forbid extra fields, so 2.1 blocks say it in block_metadata.
const (
	rerankHeader  = "X-Kairos-Rerank"
	rerankSkipped = "skipped: no cross-encoder is configured (kairos serve --cross-model); hits are in retrieval order"
)

// decodeWikiChatRequest parses either shape of /search; "evi_num" marks the v1 one.
func decodeWikiChatRequest(body []byte, o Options) (wikiChatParsed, error) {
	var keys map[string]json.RawMessage
	if err := decodeStrict(body, &keys); err != nil {
		return wikiChatParsed{}, err
	}
	if _, ok := keys["evi_num"]; ok {
		q, err := decodeWikiChatV1(body, o.limits())
		return wikiChatParsed{qs: []rerank.Query{q}, shape: shapeV1}, err
	}
	var req WikiChatRequest
	if err := decodeStrict(body, &req); err != nil {
		return wikiChatParsed{}, err
	}
	qs, err := wikiChatQueriesOf(req, search.Filters{}, o)
	return wikiChatParsed{qs: qs, shape: shapeV21, unreranked: req.Rerank && len(o.WikiChatRerank) == 0}, err
}

// wikiChatQueriesOf validates a 2.x request and turns it into Kairos queries, with extra
// filters (2.0's languages) ANDed to its search_filters.
func wikiChatQueriesOf(req WikiChatRequest, extra search.Filters, o Options) ([]rerank.Query, error) {
	l := o.limits()
	texts, err := wikiChatQueries(req.Query, l)
	if err != nil {
		return nil, err
	}
	if req.NumBlocks == nil {
		return nil, badRequest(`missing "num_blocks"`)
	}
	if n := *req.NumBlocks; n < 1 || n > l.MaxK {
		return nil, badRequest(`"num_blocks": %d is out of range 1..%d (max_k)`, n, l.MaxK)
	}
	if n := req.NumBlocksToRerank; n < 0 || n > l.MaxCandidates {
		return nil, badRequest(`"num_blocks_to_rerank": %d is out of range 0..%d (max_candidates)`, n, l.MaxCandidates)
	}
	f, err := wikiChatFilters(req.SearchFilters, o.Language)
	if err != nil {
		return nil, err
	}
	f.None = f.None || extra.None
	switch {
	case len(extra.Languages) == 0:
	case len(f.Languages) == 0:
		f.Languages = extra.Languages
	default: // both: the languages in each
		var both []string
		for _, l := range extra.Languages {
			if containsLanguage(f.Languages, l) {
				both = append(both, l)
			}
		}
		f.Languages, f.None = both, f.None || len(both) == 0
	}
	qs := make([]rerank.Query, len(texts))
	for i, t := range texts {
		// The WikiChat fields become Kairos's request, parsed and defaulted by the same
		// request.Parse as POST /v1/search; only the filters, in WikiChat's own dialect, are
		// translated here.
		qr := request.Query{Text: t, K: req.NumBlocks}
		if req.Rerank {
			// As WikiChat: rerank max(num_blocks, num_blocks_to_rerank) candidates.
			qr.Rerank = request.List{rerank.FormatStages(o.WikiChatRerank)}
			qr.Candidates = max(req.NumBlocksToRerank, *req.NumBlocks)
		}
		q, err := request.Parse(qr, l.Limits)
		if err != nil {
			return nil, fmt.Errorf("query %d: %w", i, err)
		}
		q.Filters = f
		qs[i] = q
	}
	return qs, nil
}

func decodeWikiChatV1(body []byte, l limits) (rerank.Query, error) {
	var req WikiChatV1Request
	if err := decodeStrict(body, &req); err != nil {
		return rerank.Query{}, err
	}
	if req.Query == nil {
		return rerank.Query{}, badRequest(`missing "query"`)
	}
	text, err := l.text(`"query"`, *req.Query)
	if err != nil {
		return rerank.Query{}, err
	}
	if req.EviNum == nil {
		return rerank.Query{}, badRequest(`"evi_num": null (want an integer)`)
	}
	if n := *req.EviNum; n < 1 || n > l.MaxK {
		return rerank.Query{}, badRequest(`"evi_num": %d is out of range 1..%d (max_k)`, n, l.MaxK)
	}
	return request.Parse(request.Query{Text: text, K: req.EviNum}, l.Limits)
}

// wikiChatQueries reads "query": one string, or a list of 1..max_queries strings.
func wikiChatQueries(raw json.RawMessage, l limits) ([]string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, badRequest(`missing "query"`)
	}
	var one string
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &one); err != nil {
			return nil, badRequest(`"query": %v`, err)
		}
		t, err := l.text(`"query"`, one)
		return []string{t}, err
	}
	var many []json.RawMessage
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, badRequest(`"query": want a string or a list of strings`)
	}
	switch {
	case len(many) == 0:
		return nil, badRequest(`"query": empty list: want 1 to %d queries`, l.maxQueries)
	case len(many) > l.maxQueries:
		return nil, badRequest(`"query": %d queries, over the limit of %d (max_queries)`, len(many), l.maxQueries)
	}
	out := make([]string, len(many))
	for i, m := range many {
		if err := json.Unmarshal(m, &out[i]); err != nil || bytes.TrimSpace(m)[0] != '"' {
			return nil, badRequest(`"query"[%d]: want a string`, i)
		}
		if _, err := l.text(fmt.Sprintf(`"query"[%d]`, i), out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// language is the language WikiChat requests are answered in: Options.Language, else the
// loaded index's, else DefaultLanguage; "" for a multilingual index, whose passages each
// carry their own (filtered by search, reported per block).
func (s *Server) language(g *live.Load) string {
	switch {
	case s.opts.Language != "":
		return s.opts.Language
	case g != nil && g.Stats().Analyzer == langanalysis.Multilingual:
		return ""
	case g != nil && g.Stats().Language != "":
		return g.Stats().Language
	}
	return DefaultLanguage
}

// passageLanguage is the language reported for p: lang, the one language of the index, else
// the passage's own (a multilingual index).
func passageLanguage(p corpus.Passage, lang string) string {
	if lang != "" {
		return lang
	}
	return p.Language
}

// wikiChatBlocks are one query's hits as 2.1 blocks. unreranked marks them as served in
// retrieval order although "rerank" was asked for.
func wikiChatBlocks(hits []rerank.Hit, lang string, unreranked bool) []WikiChatBlock {
	probs := softmax(hits)
	out := make([]WikiChatBlock, len(hits))
	for i, h := range hits {
		p := h.Passage
		b := WikiChatBlock{DocumentTitle: wikiChatTitle(p), SectionTitle: p.Section, Content: body(p),
			URL: wikiChatURL(p.URL), SimilarityScore: round3(h.Score), ProbabilityScore: round3(probs[i]),
			BlockMetadata: map[string]any{"passage_id": p.ID, "doc_id": p.DocID, "rank": h.Rank,
				"language": passageLanguage(p, lang), "block_type": p.Block()}}
		if p.Source != "" {
			b.BlockMetadata["source"] = p.Source
		}
		if unreranked {
			b.BlockMetadata["rerank"] = rerankSkipped
		}
		if d := formatTime(p.Date); d != "" {
			b.LastEditDate = &d
		}
		out[i] = b
	}
	return out
}

// wikiChatTitle is the passage's title, or its document id for a passage without one:
// WikiChat requires a non-empty document title.
func wikiChatTitle(p corpus.Passage) string {
	if strings.TrimSpace(p.Title) != "" {
		return p.Title
	}
	return p.DocID
}

// wikiChatURL is u when it is an absolute http(s) URL (corpus.WebURL, as every response
// checks), else nil: WikiChat validates the field as a URL, and a corpus may carry relative
// links or other schemes.
func wikiChatURL(u string) *string {
	u, ok := corpus.WebURL(u)
	if !ok {
		return nil
	}
	return &u
}

func wikiChatV1Response(hits []rerank.Hit) WikiChatV1Response {
	probs := softmax(hits)
	r := WikiChatV1Response{Passages: make([]string, len(hits)), PassageIDs: make([]string, len(hits)),
		PassageRanks: make([]int, len(hits)), PassageScores: make([]float64, len(hits)), PassageProbs: probs}
	for i, h := range hits {
		r.Passages[i], r.PassageIDs[i], r.PassageRanks[i], r.PassageScores[i] = h.Text, h.ID, h.Rank, h.Score
	}
	return r
}

// softmax turns the scores of one query's hits into probabilities, shifted by the maximum
// so that large BM25 scores do not overflow exp.
func softmax(hits []rerank.Hit) []float64 {
	out := make([]float64, len(hits))
	if len(hits) == 0 {
		return out
	}
	hi := math.Inf(-1)
	for _, h := range hits {
		hi = math.Max(hi, h.Score)
	}
	var sum float64
	for i, h := range hits {
		out[i] = math.Exp(h.Score - hi)
		sum += out[i]
	}
	for i := range out {
		out[i] /= sum
	}
	return out
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// body strips the title prefix Kairos passages carry ("Title | " or "Title > Section | "),
// since WikiChat clients print document_title and section_title themselves.
func body(p corpus.Passage) string {
	prefix := p.Title + " | "
	if p.Section != "" {
		prefix = p.Title + " > " + p.Section + " | "
	}
	if b, ok := strings.CutPrefix(p.Text, prefix); ok {
		return b
	}
	return p.Text
}
