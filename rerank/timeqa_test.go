package rerank

// TimeQA evaluation of the rerankers: BM25 top 50, time auto from the question, R@1, R@5 and
// MRR@10 of the gold paragraph, on the human-annotated train split and its two halves (pages
// at even positions = "a", odd = "b"; `kairos dataset timeqa --split` writes the same halves).
//
// Retrieval is Kairos's BM25 index when KAIROS_TIMEQA_INDEX names one built from
// `kairos dataset timeqa` output; otherwise a plain in-test Okapi BM25 (k1 1.2, b 0.75) over
// the same pooled "Title | paragraph" passages, so the test runs anywhere the shared data is.
// KAIROS_TUNE=1 adds a grid search over the options on half a and prints the best settings.

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/corpus/timex"
	"github.com/kairos-rag/kairos/indexer"
	"github.com/kairos-rag/kairos/internal/sharedtest"
	"github.com/kairos-rag/kairos/search"
)

type tqQuestion struct {
	text  string
	gold  map[string]bool // document ids "<page>/p<i>"
	split string
	cands []search.Hit // retrieval top 50
}

type tqParagraph struct{ id, title, text string }

func loadTimeQA(t testing.TB) ([]tqParagraph, []*tqQuestion) {
	data, err := os.ReadFile(sharedtest.Path(t, "data/timeqa/human_annotated_train.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pages []struct {
		Link      string              `json:"link"`
		Paras     []string            `json:"paras"`
		Questions [][]json.RawMessage `json:"questions"`
	}
	if err := json.Unmarshal(data, &pages); err != nil {
		t.Fatal(err)
	}
	var paras []tqParagraph
	var qs []*tqQuestion
	seen := map[string]bool{}
	for pi, p := range pages {
		name := strings.TrimPrefix(p.Link, "/wiki/")
		id := func(i int) string { return name + "/p" + strconv.Itoa(i) }
		if !seen[name] {
			seen[name] = true
			for i, s := range p.Paras {
				if strings.TrimSpace(s) != "" {
					paras = append(paras, tqParagraph{id(i), strings.ReplaceAll(name, "_", " "), s})
				}
			}
		}
		for _, q := range p.Questions {
			var text string
			var golds []struct{ Para int }
			if json.Unmarshal(q[0], &text) != nil || json.Unmarshal(q[1], &golds) != nil {
				t.Fatalf("page %d: bad question", pi)
			}
			g := map[string]bool{}
			for _, a := range golds {
				g[id(a.Para)] = true
			}
			qs = append(qs, &tqQuestion{text: text, gold: g, split: map[bool]string{true: "a", false: "b"}[pi%2 == 0]})
		}
	}
	return paras, qs
}

// retrieve fills each question's top-50 candidates, with Years extracted from the passage
// text when the index did not store them.
func retrieve(t testing.TB, paras []tqParagraph, qs []*tqQuestion) (string, Searcher) {
	var s Searcher
	name := "in-test BM25"
	if dir := os.Getenv("KAIROS_TIMEQA_INDEX"); dir != "" {
		ix, err := search.Open(t.Context(), indexer.Location{Dir: dir}, search.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
		s, name = ix, "Kairos BM25 index "+dir
	} else {
		s = newTestBM25(paras)
	}
	s = withYears{s}
	for _, q := range qs {
		hits, err := s.Search(context.Background(), search.Request{Text: q.text, K: DefaultCandidates, Mode: search.ModeBM25})
		if err != nil {
			t.Fatal(err)
		}
		q.cands = hits
	}
	return name, s
}

// withYears extracts the years of passages whose index did not store them (indexes built
// before the indexer called timex.Extract).
type withYears struct{ Searcher }

func (w withYears) Search(ctx context.Context, req search.Request) ([]search.Hit, error) {
	hits, err := w.Searcher.Search(ctx, req)
	for i := range hits {
		if hits[i].Years == nil {
			hits[i].Years = timex.Extract(hits[i].Text)
		}
	}
	return hits, err
}

type metrics struct{ r1, r5, mrr float64 }

func (m metrics) String() string {
	return fmt.Sprintf("R@1 %.3f  R@5 %.3f  MRR@10 %.3f", m.r1, m.r5, m.mrr)
}

// evaluate reranks every question of split with rerank (nil: retrieval order).
func evaluate(qs []*tqQuestion, split string, rerank func(hits []Hit, spec timex.Spec)) metrics {
	var m metrics
	n := 0
	for _, q := range qs {
		if split != "" && q.split != split {
			continue
		}
		n++
		hits := newCandidates(q.cands)
		if rerank != nil {
			rerank(hits, timex.Spec{Kind: timex.KindAuto}.Resolve(q.text, timeQANow))
		}
		for i, h := range hits {
			if !q.gold[h.DocID] {
				continue
			}
			if i == 0 {
				m.r1++
			}
			if i < 5 {
				m.r5++
			}
			if i < 10 {
				m.mrr += 1 / float64(i+1)
			}
			break
		}
	}
	return metrics{m.r1 / float64(n), m.r5 / float64(n), m.mrr / float64(n)}
}

var timeQANow = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestTimeQA(t *testing.T) {
	if testing.Short() {
		t.Skip("TimeQA evaluation skipped in -short mode")
	}
	paras, qs := loadTimeQA(t)
	name, searcher := retrieve(t, paras, qs)
	o := DefaultOptions()
	o.Now = timeQANow
	stages := []struct {
		name string
		fn   func([]Hit, timex.Spec)
	}{
		{"bm25", nil},
		{"wikichat", func(h []Hit, s timex.Spec) { WikiChatSort(h, s, false) }},
		{"time", func(h []Hit, s timex.Spec) { TimeRerank(h, s, o, false) }},
	}
	t.Logf("retrieval: %s, top %d; %d paragraphs, %d questions", name, DefaultCandidates, len(paras), len(qs))
	res := map[string]metrics{}
	for _, split := range []string{"a", "b", ""} {
		for _, st := range stages {
			m := evaluate(qs, split, st.fn)
			res[split+st.name] = m
			t.Logf("split %-3s %-9s %v", cmp.Or(split, "all"), st.name, m)
		}
	}
	// The Retriever path (retrieve 50, resolve auto, rerank, cut to 10) gives the same figures.
	eng, err := NewRetriever(searcher, RetrieverOptions{Time: o})
	if err != nil {
		t.Fatal(err)
	}
	var viaRetriever metrics
	for _, q := range qs {
		res, err := eng.Search(context.Background(), Query{Request: search.Request{Text: q.text, K: 10, Mode: search.ModeBM25},
			Time: timex.Spec{Kind: timex.KindAuto}, Rerank: []Stage{StageTime}})
		if err != nil {
			t.Fatal(err)
		}
		for i, h := range res.Hits {
			if q.gold[h.DocID] {
				viaRetriever.r1 += b2f(i == 0)
				viaRetriever.r5 += b2f(i < 5)
				viaRetriever.mrr += 1 / float64(i+1)
				break
			}
		}
	}
	n := float64(len(qs))
	viaRetriever = metrics{viaRetriever.r1 / n, viaRetriever.r5 / n, viaRetriever.mrr / n}
	if d := math.Abs(viaRetriever.mrr - res["time"].mrr); d > 1e-9 || viaRetriever.r1 != res["time"].r1 {
		t.Errorf("Retriever.Search gives %v, TimeRerank over the same candidates %v", viaRetriever, res["time"])
	}

	// The defaults must beat both baselines on every metric over all questions. This is the
	// set they were tuned on (a regression check); the held-out estimate is the two-fold run
	// of tune, logged with KAIROS_TUNE=1.
	tm, bm, wc := res["time"], res["bm25"], res["wikichat"]
	if !(tm.r1 > bm.r1 && tm.r1 > wc.r1 && tm.r5 > bm.r5 && tm.r5 > wc.r5 && tm.mrr > bm.mrr && tm.mrr > wc.mrr) {
		t.Errorf("all questions: time %v does not beat bm25 %v and wikichat %v", tm, bm, wc)
	}

	if os.Getenv("KAIROS_TUNE") != "" {
		tune(t, qs)
	}
}

// tune grid-searches the options on one half and logs the best settings with their scores on
// the other half, both ways (two-fold cross-validation: the held-out estimate of the tuning
// procedure), then on all questions (where DefaultOptions come from). The objective is
// R@1 + R@5 + MRR@10; the bar is to beat BM25 and the WikiChat sort on all three.
func tune(t *testing.T, qs []*tqQuestion) {
	type row struct {
		o         Options
		tun, held metrics
	}
	score := func(m metrics) float64 { return m.r1 + m.r5 + m.mrr }
	for _, fold := range [][2]string{{"a", "b"}, {"b", "a"}, {"", ""}} {
		var rows []row
		for _, norm := range []Normalization{NormMinMax, NormRank} {
			for _, w := range []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6} {
				for _, decay := range []float64{1, 2, 4} {
					for _, sw := range []float64{0.5, 1, 2, 4} {
						for _, cs := range []float64{0, 0.5} {
							for _, fw := range []float64{0, 0.5} {
								for _, ny := range []float64{0, 0.2, 0.4} {
									o := Options{Weight: w, Normalize: norm, DecayYears: decay, StartWeight: sw, CoverShare: cs, FocusWeight: fw, NoYearScore: ny, RecentHalfLifeYears: 3, Now: timeQANow}
									m := evaluate(qs, fold[0], func(h []Hit, s timex.Spec) { TimeRerank(h, s, o, false) })
									rows = append(rows, row{o: o, tun: m})
								}
							}
						}
					}
				}
			}
		}
		slices.SortFunc(rows, func(x, y row) int { return cmp.Compare(score(y.tun), score(x.tun)) })
		t.Logf("tune on %s, hold out %s: bm25 %v, wikichat %v on %s", cmp.Or(fold[0], "all"), cmp.Or(fold[1], "none"),
			evaluate(qs, fold[1], nil), evaluate(qs, fold[1], func(h []Hit, s timex.Spec) { WikiChatSort(h, s, false) }), cmp.Or(fold[1], "all"))
		for i := range min(8, len(rows)) {
			r := &rows[i]
			r.held = evaluate(qs, fold[1], func(h []Hit, s timex.Spec) { TimeRerank(h, s, r.o, false) })
			t.Logf("%s w=%.1f decay=%.1f start=%.1f cover=%.1f focus=%.1f noyear=%.1f | %s %v | %s %v",
				r.o.Normalize, r.o.Weight, r.o.DecayYears, r.o.StartWeight, r.o.CoverShare, r.o.FocusWeight, r.o.NoYearScore, cmp.Or(fold[0], "all"), r.tun, cmp.Or(fold[1], "all"), r.held)
		}
	}
}

// testBM25 is a minimal Okapi BM25 over the pooled passages, for running without an index.
type testBM25 struct {
	docs   []corpus.Passage
	post   map[string][]posting
	lens   []float64
	avgLen float64
}

type posting struct {
	doc int32
	tf  float32
}

func bm25Terms(s string) []string {
	f := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	out := f[:0]
	for _, w := range f {
		switch w {
		case "the", "a", "an", "of", "in", "to", "and", "or", "for", "on", "at", "by", "with", "from", "was", "is", "what", "which", "who", "did":
			continue
		}
		out = append(out, w)
	}
	return out
}

func newTestBM25(paras []tqParagraph) *testBM25 {
	ix := &testBM25{post: map[string][]posting{}}
	var total float64
	for i, p := range paras {
		text := p.title + " | " + p.text
		ix.docs = append(ix.docs, corpus.Passage{ID: p.id + "#0", DocID: p.id, Title: p.title, Text: text})
		tf := map[string]int{}
		terms := bm25Terms(text)
		for _, w := range terms {
			tf[w]++
		}
		for w, c := range tf {
			ix.post[w] = append(ix.post[w], posting{int32(i), float32(c)})
		}
		ix.lens = append(ix.lens, float64(len(terms)))
		total += float64(len(terms))
	}
	ix.avgLen = total / float64(len(paras))
	return ix
}

func (ix *testBM25) Search(ctx context.Context, req search.Request) ([]search.Hit, error) {
	const k1, b = 1.2, 0.75
	scores := map[int32]float64{}
	n := float64(len(ix.docs))
	for _, w := range bm25Terms(req.Text) {
		ps := ix.post[w]
		idf := math.Log(1 + (n-float64(len(ps))+0.5)/(float64(len(ps))+0.5))
		for _, p := range ps {
			tf := float64(p.tf)
			scores[p.doc] += idf * tf * (k1 + 1) / (tf + k1*(1-b+b*ix.lens[p.doc]/ix.avgLen))
		}
	}
	hits := make([]search.Hit, 0, len(scores))
	for d, s := range scores {
		hits = append(hits, search.Hit{Passage: ix.docs[d], Score: s})
	}
	slices.SortFunc(hits, func(x, y search.Hit) int {
		return cmp.Or(cmp.Compare(y.Score, x.Score), cmp.Compare(x.ID, y.ID))
	})
	hits = hits[:min(req.K, len(hits))]
	for i := range hits {
		hits[i].Rank = i + 1
	}
	return hits, nil
}
