package search

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer"
	"github.com/kairos-rag/kairos/indexer/backend/hnswvec"
	"github.com/kairos-rag/kairos/internal/hnsw"
)

// bowEncoder is a deterministic stand-in for a sentence encoder: hashed bag of lower-cased
// words, L2-normalised. Its similarities are lexical, which is enough to check that dense
// search finds what it should and that the plumbing (identity, HNSW, fusion) is right.
type bowEncoder struct {
	dim int
	sha string
}

func (e bowEncoder) Identity() indexer.ModelIdentity {
	return indexer.ModelIdentity{Name: "bow", ONNXSHA256: e.sha, Dim: e.dim, Pooling: "mean", Normalize: true, MaxSeqLen: 256}
}

func (e bowEncoder) vec(text string) []float32 {
	v := make([]float32, e.dim)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') }) {
		h := fnv.New32a()
		h.Write([]byte(w))
		v[h.Sum32()%uint32(e.dim)]++
	}
	var n float64
	for _, x := range v {
		n += float64(x * x)
	}
	if n > 0 {
		for i := range v {
			v[i] /= float32(math.Sqrt(n))
		}
	}
	return v
}

func (e bowEncoder) EncodePassages(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = e.vec(t)
	}
	return out, nil
}

func (e bowEncoder) EncodeQuery(_ context.Context, text string) ([]float32, error) {
	return e.vec(text), nil
}

var bow = bowEncoder{dim: 256, sha: "0123456789abcdef"}

func denseFAQ(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	_, err := buildAt(context.Background(), at(dir), indexer.Options{
		Inputs: []indexer.InputSpec{{Path: shared(t, faq)}}, EmbedInline: true, Encoder: bow,
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestDenseAndHybrid(t *testing.T) {
	dir := denseFAQ(t)
	index, err := indexer.Open(t.Context(), indexer.Location{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer index.Close()
	if rep, err := index.Verify(t.Context()); err != nil || !rep.OK() {
		t.Fatalf("verify: %+v %v", rep, err)
	}
	ix, err := Open(t.Context(), at(dir), Options{Encoder: bow})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if st := ix.Stats(); !st.Dense || st.Model != "bow" {
		t.Fatalf("stats: %+v", st)
	}
	ctx := context.Background()
	// Every passage's own text finds that passage first, by HNSW and by exact search.
	n, agree := 0, 0
	err = ix.gen.Passages.Each(t.Context(), func(key uint32, p corpus.Passage) error {
		if key%5 != 0 {
			return nil
		}
		n++
		for _, exact := range []bool{false, true} {
			hits, err := ix.Search(ctx, Request{Text: p.Text, K: 3, Mode: ModeDense, Exact: exact, Passages: true})
			if err != nil {
				return err
			}
			if len(hits) == 0 || hits[0].Scores["dense"] < 0.999 {
				t.Errorf("exact=%v: passage %s not found by its own text: %+v", exact, p.ID, hits)
			} else if hits[0].ID == p.ID {
				agree++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if agree < 2*n-2 { // identical duplicate passages may tie
		t.Errorf("own passage first in %d of %d searches", agree, 2*n)
	}

	// Hybrid scores, recomputed here from the two separate rankings.
	const q = "Can pets spread the coronavirus?"
	lex, err := ix.Search(ctx, Request{Text: q, K: DefaultWindow, Passages: true})
	if err != nil {
		t.Fatal(err)
	}
	den, err := ix.Search(ctx, Request{Text: q, K: DefaultWindow, Mode: ModeDense, Passages: true})
	if err != nil {
		t.Fatal(err)
	}
	minmaxOf := func(hs []Hit) (float64, float64) {
		lo, hi := hs[0].Score, hs[0].Score
		for _, h := range hs {
			lo, hi = min(lo, h.Score), max(hi, h.Score)
		}
		return lo, hi
	}
	want := map[Fusion]map[string]float64{FusionRRF: {}, FusionConvex: {}}
	llo, lhi := minmaxOf(lex)
	dlo, dhi := minmaxOf(den)
	for r, h := range lex {
		want[FusionRRF][h.ID] += 1 / float64(DefaultRRFK+r+1)
		want[FusionConvex][h.ID] += (1 - DefaultAlpha) * (h.Score - llo) / (lhi - llo)
	}
	for r, h := range den {
		want[FusionRRF][h.ID] += 1 / float64(DefaultRRFK+r+1)
		want[FusionConvex][h.ID] += DefaultAlpha * (h.Score - dlo) / (dhi - dlo)
	}
	for _, fusion := range []Fusion{FusionRRF, FusionConvex} {
		hx, err := Open(t.Context(), at(dir), Options{Encoder: bow, Fusion: fusion})
		if err != nil {
			t.Fatal(err)
		}
		hits, err := hx.Search(ctx, Request{Text: q, K: 10, Mode: ModeHybrid, Passages: true})
		hx.Close()
		if err != nil || len(hits) != 10 {
			t.Fatalf("%s: %d hits, %v", fusion, len(hits), err)
		}
		// The request's fusion overrides the index's (ix was opened with the default, rrf).
		over, err := ix.Search(ctx, Request{Text: q, K: 10, Mode: ModeHybrid, Fusion: fusion, Passages: true})
		if err != nil || !reflect.DeepEqual(over, hits) {
			t.Errorf("%s as a request override: %v, hits differ from an index opened with it", fusion, err)
		}
		for i, h := range hits {
			if w := want[fusion][h.ID]; math.Abs(w-h.Score) > 1e-9 {
				t.Errorf("%s: hit %d %s scored %.6f, recomputed %.6f", fusion, i, h.ID, h.Score, w)
			}
			if i > 0 && h.Score > hits[i-1].Score {
				t.Errorf("%s: not sorted at %d", fusion, i)
			}
		}
		best := 0.0
		for _, w := range want[fusion] {
			best = max(best, w)
		}
		if math.Abs(hits[0].Score-best) > 1e-9 {
			t.Errorf("%s: top score %.6f, best recomputed %.6f", fusion, hits[0].Score, best)
		}
	}
}

func TestDenseErrors(t *testing.T) {
	dir := denseFAQ(t)
	tests := []struct {
		name string
		enc  QueryEncoder
		want string
	}{
		{"other weights", bowEncoder{dim: 256, sha: "ffff"}, "does not match"},
		{"other dimension", bowEncoder{dim: 128, sha: bow.sha}, "dimension 128, index has 256"},
	}
	for _, tc := range tests {
		if _, err := Open(t.Context(), at(dir), Options{Encoder: tc.enc}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	ix, err := Open(t.Context(), at(dir), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.Search(context.Background(), Request{Text: "x", K: DefaultK, Mode: ModeDense}); err == nil || !strings.Contains(err.Error(), "give --model") {
		t.Errorf("dense without encoder: %v", err)
	}
	// The request parser and Index.Search share one check (CheckFusion), NaN included.
	for _, req := range []Request{{Text: "x", K: 1, Fusion: "sum"}, {Text: "x", K: 1, Alpha: 1.5}, {Text: "x", K: 1, RRFK: -1}, {Text: "x", K: 1, Alpha: math.NaN()}} {
		if _, err := ix.Search(context.Background(), req); err == nil {
			t.Errorf("request fusion %q alpha %v rrf k %d accepted", req.Fusion, req.Alpha, req.RRFK)
		}
	}
	if _, err := Open(t.Context(), at(dir), Options{Alpha: math.NaN()}); err == nil || !strings.Contains(err.Error(), "alpha") {
		t.Errorf("options alpha NaN: %v", err)
	}
	if _, err := Open(t.Context(), at(testIndex(t, faq)), Options{Encoder: bow}); err == nil || !strings.Contains(err.Error(), "no dense vectors") {
		t.Errorf("encoder on a BM25-only index: %v", err)
	}
}

// TestDenseFiltersInsideTheEngine: dense and hybrid searches apply date filters inside the
// vector engine, so a filter that passes 2% of the passages still fills K with passing
// passages: the same ones as an exact search under the filter.
func TestDenseFiltersInsideTheEngine(t *testing.T) {
	// 1,000 documents of words drawn from a small vocabulary, dated over 50 days: each day
	// holds 20 of them.
	words := strings.Fields("virus spread mask hand wash fever cough test vaccine school travel home " +
		"work child symptom contact distance air surface hospital care risk age health")
	var b strings.Builder
	base := time.Date(2020, 3, 1, 0, 0, 0, 0, time.UTC)
	for i := range 1000 {
		var text []string
		for j := range 12 {
			text = append(text, words[(i*7+j*j*3+i/13)%len(words)])
		}
		fmt.Fprintf(&b, "{\"id\":\"d%d\",\"title\":\"Doc %d\",\"text\":%q,\"date\":%q}\n",
			i, i, strings.Join(text, " "), base.AddDate(0, 0, i%50).Format("2006-01-02"))
	}
	in := filepath.Join(t.TempDir(), "dated.jsonl")
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := buildAt(context.Background(), at(dir), indexer.Options{Inputs: []indexer.InputSpec{{Path: in}}, EmbedInline: true, Encoder: bow}); err != nil {
		t.Fatal(err)
	}
	ix, err := Open(t.Context(), at(dir), Options{Encoder: bow})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	day := base.AddDate(0, 0, 17)
	f := Filters{DateFrom: day, DateTo: day}
	const k, query = 10, "fever cough vaccine"
	for _, mode := range []Mode{ModeDense, ModeHybrid} {
		got, err := ix.Search(context.Background(), Request{Text: query, K: k, Mode: mode, Filters: f})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != k {
			t.Fatalf("%s: %d hits under a filter passing 20 passages, want %d", mode, len(got), k)
		}
		for _, h := range got {
			if !h.Date.Equal(day) {
				t.Errorf("%s: hit %s dated %s violates the filter on %s", mode, h.ID, h.Date, day)
			}
		}
	}
	approx, err := ix.Search(context.Background(), Request{Text: query, K: k, Mode: ModeDense, Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	exact, err := ix.Search(context.Background(), Request{Text: query, K: k, Mode: ModeDense, Filters: f, Exact: true})
	if err != nil {
		t.Fatal(err)
	}
	same := 0
	in10 := map[string]bool{}
	for _, h := range exact {
		in10[h.ID] = true
	}
	for _, h := range approx {
		if in10[h.ID] {
			same++
		}
	}
	if same < k-1 {
		t.Errorf("HNSW under the filter found %d of the exact top %d", same, k)
	}
}

// TestBinaryRescoreOption: Options.BinaryRescore (kairos search --binary-rescore) reaches the
// graph of an index with binary codes, whose searches then rescore with the floats only and
// still return the passage a query copies first, and a value other than int8 or float is
// refused before anything is opened.
func TestBinaryRescoreOption(t *testing.T) {
	dir := t.TempDir()
	_, err := buildAt(context.Background(), at(dir), indexer.Options{
		Inputs: []indexer.InputSpec{{Path: shared(t, faq)}}, EmbedInline: true, Encoder: bow,
		HNSW: hnsw.Options{Codes: hnsw.CodesBinary},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rescore   string
		floatOnly bool
	}{{"", false}, {hnsw.RescoreInt8, false}, {hnsw.RescoreFloat, true}} {
		ix, err := Open(t.Context(), at(dir), Options{Encoder: bow, BinaryRescore: tc.rescore})
		if err != nil {
			t.Fatal(err)
		}
		g := ix.gen.Vectors.(*hnswvec.Reader).Graph()
		if g.Options().Codes != hnsw.CodesBinary || !g.Mapped() || g.RescoresWithFloatsOnly() != tc.floatOnly {
			t.Errorf("--binary-rescore %q: graph codes %q, mapped %v, floats only %v; want binary, mapped, %v",
				tc.rescore, g.Options().Codes, g.Mapped(), g.RescoresWithFloatsOnly(), tc.floatOnly)
		}
		lex, err := ix.Search(context.Background(), Request{Text: "vaccine side effects", K: 3, Mode: ModeBM25})
		if err != nil || len(lex) == 0 {
			t.Fatalf("bm25: %v, %+v", err, lex)
		}
		for _, p := range lex {
			res, err := ix.Search(context.Background(), Request{Text: p.Text, K: 5, Mode: ModeDense})
			if err != nil || len(res) == 0 || res[0].ID != p.ID {
				t.Errorf("--binary-rescore %q: the text of %s: %v, %+v", tc.rescore, p.ID, err, res)
			}
		}
		ix.Close()
	}
	if _, err := Open(t.Context(), at(dir), Options{Encoder: bow, BinaryRescore: "bits"}); err == nil || !strings.Contains(err.Error(), `BinaryRescore "bits"`) {
		t.Errorf("--binary-rescore bits: %v", err)
	}
	if _, err := Open(t.Context(), at(denseFAQ(t)), Options{Encoder: bow, BinaryRescore: hnsw.RescoreFloat}); err == nil || !strings.Contains(err.Error(), "applies to an index with binary codes") {
		t.Errorf("--binary-rescore float on an index with int8 codes: %v", err)
	}
}
