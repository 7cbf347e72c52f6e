package chattest

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/kairos-rag/kairos/chat"
	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/corpus/timex"
	"github.com/kairos-rag/kairos/internal/sharedtest"
	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/search"
)

// Retriever is an in-memory TF-IDF retriever over real passages, standing in for an index. It
// records every query it receives so tests can check what the pipelines asked for.
type Retriever struct {
	passages []corpus.Passage
	postings map[string][]posting // word -> passages containing it
	mu       sync.Mutex
	queries  []rerank.Query
}

var _ chat.Retriever = (*Retriever)(nil)

// NewRetriever indexes passages.
func NewRetriever(passages []corpus.Passage) *Retriever {
	r := &Retriever{passages: passages, postings: map[string][]posting{}}
	for i, p := range passages {
		tf := map[string]int{}
		for _, w := range chat.Words(p.Text) {
			tf[w]++
		}
		for w, c := range tf {
			r.postings[w] = append(r.postings[w], posting{i, c})
		}
	}
	return r
}

type posting struct{ doc, tf int }

// Queries returns the queries received so far.
func (r *Retriever) Queries() []rerank.Query {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.queries)
}

// Retrieve scores every passage by summed TF-IDF of the query words.
func (r *Retriever) Retrieve(ctx context.Context, q rerank.Query) (rerank.Result, error) {
	if err := ctx.Err(); err != nil {
		return rerank.Result{}, err
	}
	r.mu.Lock()
	r.queries = append(r.queries, q)
	r.mu.Unlock()
	k := q.K
	if k == 0 {
		k = search.DefaultK
	}
	n := float64(len(r.passages))
	type scored struct {
		i int
		s float64
	}
	acc := map[int]float64{}
	for _, w := range chat.Words(q.Text) {
		ps := r.postings[w]
		idf := math.Log(1 + n/float64(max(1, len(ps))))
		for _, p := range ps {
			acc[p.doc] += (1 + math.Log(float64(p.tf))) * idf
		}
	}
	hits := make([]scored, 0, len(acc))
	for i, s := range acc {
		hits = append(hits, scored{i, s})
	}
	sort.Slice(hits, func(a, b int) bool {
		if hits[a].s != hits[b].s {
			return hits[a].s > hits[b].s
		}
		return hits[a].i < hits[b].i
	})
	res := rerank.Result{Time: q.Time}
	if res.Time.Kind == timex.KindAuto {
		res.Time = timex.Spec{Kind: timex.KindNone}
	}
	for rank, h := range hits[:min(k, len(hits))] {
		res.Hits = append(res.Hits, rerank.Hit{Hit: search.Hit{Passage: r.passages[h.i], Score: h.s, Rank: rank + 1}})
	}
	return res, nil
}

// LoadLeads reads a JSON object of title -> lead text (the wikichat-topics files) into passages
// "Title | lead", cut to maxWords words, skipping leads that are raw wiki markup.
func LoadLeads(path string, maxWords int) ([]corpus.Passage, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	titles := make([]string, 0, len(m))
	for t := range m {
		titles = append(titles, t)
	}
	sort.Strings(titles)
	var out []corpus.Passage
	for _, t := range titles {
		lead := strings.TrimSpace(m[t])
		if lead == "" || strings.HasPrefix(lead, "{{") {
			continue
		}
		words := strings.Fields(t + " | " + lead)
		if len(words) > maxWords {
			words = words[:maxWords]
		}
		out = append(out, corpus.Passage{ID: t + "#0", DocID: t, Title: t, Text: strings.Join(words, " "), Source: path})
	}
	return out, nil
}

// SharedPath locates shared test data (see internal/sharedtest).
func SharedPath(rel string) string { return sharedtest.Join(rel) }

var _ chat.TermStats = (*Retriever)(nil)

// DocFreq counts the passages holding each word (as Words splits them), as an index would.
func (r *Retriever) DocFreq(ctx context.Context, words []string) ([]int, int, error) {
	out := make([]int, len(words))
	for i, w := range words {
		out[i] = len(r.postings[strings.ToLower(w)])
	}
	return out, len(r.passages), nil
}
