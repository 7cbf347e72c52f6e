package indexer

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/postingsbm25"
	"github.com/kairos-rag/kairos/internal/postings"
)

// lexicalSegments lists the lexical segment files of the generation directory genDir.
func lexicalSegments(t testing.TB, genDir string) []string {
	t.Helper()
	entries, err := os.ReadDir(postingsbm25.Dir(genDir))
	if err != nil {
		t.Fatal(err)
	}
	var segs []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".kpo") {
			segs = append(segs, e.Name())
		}
	}
	return segs
}

// lexicalScores returns "id score" of the n best passages for q, scores rounded to 1e-9.
func lexicalScores(t testing.TB, g *Generation, q string, n int) []string {
	t.Helper()
	an, err := g.Manifest.TextAnalyzer()
	if err != nil {
		t.Fatal(err)
	}
	var terms []string
	for _, tok := range an.Analyze([]byte(q)) {
		terms = append(terms, string(tok.Term))
	}
	hits, err := g.Lexical.Search(context.Background(), backend.LexicalQuery{Terms: terms, N: n})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, h := range hits {
		p, err := g.Passages.Get(context.Background(), h.Key)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %.9f", p.ID, h.Score))
	}
	return out
}

// TestCheckpointLeavesPostingsUnmerged: a postings build's checkpoint commits the parts it
// flushed as they are (the build stands still for renames, not a merge), the writer that goes
// on from it adopts them, and the build ends with one segment that ranks and scores exactly as
// a build without checkpoints or flushes; so does a build resumed from such a checkpoint.
func TestCheckpointLeavesPostingsUnmerged(t *testing.T) {
	input := scifactHead(t, 600)
	queries := []string{"cerebral white matter diffusion", "vitamin d deficiency", "stem cells regeneration", "the of and"}
	build := func(t *testing.T, dir string, every int, small bool, fault func(string) error) (*Summary, error) {
		o := Options{Dir: dir, Inputs: []InputSpec{{Path: input}}, Build: BuildOptions{BatchSize: 50, Lexical: LexicalPostings},
			CheckpointEvery: every, CheckpointAfter: -1}
		if small {
			o.RAMBudget = postings.MinRAMBudget // a part every few dozen passages
		}
		o.faultAt = fault
		return Build(context.Background(), o)
	}
	clean := filepath.Join(t.TempDir(), "clean")
	if _, err := build(t, clean, -1, false, nil); err != nil {
		t.Fatal(err)
	}
	want := openForTest(t, clean)

	t.Run("checkpoints", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "idx")
		var unmerged []int // segments of each checkpoint generation when it was recorded
		fault := func(point string) error {
			if point == "checkpoint-recorded" {
				gen, err := checkpointDir(dir)
				if err != nil {
					return err
				}
				unmerged = append(unmerged, len(lexicalSegments(t, gen)))
				// the sums of files hashed as they were written (store, document table,
				// postings parts) must be those of the files
				if rep, err := verifyGenDir(context.Background(), gen); err != nil || !rep.OK() {
					t.Errorf("checkpoint %s does not verify: %v %+v", gen, err, rep)
				}
			}
			return nil
		}
		sum, err := build(t, dir, 200, true, fault)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Checkpoints < 2 || len(unmerged) != sum.Checkpoints {
			t.Fatalf("%d checkpoints, %d seen", sum.Checkpoints, len(unmerged))
		}
		t.Logf("segments per checkpoint: %v", unmerged)
		for i, n := range unmerged {
			if n < 2 {
				t.Errorf("checkpoint %d has %d lexical segments: its parts were merged", i+1, n)
			}
		}
		if rep, err := verifyIndex(context.Background(), dir); err != nil || !rep.OK() {
			t.Errorf("the build does not verify: %v %+v", err, rep)
		}
		got := openForTest(t, dir)
		if segs := lexicalSegments(t, got.Dir); len(segs) != 1 {
			t.Errorf("final generation has lexical segments %v, want one", segs)
		}
		for _, q := range queries {
			if g, w := lexicalScores(t, got, q, 10), lexicalScores(t, want, q, 10); !reflect.DeepEqual(g, w) {
				t.Errorf("query %q:\n got %v\nwant %v", q, g, w)
			}
		}
	})

	t.Run("resumed", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "idx")
		stop := fmt.Errorf("stopped after the second checkpoint")
		seen := 0
		_, err := build(t, dir, 200, true, func(point string) error {
			if point == "checkpoint-recorded" {
				if seen++; seen == 2 {
					return stop
				}
			}
			return nil
		})
		if err == nil || !strings.Contains(err.Error(), stop.Error()) {
			t.Fatalf("interrupted build: %v", err)
		}
		o := Options{Dir: dir, Inputs: []InputSpec{{Path: input}}, Build: BuildOptions{BatchSize: 50, Lexical: LexicalPostings},
			CheckpointEvery: 200, CheckpointAfter: -1, RAMBudget: postings.MinRAMBudget}
		if _, err := resumeBuild(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		got := openForTest(t, dir)
		if segs := lexicalSegments(t, got.Dir); len(segs) != 1 {
			t.Errorf("resumed generation has lexical segments %v, want one", segs)
		}
		for _, q := range queries {
			if g, w := lexicalScores(t, got, q, 10), lexicalScores(t, want, q, 10); !reflect.DeepEqual(g, w) {
				t.Errorf("query %q:\n got %v\nwant %v", q, g, w)
			}
		}
	})
}

// openForTest opens the live generation of dir, closed with the test.
func openForTest(t testing.TB, dir string) *Generation {
	t.Helper()
	g, err := openReader(context.Background(), dir, ReadOptions{BM25: backend.BM25Params{K1: 1.2, B: 0.4}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}
