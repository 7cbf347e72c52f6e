package search

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer"
)

func shared(t testing.TB, rel string) string {
	t.Helper()
	root := os.Getenv("KAIROS_SHARED")
	if root == "" {
		root = "../../shared"
	}
	p := filepath.Join(root, rel)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("shared data missing (set KAIROS_SHARED or put ../shared beside the repo): %v", err)
	}
	return p
}

// at is the location of a test index: a directory, or a qdrant:// location, read as --index
// reads it.
func at(loc string) indexer.Location {
	l, err := indexer.ParseLocation(loc)
	if err != nil {
		panic(err) // the tests' own locations, never a user's
	}
	return l
}

// buildAt builds the index at loc (indexer.Index.Build).
func buildAt(ctx context.Context, loc indexer.Location, opts indexer.Options) (*indexer.Summary, error) {
	ix, err := indexer.Open(ctx, loc)
	if err != nil {
		return nil, err
	}
	defer ix.Close()
	return ix.Build(ctx, opts)
}

var (
	builtMu sync.Mutex
	built   = map[string]string{}
)

// testIndex builds (once per test binary) an index of one shared input and returns its dir.
func testIndex(t testing.TB, rel string) string {
	t.Helper()
	builtMu.Lock()
	defer builtMu.Unlock()
	if dir, ok := built[rel]; ok {
		return dir
	}
	dir, err := os.MkdirTemp("", "kairos-search-test-")
	if err != nil {
		t.Fatal(err)
	}
	_, err = buildAt(context.Background(), at(dir), indexer.Options{Inputs: []indexer.InputSpec{{Path: shared(t, rel)}}})
	if err != nil {
		t.Fatal(err)
	}
	built[rel] = dir
	return dir
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, dir := range built {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

const (
	scifact = "data/beir-scifact/corpus.jsonl"
	faq     = "data/faq-covid-deepset/faq_covidbert.csv"
)

func openIndex(t testing.TB, rel string, opts Options) *Index {
	t.Helper()
	ix, err := Open(t.Context(), at(testIndex(t, rel)), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

type sciQuery struct {
	ID   string `json:"_id"`
	Text string `json:"text"`
}

func sciFactQueries(t testing.TB) ([]sciQuery, map[string]map[string]float64) {
	f, err := os.Open(shared(t, "data/beir-scifact/queries.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var qs []sciQuery
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var q sciQuery
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			t.Fatal(err)
		}
		qs = append(qs, q)
	}
	qrels := map[string]map[string]float64{}
	b, err := os.ReadFile(shared(t, "data/beir-scifact/qrels/train.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
		c := strings.Split(line, "\t")
		if qrels[c[0]] == nil {
			qrels[c[0]] = map[string]float64{}
		}
		qrels[c[0]][c[1]] = 1
	}
	return qs, qrels
}

// TestSciFactQuality guards retrieval quality: nDCG@10 on the SciFact train qrels with the
// default options, and that document evidence helps (it is on by default for that reason).
func TestSciFactQuality(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: nDCG@10 over every SciFact train query")
	}
	qs, qrels := sciFactQueries(t)
	run := func(opts Options) MetricsResult {
		ix := openIndex(t, scifact, opts)
		var m Metrics
		for _, q := range qs {
			gain, ok := qrels[q.ID]
			if !ok {
				continue
			}
			hits, err := ix.Search(context.Background(), Request{Text: q.Text, K: 100})
			if err != nil {
				t.Fatal(err)
			}
			m.Add(RankDocuments(hits, false), gain, 0)
		}
		return m.Result()
	}
	def := run(Options{})
	plain := run(Options{DocEvidence: -1})
	t.Logf("SciFact train: nDCG@10 %.4f (no doc evidence %.4f), R@100 %.4f, %d queries", def.NDCG, plain.NDCG, def.R100, def.Queries)
	if def.Queries != 809 {
		t.Errorf("%d judged queries, want 809", def.Queries)
	}
	if def.NDCG < 0.69 || def.R100 < 0.90 {
		t.Errorf("nDCG@10 %.4f, R@100 %.4f: want >= 0.69 and >= 0.90", def.NDCG, def.R100)
	}
	if def.NDCG <= plain.NDCG {
		t.Errorf("document evidence does not help: %.4f vs %.4f", def.NDCG, plain.NDCG)
	}
}

func TestHitsWellFormed(t *testing.T) {
	ix := openIndex(t, scifact, Options{})
	hits, err := ix.Search(context.Background(), Request{Text: "vitamin D deficiency and bone density", K: 20})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 20 {
		t.Fatalf("%d hits, want 20", len(hits))
	}
	for i, h := range hits {
		if h.Rank != i+1 || h.ID == "" || h.DocID == "" || !strings.HasPrefix(h.ID, h.DocID+"#") || h.Text == "" {
			t.Errorf("hit %d malformed: %+v", i, h)
		}
		if i > 0 && h.Score > hits[i-1].Score {
			t.Errorf("hits not sorted at %d: %f > %f", i, h.Score, hits[i-1].Score)
		}
	}
	if !strings.Contains(strings.ToLower(hits[0].Text), "vitamin d") {
		t.Errorf("top hit does not mention vitamin D: %q", hits[0].Text)
	}
	// Only stop words: no hits, no error.
	if hits, err := ix.Search(context.Background(), Request{Text: "the of and", K: DefaultK}); err != nil || len(hits) != 0 {
		t.Errorf("stop-word query: %d hits, %v", len(hits), err)
	}
	// k is required: 0 or negative is refused, as the request parser refuses it, never
	// silently turned into DefaultK.
	for _, k := range []int{0, -1} {
		if _, err := ix.Search(context.Background(), Request{Text: "vitamin d", K: k}); err == nil || !strings.Contains(err.Error(), "want at least 1") {
			t.Errorf("k %d: %v, want a refusal", k, err)
		}
	}
	if _, err := ix.Search(context.Background(), Request{Text: "x", K: DefaultK, Mode: ModeDense}); err == nil {
		t.Error("dense search on a BM25-only index succeeded")
	}
}

func TestFilters(t *testing.T) {
	ix := openIndex(t, faq, Options{})
	day := func(s string) time.Time { d, _ := time.Parse("2006-01-02", s); return d }
	all, err := ix.Search(context.Background(), Request{Text: "coronavirus symptoms", K: 300})
	if err != nil || len(all) < 50 {
		t.Fatalf("%d hits, %v", len(all), err)
	}
	dates := map[string]int{}
	for _, h := range all {
		dates[h.Date.Format("2006-01-02")]++
	}
	var days []string
	for d := range dates {
		days = append(days, d)
	}
	sort.Strings(days)
	if len(days) < 2 {
		t.Fatalf("FAQ hits span %v: need two dates to test the filter", days)
	}
	first, last := days[0], days[len(days)-1]
	tests := []struct {
		name    string
		filters Filters
		ok      func(Hit) bool
		want    int // exact number of hits
	}{
		{"from", Filters{DateFrom: day(last)}, func(h Hit) bool { return !h.Date.Before(day(last)) }, dates[last]},
		{"to", Filters{DateTo: day(first)}, func(h Hit) bool { return !h.Date.After(day(first)) }, dates[first]},
		{"source", Filters{Sources: []string{"faq_covidbert"}}, func(h Hit) bool { return h.Source == "faq_covidbert" }, len(all)},
		{"no such source", Filters{Sources: []string{"nope"}}, nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hits, err := ix.Search(context.Background(), Request{Text: "coronavirus symptoms", K: 300, Filters: tc.filters})
			if err != nil {
				t.Fatal(err)
			}
			if tc.want >= 0 && len(hits) != tc.want {
				t.Fatalf("%d hits, want %d", len(hits), tc.want)
			}
			for _, h := range hits {
				if !tc.ok(h) {
					t.Errorf("hit %s (%s, %s) violates the filter", h.ID, h.Date, h.Source)
				}
			}
		})
	}
}

func TestPassageLookup(t *testing.T) {
	ix := openIndex(t, faq, Options{})
	p, err := ix.Passage(context.Background(), "1#0")
	if err != nil || p.DocID != "1" || !strings.HasPrefix(p.Text, "What is a novel coronavirus? | ") {
		t.Fatalf("Passage(1#0) = %+v, %v", p, err)
	}
	if _, err := ix.Passage(context.Background(), "nope#0"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown id: %v, want ErrNotFound", err)
	}
	st := ix.Stats()
	if st.Documents != 213 || st.Passages < 213 || st.Sources["faq_covidbert"] != st.Passages || st.DateFrom.IsZero() {
		t.Fatalf("stats %+v", st)
	}
}

// Concurrent searches share one Index (run with -race).
func TestConcurrentSearch(t *testing.T) {
	ix := openIndex(t, faq, Options{})
	want, _ := ix.Search(context.Background(), Request{Text: "how does the virus spread", K: 5})
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				got, err := ix.Search(context.Background(), Request{Text: "how does the virus spread", K: 5})
				if err != nil || len(got) != len(want) || got[0].ID != want[0].ID {
					t.Errorf("concurrent search differs: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func ExampleIndex_Search() {
	dir, _ := os.MkdirTemp("", "kairos-example-")
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, "docs.jsonl")
	os.WriteFile(src, []byte(`{"_id":"a","title":"Albedo","text":"Albedo is the fraction of sunlight that a surface reflects. Fresh snow has a high albedo."}
{"_id":"b","title":"Anarchism","text":"Anarchism is a political philosophy that rejects involuntary rule."}
`), 0o644)
	_, err := buildAt(context.Background(), at(filepath.Join(dir, "idx")), indexer.Options{Inputs: []indexer.InputSpec{{Path: src, Options: corpus.Options{}}}})
	if err != nil {
		panic(err)
	}
	ix, err := Open(context.Background(), at(filepath.Join(dir, "idx")), Options{})
	if err != nil {
		panic(err)
	}
	defer ix.Close()
	hits, _ := ix.Search(context.Background(), Request{Text: "how much light does snow reflect", K: 1})
	for _, h := range hits {
		os.Stdout.WriteString(h.ID + " " + h.Text + "\n")
	}
	// Output: a#0 Albedo | Albedo is the fraction of sunlight that a surface reflects. Fresh snow has a high albedo.
}

// TestPerDocFillsK: a search capped per document fills its k from the documents further down
// when a long document's passages take the whole of the first window, in every mode.
func TestPerDocFillsK(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "docs.jsonl")
	var b strings.Builder
	long := make([]string, 40)
	for i := range long {
		long[i] = fmt.Sprintf("Zebra zebra zebra herd %d grazes on the savanna grass.", i)
	}
	fmt.Fprintf(&b, "%s\n", jsonLine(t, map[string]string{"_id": "long", "title": "Zebras", "text": strings.Join(long, "\n\n")}))
	for i := range 12 {
		fmt.Fprintf(&b, "%s\n", jsonLine(t, map[string]string{"_id": fmt.Sprintf("d%02d", i), "title": fmt.Sprintf("Place %d", i),
			"text": fmt.Sprintf("A zebra was once seen near town number %d, far from the others.", i)}))
	}
	if err := os.WriteFile(src, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	idx := filepath.Join(dir, "idx")
	if _, err := buildAt(t.Context(), at(idx), indexer.Options{Inputs: []indexer.InputSpec{{Path: src}}, EmbedInline: true, Encoder: bow,
		Build: indexer.BuildOptions{MaxWords: 16}}); err != nil {
		t.Fatal(err)
	}
	ix, err := Open(t.Context(), at(idx), Options{Encoder: bow})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	for _, mode := range []Mode{ModeBM25, ModeDense, ModeHybrid} {
		hits, err := ix.Search(t.Context(), Request{Text: "zebra zebra herd", K: 10, PerDoc: 1, Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		docs := map[string]bool{}
		for _, h := range hits {
			docs[h.DocID] = true
		}
		if len(hits) != 10 || len(docs) != 10 {
			t.Errorf("%s: %d hits of %d documents, want 10 of 10 (13 match)", mode, len(hits), len(docs))
		}
	}
}

// jsonLine is v as one line of JSON.
func jsonLine(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestPerDoc(t *testing.T) {
	ix := openIndex(t, scifact, Options{})
	for _, per := range []int{0, 1, 2} {
		hits, err := ix.Search(context.Background(), Request{Text: "vitamin D deficiency and bone density", K: 30, PerDoc: per})
		if err != nil || len(hits) != 30 {
			t.Fatalf("PerDoc %d: %d hits, %v", per, len(hits), err)
		}
		count := map[string]int{}
		most := 0
		for i, h := range hits {
			count[h.DocID]++
			most = max(most, count[h.DocID])
			if h.Rank != i+1 {
				t.Errorf("PerDoc %d: rank %d at %d", per, h.Rank, i)
			}
		}
		if per > 0 && most > per || per == 0 && most < 2 {
			t.Errorf("PerDoc %d: a document has %d passages", per, most)
		}
	}
}
