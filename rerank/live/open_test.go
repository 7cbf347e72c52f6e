package live

import (
	"bufio"
	"context"
	"errors"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/corpus/timex"
	"github.com/kairos-rag/kairos/indexer"
	"github.com/kairos-rag/kairos/internal/sharedtest"
	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/search"
)

// bowEncoder is a deterministic stand-in for a sentence encoder (hashed bag of words,
// L2-normalised), as search's tests use: enough to build and search vectors without cgo.
type bowEncoder struct{}

const bowDim = 128

func (bowEncoder) Identity() indexer.ModelIdentity {
	return indexer.ModelIdentity{Name: "bow", ONNXSHA256: "0123456789abcdef", Dim: bowDim, Pooling: "mean", Normalize: true, MaxSeqLen: 256}
}

func (bowEncoder) vec(text string) []float32 {
	v := make([]float32, bowDim)
	for _, w := range strings.Fields(strings.ToLower(text)) {
		h := fnv.New32a()
		h.Write([]byte(w))
		v[h.Sum32()%bowDim]++
	}
	var n float64
	for _, x := range v {
		n += float64(x * x)
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(max(n, 1)))
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

// overlapScorer is a cross-encoder stand-in: the words a passage shares with the query.
type overlapScorer struct{}

func (overlapScorer) Score(_ context.Context, query string, passages []string) ([]float32, error) {
	q := strings.Fields(strings.ToLower(query))
	out := make([]float32, len(passages))
	for i, p := range passages {
		for _, w := range strings.Fields(strings.ToLower(p)) {
			if slices.Contains(q, w) {
				out[i]++
			}
		}
	}
	return out, nil
}

// sciFactHead writes the first n SciFact abstracts to a JSONL file of the test's.
func sciFactHead(t *testing.T, from, n int) string {
	t.Helper()
	f, err := os.Open(sharedtest.Path(t, "data/beir-scifact/corpus.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	var b strings.Builder
	for i := 0; i < from+n && sc.Scan(); i++ {
		if i >= from {
			b.Write(sc.Bytes())
			b.WriteByte('\n')
		}
	}
	out := filepath.Join(t.TempDir(), "scifact.jsonl")
	if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// newbornQuery finds SciFact's abstract 4983 (its first) among the first 300.
const newbornQuery = "brain white matter newborns diffusion tensor"

// buildDense builds the first 300 SciFact abstracts with vectors into a new index.
func buildDense(t *testing.T) indexer.Location {
	t.Helper()
	loc := indexer.Location{Dir: filepath.Join(t.TempDir(), "index")}
	ix, err := indexer.Open(t.Context(), loc)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.Build(t.Context(), indexer.Options{Inputs: []indexer.InputSpec{{Path: sciFactHead(t, 0, 300)}},
		EmbedInline: true, Encoder: bowEncoder{}}); err != nil {
		t.Fatal(err)
	}
	return loc
}

// TestOpenServesWhatItsModelsAllow opens one real index with vectors three ways (no encoder;
// an encoder; an encoder and a cross-encoder) and checks what each serves: the default mode,
// the refusals, and that the hits are the index's.
func TestOpenServesWhatItsModelsAllow(t *testing.T) {
	loc := buildDense(t)
	tests := []struct {
		name        string
		opts        Options
		defaultMode search.Mode
		refused     map[string]error // query -> refusal; the others are served
	}{
		{"no encoder", Options{}, search.ModeBM25,
			map[string]error{"hybrid": ErrUnsupportedMode, "dense": ErrUnsupportedMode, "cross": ErrUnsupportedStage}},
		{"encoder", Options{Search: search.Options{Encoder: bowEncoder{}}}, search.ModeHybrid,
			map[string]error{"cross": ErrUnsupportedStage}},
		{"encoder and cross-encoder", Options{Search: search.Options{Encoder: bowEncoder{}}, Scorer: overlapScorer{}}, search.ModeHybrid,
			map[string]error{}},
	}
	queries := map[string]rerank.Query{
		"default": {Request: search.Request{Text: newbornQuery, K: 5}},
		"bm25":    {Request: search.Request{Text: newbornQuery, K: 5, Mode: search.ModeBM25}},
		"hybrid":  {Request: search.Request{Text: newbornQuery, K: 5, Mode: search.ModeHybrid}},
		"dense":   {Request: search.Request{Text: newbornQuery, K: 5, Mode: search.ModeDense}},
		"cross":   {Request: search.Request{Text: newbornQuery, K: 5}, Rerank: []rerank.Stage{rerank.StageCross}},
		"time": {Request: search.Request{Text: newbornQuery, K: 5}, Rerank: []rerank.Stage{rerank.StageTime},
			Time: timex.Spec{Kind: timex.KindRecent}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ix, err := Open(t.Context(), loc, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			l := ix.Acquire()
			if l.Mode() != tc.defaultMode || !l.Stats().Dense || l.Stats().Generation != 1 || l.Reloads() != 0 {
				t.Errorf("load: mode %s, stats %+v, reloads %d; want mode %s, dense, generation 1, no reload",
					l.Mode(), l.Stats(), l.Reloads(), tc.defaultMode)
			}
			l.Release()
			for name, q := range queries {
				res, err := ix.Search(t.Context(), q)
				if want := tc.refused[name]; want != nil {
					if !errors.Is(err, want) || !errors.Is(err, ErrUnsupported) {
						t.Errorf("%s: %v, want %v", name, err, want)
					}
					continue
				}
				if err != nil || len(res.Hits) == 0 {
					t.Errorf("%s: %v (%d hits)", name, err, len(res.Hits))
				} else if name != "dense" && res.Hits[0].DocID != "4983" {
					// (The bag-of-words vectors alone rank by shared words, not by BM25's idf.)
					t.Errorf("%s: %s first, want abstract 4983", name, res.Hits[0].ID)
				}
			}
			// The default mode is the mode the load names: the same hits as asking for it.
			def, err := ix.Search(t.Context(), queries["default"])
			if err != nil {
				t.Fatal(err)
			}
			named := queries["default"]
			named.Mode = tc.defaultMode
			same, err := ix.Search(t.Context(), named)
			if err != nil || !slices.EqualFunc(def.Hits, same.Hits, func(a, b rerank.Hit) bool { return a.ID == b.ID && a.Score == b.Score }) {
				t.Errorf("no mode and mode %s rank apart (%v)", tc.defaultMode, err)
			}
		})
	}
}

// TestOpenRefusesAnEncoderWithoutVectors: an encoder given for an index without vectors is
// refused at opening (search.Open), not at the first query.
func TestOpenRefusesAnEncoderWithoutVectors(t *testing.T) {
	loc := indexer.Location{Dir: filepath.Join(t.TempDir(), "index")}
	b, err := indexer.Open(t.Context(), loc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Build(t.Context(), indexer.Options{Inputs: []indexer.InputSpec{{Path: sciFactHead(t, 0, 20)}}}); err != nil {
		t.Fatal(err)
	}
	b.Close()
	if _, err := Open(t.Context(), loc, Options{Search: search.Options{Encoder: bowEncoder{}}}); err == nil || !strings.Contains(err.Error(), "no dense vectors") {
		t.Fatalf("got %v, want the index's lack of vectors named", err)
	}
	ix, err := Open(t.Context(), loc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.Search(t.Context(), rerank.Query{Request: search.Request{Text: "cells", K: 1, Mode: search.ModeHybrid}}); !errors.Is(err, ErrUnsupportedMode) ||
		!strings.Contains(err.Error(), "kairos index --model") {
		t.Errorf("hybrid on a BM25 index: %v, want ErrUnsupportedMode naming kairos index --model", err)
	}
}

// TestReloadServesTheNewGeneration: an update commits generation 2 under an open live index;
// until Reload it serves generation 1, after it generation 2, with the new passages, the
// generation number and the reload counted apart.
func TestReloadServesTheNewGeneration(t *testing.T) {
	loc := buildDense(t)
	ix, err := Open(t.Context(), loc, Options{Search: search.Options{Encoder: bowEncoder{}}})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	added := sciFactHead(t, 300, 50) // the next 50 abstracts, the first of which is 1649738
	const addedID = "1649738#0"
	if _, err := ix.Passage(t.Context(), addedID); !errors.Is(err, search.ErrNotFound) {
		t.Fatalf("passage of the update before it: %v, want search.ErrNotFound", err)
	}
	up, err := indexer.Open(t.Context(), loc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := up.Update(t.Context(), indexer.UpdateOptions{Options: indexer.Options{Inputs: []indexer.InputSpec{{Path: added}}, Encoder: bowEncoder{}}}); err != nil {
		t.Fatal(err)
	}
	up.Close()
	if st, _ := ix.Stats(); st.Generation != 1 {
		t.Fatalf("before the reload: generation %d, want 1 (still the load at start)", st.Generation)
	}
	if err := ix.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	l := ix.Acquire()
	defer l.Release()
	if st := l.Stats(); st.Generation != 2 || l.Reloads() != 1 || st.Documents != 350 {
		t.Errorf("after the reload: generation %d, reloads %d, %d documents; want 2, 1, 350", st.Generation, l.Reloads(), st.Documents)
	}
	if p, err := l.Passage(t.Context(), addedID); err != nil || p.DocID != "1649738" {
		t.Errorf("passage of the update: %+v %v", p, err)
	}
	if _, err := l.Passage(t.Context(), "nope#0"); !errors.Is(err, search.ErrNotFound) {
		t.Errorf("unknown passage: %v, want search.ErrNotFound", err)
	}
	df, n, err := l.DocFreq(t.Context(), []string{"cells", "qqqzzz"})
	if err != nil || n != l.Stats().Passages || df[0] == 0 || df[1] != 0 {
		t.Errorf("DocFreq: %v of %d (%v), want cells in some passages and qqqzzz in none", df, n, err)
	}
}
