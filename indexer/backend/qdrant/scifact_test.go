package qdrant

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/blevebm25"
	"github.com/kairos-rag/kairos/internal/langanalysis"
)

var testParams = backend.BM25Params{K1: 1.2, B: 0.75}

func shared(t testing.TB, rel string) string {
	t.Helper()
	root := os.Getenv("KAIROS_SHARED")
	if root == "" {
		root = "../../../../shared"
	}
	p := filepath.Join(root, rel)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("shared data missing (set KAIROS_SHARED or put ../shared beside the repo): %v", err)
	}
	return p
}

// sciFact returns SciFact's passages as the indexer splits them (keys in order), with a
// source and a date derived from the key so that filters have something to select.
func sciFact(t testing.TB) []corpus.Passage {
	t.Helper()
	ctx := context.Background()
	r, err := corpus.Open(ctx, shared(t, "data/beir-scifact/corpus.jsonl"), corpus.Options{Source: "scifact"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sp, err := corpus.NewSplitter(corpus.SplitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []corpus.Passage
	for {
		d, err := r.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, sp.Split(d)...)
	}
	for i := range out {
		out[i].Source = []string{"pubmed", "wiki", "news"}[i%3]
		if i%5 != 0 { // every 5th passage undated
			out[i].Date = time.Date(2000+i%20, time.Month(1+i%12), 1+i%28, 0, 0, 0, 0, time.UTC)
		}
	}
	return out
}

// sciFactQueries returns the analysed, distinct terms of the SciFact queries that have
// judgments.
func sciFactQueries(t testing.TB) [][]string {
	t.Helper()
	judged := map[string]bool{}
	qf, err := os.Open(shared(t, "data/beir-scifact/qrels/train.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer qf.Close()
	sc := bufio.NewScanner(qf)
	for sc.Scan() {
		var id string
		for i, c := range sc.Text() {
			if c == '\t' {
				id = sc.Text()[:i]
				break
			}
		}
		judged[id] = true
	}
	an, err := langanalysis.New("en")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(shared(t, "data/beir-scifact/queries.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][]string
	dec := json.NewDecoder(f)
	for {
		var q struct {
			ID   string `json:"_id"`
			Text string `json:"text"`
		}
		if err := dec.Decode(&q); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if !judged[q.ID] {
			continue
		}
		var terms []string
		seen := map[string]bool{}
		for _, tok := range an.Analyze([]byte(q.Text)) {
			if s := string(tok.Term); !seen[s] {
				seen[s] = true
				terms = append(terms, s)
			}
		}
		out = append(out, terms)
	}
	return out
}

// writeLexical writes passages into gen through any lexical engine, in batches of 500.
func writeLexical(t testing.TB, lex backend.Lexical, gen backend.Gen, ps []corpus.Passage) backend.LexicalCommit {
	t.Helper()
	ctx := context.Background()
	w, err := lex.Begin(ctx, gen, nil, backend.LexicalBegin{Analyzer: "en"})
	if err != nil {
		t.Fatal(err)
	}
	for lo := 0; lo < len(ps); lo += 500 {
		b := w.NewBatch()
		for i := lo; i < min(lo+500, len(ps)); i++ {
			if err := b.Add(uint32(i), &ps[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Apply(ctx, b); err != nil {
			w.Abort()
			t.Fatal(err)
		}
	}
	c, err := w.Commit(ctx, backend.CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// localBM25 builds SciFact in the local bleve engine and opens it.
func localBM25(t testing.TB, ps []corpus.Passage) (backend.LexicalReader, backend.Scoring) {
	t.Helper()
	dir := t.TempDir()
	c := writeLexical(t, blevebm25.Engine{}, backend.Gen{Name: "g-000001", Dir: dir}, ps)
	sc := backend.Scoring{Params: testParams, Stats: backend.CollectionStats{Docs: c.Docs, Tokens: c.TokensAdded}}
	r, err := blevebm25.Engine{}.Open(context.Background(), backend.Gen{Name: "g-000001", Dir: dir}, sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, sc
}
