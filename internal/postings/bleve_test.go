package postings_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2/analysis"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer"
	"github.com/kairos-rag/kairos/internal/postings"
	"github.com/kairos-rag/kairos/internal/sharedtest"
	"github.com/kairos-rag/kairos/search"
)

// twin is one collection indexed twice: by Kairos's indexer (bleve, searched through
// search.Index in mode bm25, which is what Kairos answers today) and into a postings
// segment built from the same stored passages and the same analyzer.
type twin struct {
	bleve    *search.Index
	searcher *postings.Searcher
	scoring  postings.Scoring
	analyzer analysis.Analyzer
	keyOf    map[string]uint32 // passage id -> key
}

func buildTwin(tb testing.TB, inputs []indexer.InputSpec) *twin {
	tb.Helper()
	ctx := context.Background()
	dir := filepath.Join(tb.TempDir(), "index")
	index, err := indexer.Open(ctx, indexer.Location{Dir: dir})
	if err != nil {
		tb.Fatal(err)
	}
	defer index.Close()
	if _, err := index.Build(ctx, indexer.Options{Inputs: inputs}); err != nil {
		tb.Fatal(err)
	}
	ix, err := search.Open(ctx, indexer.Location{Dir: dir}, search.Options{DocEvidence: -1}) // plain BM25 scores
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ix.Close() })
	gen, err := index.Reader(ctx, indexer.ReadOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	defer gen.Close()
	an, err := gen.Manifest.TextAnalyzer()
	if err != nil {
		tb.Fatal(err)
	}
	segPath := filepath.Join(tb.TempDir(), "bm25.kpst")
	b, err := postings.NewBuilder(segPath, postings.BuilderOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	keyOf := map[string]uint32{}
	err = gen.Passages.Each(ctx, func(key uint32, p corpus.Passage) error { // live passages only
		keyOf[p.ID] = key
		toks := an.Analyze([]byte(p.Text))
		terms := make([]string, len(toks))
		for i, t := range toks {
			terms[i] = string(t.Term)
		}
		return b.Add(key, terms)
	})
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := b.Finish(ctx); err != nil {
		tb.Fatal(err)
	}
	seg, err := postings.Open(segPath, postings.OpenOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { seg.Close() })
	x, err := postings.NewSearcher([]*postings.Segment{seg}, postings.SearcherOptions{Workers: 1})
	if err != nil {
		tb.Fatal(err)
	}
	st := gen.Manifest.BM25
	return &twin{bleve: ix, searcher: x, analyzer: an, keyOf: keyOf,
		scoring: postings.Scoring{K1: search.BM25K1, B: search.BM25B, Docs: int64(st.Docs), Tokens: st.Tokens}}
}

// terms analyses a query as search does: each term once, in query order.
func (tw *twin) terms(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range tw.analyzer.Analyze([]byte(text)) {
		if s := string(t.Term); !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func (tw *twin) bleveHits(tb testing.TB, text string, k int) []postings.Hit {
	tb.Helper()
	hits, err := tw.bleve.Search(context.Background(), search.Request{Text: text, K: k, Mode: search.ModeBM25})
	if err != nil {
		tb.Fatal(err)
	}
	out := make([]postings.Hit, len(hits))
	for i, h := range hits {
		key, ok := tw.keyOf[h.ID]
		if !ok {
			tb.Fatalf("bleve hit %q is not a stored passage", h.ID)
		}
		out[i] = postings.Hit{Key: key, Score: h.Score}
	}
	return out
}

func (tw *twin) postingsHits(tb testing.TB, text string, k int) []postings.Hit {
	tb.Helper()
	terms := tw.terms(text)
	if len(terms) == 0 {
		return []postings.Hit{}
	}
	hits, err := tw.searcher.Search(context.Background(), postings.Query{Terms: terms, K: k}, tw.scoring)
	if err != nil {
		tb.Fatal(err)
	}
	return hits
}

// compare checks identical keys in identical order and scores within 1e-9 relative, and
// returns how many scores were equal to the bit.
//
// One exception, for queries of more than ten terms only (bleve's heap disjunction): there
// bleve sums a passage's term scores in the order its heap pops them, which follows the
// history of the whole traversal, so passages whose scores are equal in real arithmetic can
// come out a unit in the last place apart and bleve ranks them by that noise. This package
// sums in query order and ranks such passages by key (search/ties.go). For those queries, hits
// whose bleve scores agree within 1e-12 relative form a tie group: the group must hold the
// same keys (a group cut by k, the same scores), each side within 1e-9 of bleve's score.
func compare(t *testing.T, tw *twin, queries []string, k int) (hits, exact, regrouped int) {
	t.Helper()
	for qi, text := range queries {
		want := tw.bleveHits(t, text, k)
		got := tw.postingsHits(t, text, k)
		fail := func(i int, why string) {
			t.Fatalf("query %d %q rank %d: %s\n got %v\nwant %v", qi, text, i+1, why, got, want)
		}
		if len(got) != len(want) {
			fail(0, fmt.Sprintf("%d hits, bleve %d", len(got), len(want)))
		}
		heapOrder := len(tw.terms(text)) > 10
		for i := 0; i < len(want); {
			j := i + 1
			for j < len(want) && math.Abs(want[j].Score-want[i].Score) <= 1e-12*want[i].Score {
				j++
			}
			same := true
			for r := i; r < j; r++ {
				same = same && got[r].Key == want[r].Key
				if math.Abs(got[r].Score-want[r].Score) > 1e-9*math.Abs(want[r].Score) {
					fail(r, fmt.Sprintf("score %.17g, bleve %.17g", got[r].Score, want[r].Score))
				}
				hits++
				if got[r].Score == want[r].Score {
					exact++
				}
			}
			if !same {
				if !heapOrder {
					fail(i, "keys differ")
				}
				if j < len(want) { // a whole group: the same keys
					in := map[uint32]bool{}
					for r := i; r < j; r++ {
						in[want[r].Key] = true
					}
					for r := i; r < j; r++ {
						if !in[got[r].Key] {
							fail(r, "key outside bleve's tie group")
						}
					}
				}
				regrouped++
			}
			i = j
		}
	}
	return hits, exact, regrouped
}

func sciFactQueries(tb testing.TB) []string {
	f, err := os.Open(sharedtest.Path(tb, "data/beir-scifact/queries.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		var q struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			tb.Fatalf("queries.jsonl line %d: %v", line, err)
		}
		out = append(out, q.Text)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// writeZipfCorpus writes n synthetic documents (BEIR JSONL) whose words follow a Zipf law
// over a vocabulary of letters-only words, with lengths that the splitter cuts into one to
// three passages, and returns queries drawn from the same law.
func writeZipfCorpus(tb testing.TB, seed int64, n, vocab, queries int) (string, []string) {
	r := rand.New(rand.NewSource(seed))
	z := rand.NewZipf(r, 1.07, 2, uint64(vocab-1))
	word := func(rank uint64) string {
		var b strings.Builder
		b.WriteString("zq")
		for rank > 0 || b.Len() == 2 {
			b.WriteByte(byte('a' + rank%26))
			rank /= 26
		}
		return b.String()
	}
	path := filepath.Join(tb.TempDir(), "zipf.jsonl")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for i := 0; i < n; i++ {
		words := make([]string, 5+r.Intn(300))
		for j := range words {
			words[j] = word(z.Uint64())
		}
		rec, _ := json.Marshal(map[string]string{"_id": "z" + strconv.Itoa(i), "title": word(z.Uint64()), "text": strings.Join(words, " ")})
		w.Write(append(rec, '\n'))
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	qs := make([]string, queries)
	for i := range qs {
		words := make([]string, 1+r.Intn(12))
		for j := range words {
			if r.Intn(3) == 0 {
				words[j] = word(uint64(r.Intn(vocab)))
			} else {
				words[j] = word(z.Uint64())
			}
		}
		qs[i] = strings.Join(words, " ")
	}
	return path, qs
}

// TestScoresEqualBleve is the ranking-equality test of issue 10: identical top 10 (keys
// and order) and scores within 1e-9 relative to what Kairos's bleve search returns, for every
// SciFact query and for a synthetic Zipf collection.
func TestScoresEqualBleve(t *testing.T) {
	zipfPath, zipfQueries := writeZipfCorpus(t, 7, 4000, 20000, 500)
	tests := []struct {
		name    string
		input   string
		queries func() []string
		k       int
	}{
		{"scifact", sharedtest.Path(t, "data/beir-scifact/corpus.jsonl"), func() []string { return sciFactQueries(t) }, 10},
		{"zipf", zipfPath, func() []string { return zipfQueries }, 10},
		{"zipf k100", zipfPath, func() []string { return zipfQueries[:100] }, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tw := buildTwin(t, []indexer.InputSpec{{Path: tt.input}})
			qs := tt.queries()
			hits, exact, regrouped := compare(t, tw, qs, tt.k)
			if hits < len(qs) {
				t.Fatalf("only %d hits for %d queries: the comparison compared almost nothing", hits, len(qs))
			}
			// Only queries of more than ten terms may regroup (compare fails the others): bleve
			// sums their terms in its heap's order, which follows its segment layout, and that
			// varies from one build to the next, so the last bit, and with it the order of
			// scores equal to 1e-12, is not reproducible from bleve itself (seen: 0 or 1 group
			// of the top 10 in 500 Zipf queries across builds). Many would mean a real bug.
			if tt.k == 10 && regrouped > len(qs)/100 {
				t.Fatalf("%d tie groups of the top 10 ordered differently (at most %d expected)", regrouped, len(qs)/100)
			}
			t.Logf("%d queries, %d hits: %d scores equal to the bit, the rest within 1e-9; %d tie groups of >10-term queries ordered by key where bleve's rounding split them", len(qs), hits, exact, regrouped)
		})
	}
}
