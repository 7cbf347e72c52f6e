package server

import (
	"bytes"
	"encoding/json"

	"github.com/kairos-rag/kairos/internal/langanalysis"
	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/search"
)

// WikiChat 2.0's retriever API, served on POST /v2/search (give WikiChat 2.0
// --retriever_endpoint http://HOST:PORT/v2/search). Its client (pipelines/retriever.py)
// posts {"query": [...], "num_blocks": k, "languages": [...]} and reads, for each query, a
// dict of parallel lists, best first.

// WikiChatV20Request is WikiChat 2.0's request: 2.1's fields, plus "languages", the
// languages to search in (a string or a list; absent or empty: any).
type WikiChatV20Request struct {
	WikiChatRequest
	Languages json.RawMessage `json:"languages"`
}

// WikiChatV20Result is the answer to one query: parallel lists, one entry per block.
type WikiChatV20Result struct {
	Text             []string  `json:"text"`               // the passage body, title prefix removed
	Title            []string  `json:"title"`              // never empty: the document id stands in
	FullSectionTitle []string  `json:"full_section_title"` // "Title > Section", or the title
	BlockType        []string  `json:"block_type"`         // text, table or infobox (corpus.BlockTypes)
	Language         []string  `json:"language"`           // the index's language
	Prob             []float64 `json:"prob"`               // softmax over the query's scores
	Score            []float64 `json:"score"`              // the retrieval score
	LastEditDate     []*string `json:"last_edit_date"`     // RFC 3339, null when unknown
}

func decodeWikiChatV20(body []byte, o Options) (wikiChatParsed, error) {
	var req WikiChatV20Request
	if err := decodeStrict(body, &req); err != nil {
		return wikiChatParsed{}, err
	}
	langs, err := wikiChatLanguages(req.Languages)
	if err != nil {
		return wikiChatParsed{}, err
	}
	var extra search.Filters
	if len(langs) > 0 && o.Language == "" {
		// A multilingual index: search keeps these and analyses the query in each.
		for _, l := range langs {
			extra.Languages = append(extra.Languages, langanalysis.Normalize(l))
		}
	} else if len(langs) > 0 && !containsLanguage(langs, o.Language) {
		extra.None = true // every passage is in the index's language, which was not asked for
	}
	qs, err := wikiChatQueriesOf(req.WikiChatRequest, extra, o)
	return wikiChatParsed{qs: qs, shape: shapeV20, unreranked: req.Rerank && len(o.WikiChatRerank) == 0}, err
}

// wikiChatLanguages reads "languages": absent, null, a string, or a list of strings.
func wikiChatLanguages(raw json.RawMessage) ([]string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, badRequest(`"languages": want a string or a list of strings`)
	}
	return many, nil
}

func wikiChatV20Result(hits []rerank.Hit, lang string) WikiChatV20Result {
	n := len(hits)
	r := WikiChatV20Result{Text: make([]string, n), Title: make([]string, n), FullSectionTitle: make([]string, n),
		BlockType: make([]string, n), Language: make([]string, n), Prob: softmax(hits), Score: make([]float64, n),
		LastEditDate: make([]*string, n)}
	for i, h := range hits {
		p := h.Passage
		title := wikiChatTitle(p)
		r.Text[i], r.Title[i], r.FullSectionTitle[i] = body(p), title, title
		if p.Section != "" {
			r.FullSectionTitle[i] = title + " > " + p.Section
		}
		r.BlockType[i], r.Language[i], r.Score[i] = p.Block(), passageLanguage(p, lang), h.Score
		if d := formatTime(p.Date); d != "" {
			r.LastEditDate[i] = &d
		}
	}
	return r
}
