package indexer

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
	"testing"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer/backend"
)

// scoredHit is a passage id with its BM25 score.
type scoredHit struct {
	id    string
	score float64
}

// scifactQueries returns the first n SciFact queries.
func scifactQueries(t testing.TB, n int) []string {
	t.Helper()
	f, err := os.Open(shared(t, "data/beir-scifact/queries.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for len(out) < n && sc.Scan() {
		var q struct{ Text string }
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			t.Fatal(err)
		}
		out = append(out, q.Text)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// scoredTop returns the k best passages for q through the generation's lexical engine, as
// (passage id, score). Keys differ between two indexes of the same passages, and equal scores
// are ordered by key, so the hits are asked for k+1, those tied with the last (a tie group the
// cut may split differently) are left out, and the rest are sorted by (score, id).
func scoredTop(t testing.TB, g *Generation, q string, k int) []scoredHit {
	t.Helper()
	an, err := g.Manifest.TextAnalyzer()
	if err != nil {
		t.Fatal(err)
	}
	var terms []string
	seen := map[string]bool{}
	for _, tok := range an.Analyze([]byte(q)) {
		if s := string(tok.Term); !seen[s] {
			seen[s] = true
			terms = append(terms, s)
		}
	}
	hits, err := g.Lexical.Search(context.Background(), backend.LexicalQuery{Terms: terms, N: k + 1})
	if err != nil {
		t.Fatal(err)
	}
	var out []scoredHit
	for _, h := range hits {
		if len(hits) == k+1 && h.Score <= hits[k].Score {
			continue
		}
		p, err := g.Passages.Get(t.Context(), h.Key)
		if err != nil {
			t.Fatal(err)
		}
		if isDead(t, g, h.Key) {
			t.Errorf("query %q: hit %s is tombstoned", q, p.ID)
		}
		out = append(out, scoredHit{p.ID, h.Score})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].score != out[j].score {
			return out[i].score > out[j].score
		}
		return out[i].id < out[j].id
	})
	return out
}

// TestPostingsDeletesScoreAsCleanBuild: a postings index built through a checkpoint and a
// resume, then deleted from and updated without compaction, returns for 150 SciFact queries
// the top 10 of a clean build of its live documents, ids and scores, bit for bit: the terms'
// document frequencies count live passages only, as bleve's do.
func TestPostingsDeletesScoreAsCleanBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 150 queries against a clean build, bit for bit (TestConformance deletes under -short)")
	}
	const docs = 3000
	f, err := os.Open(shared(t, "data/beir-scifact/corpus.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type rec struct {
		line []byte
		id   string
	}
	var recs []rec
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for len(recs) < docs && sc.Scan() {
		var r struct {
			ID string `json:"_id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec{append([]byte(nil), sc.Bytes()...), r.ID})
	}
	tmp := t.TempDir()
	write := func(name string, keep func(i int) bool, edit func(i int, line []byte) []byte) string {
		path := filepath.Join(tmp, name)
		var b strings.Builder
		for i, r := range recs {
			if keep(i) {
				fmt.Fprintf(&b, "%s\n", edit(i, r.line))
			}
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	same := func(_ int, line []byte) []byte { return line }
	all := func(int) bool { return true }
	// The update rewrites every 23rd abstract (longer, with words other abstracts use).
	edited := func(i int, line []byte) []byte {
		if i%23 != 5 {
			return line
		}
		var m map[string]any
		json.Unmarshal(line, &m)
		m["text"] = "Revised: patients with cancer and diabetes. " + m["text"].(string)
		b, _ := json.Marshal(m)
		return b
	}
	deleted := func(i int) bool { return i%15 == 7 } // 200 documents
	var victims []string
	changed := 0
	for i, r := range recs {
		if deleted(i) {
			victims = append(victims, r.id)
		} else if i%23 == 5 {
			changed++
		}
	}
	original := write("original.jsonl", all, same)
	revised := write("revised.jsonl", func(i int) bool { return !deleted(i) }, edited)

	ctx := context.Background()
	dir, clean := t.TempDir(), t.TempDir()
	opts := func(d, in string) Options {
		return Options{Dir: d, Inputs: []InputSpec{{Path: in, Options: corpus.Options{Source: "scifact"}}},
			Build: BuildOptions{Lexical: LexicalPostings, BatchSize: 500}}
	}
	// A build that dies after its second checkpoint, then resumes: several segments.
	o := opts(dir, original)
	o.CheckpointEvery, o.CheckpointAfter = 1500, -1
	checkpoints := 0
	errKilled := errors.New("killed")
	o.faultAt = func(point string) error {
		if point == "checkpoint-recorded" {
			if checkpoints++; checkpoints == 2 {
				return errKilled
			}
		}
		return nil
	}
	if _, err := Build(ctx, o); !errors.Is(err, errKilled) {
		t.Fatalf("build: %v, want it killed at its second checkpoint", err)
	}
	o.faultAt = nil
	if _, err := resumeBuild(ctx, o); err != nil {
		t.Fatal(err)
	}
	sum, err := deleteDocs(ctx, UpdateOptions{Options: Options{Dir: dir}, CompactRatio: -1}, victims)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Update.Deleted != len(victims) || len(victims) != 200 {
		t.Fatalf("deleted %d documents, want %d (200)", sum.Update.Deleted, len(victims))
	}
	up := opts(dir, revised)
	up.Build.Lexical = ""
	if sum, err = updateIndex(ctx, UpdateOptions{Options: up, CompactRatio: -1}); err != nil {
		t.Fatal(err)
	}
	if sum.Update.Changed != changed || sum.Update.Unchanged != docs-len(victims)-changed {
		t.Fatalf("the update changed %d documents and left %d, want %d and %d", sum.Update.Changed, sum.Update.Unchanged, changed, docs-len(victims)-changed)
	}
	verifyOK(t, mustCurrent(t, dir))
	if _, err := Build(ctx, opts(clean, revised)); err != nil {
		t.Fatal(err)
	}

	gu, gc := openScored(t, dir), openScored(t, clean)
	defer gu.Close()
	defer gc.Close()
	if *gu.Manifest.BM25 != *gc.Manifest.BM25 {
		t.Fatalf("collection statistics: updated %+v, clean %+v", *gu.Manifest.BM25, *gc.Manifest.BM25)
	}
	differ := 0
	for _, q := range scifactQueries(t, 150) {
		a, b := scoredTop(t, gu, q, 10), scoredTop(t, gc, q, 10)
		ok := len(a) == len(b) && len(a) > 0
		for i := 0; ok && i < len(a); i++ {
			ok = a[i] == b[i] // bit for bit: the same df, N, avgdl, lengths and summing order
		}
		if !ok {
			if differ++; differ <= 5 {
				t.Errorf("query %q:\nupdated %v\nclean   %v", q, a, b)
			}
		}
	}
	if differ > 0 {
		t.Errorf("%d of 150 queries rank or score otherwise than the clean build", differ)
	}
}
