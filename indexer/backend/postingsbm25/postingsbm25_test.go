package postingsbm25

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/tombstones"
	"github.com/kairos-rag/kairos/internal/langanalysis"
	"github.com/kairos-rag/kairos/internal/postings"
)

// sciFact reads the first n records of a BEIR SciFact file of the shared data.
func sciFact(t testing.TB, name string, n int) []map[string]any {
	t.Helper()
	root := os.Getenv("KAIROS_SHARED")
	if root == "" {
		root = "../../../../shared"
	}
	f, err := os.Open(filepath.Join(root, "data/beir-scifact", name))
	if err != nil {
		t.Fatalf("shared data missing (set KAIROS_SHARED or put ../shared beside the repo): %v", err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for len(out) < n && sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// op is one generation's writes: passages added under consecutive keys from first, keys
// deleted (with the passages they held).
type op struct {
	add   []corpus.Passage
	first uint32
	del   []uint32
}

// write commits a generation at dir (derived from base when not nil), deleting in two
// batches so that a key deleted twice is met.
func write(t *testing.T, dir string, base *backend.Gen, o op, held map[uint32]*corpus.Passage) backend.LexicalCommit {
	t.Helper()
	ctx := context.Background()
	w, err := Engine{}.Begin(ctx, backend.Gen{Name: filepath.Base(dir), Dir: dir}, base, backend.LexicalBegin{Analyzer: "en"})
	if err != nil {
		t.Fatal(err)
	}
	for half := range 2 {
		b := w.NewBatch()
		for i, k := range o.del {
			if i%2 == half || i == 0 {
				b.Delete(k, held[k])
			}
		}
		if half == 1 {
			for i := range o.add {
				if err := b.Add(o.first+uint32(i), &o.add[i]); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := w.Apply(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	c, err := w.Commit(ctx, backend.CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestDeletesScoreAsCleanBuild: generations derived by deletions and additions (twice, so
// counts are carried from a base), searched for 100 SciFact queries, return exactly the
// hits and scores of a generation holding the live passages under the same keys, whether
// the deleted term counts are read from their file or, for an index written before it,
// counted from the segments at open.
func TestDeletesScoreAsCleanBuild(t *testing.T) {
	var ps []corpus.Passage
	for _, r := range sciFact(t, "corpus.jsonl", 900) {
		id := r["_id"].(string)
		ps = append(ps, corpus.Passage{ID: id + "#0", DocID: id, Text: r["title"].(string) + " | " + r["text"].(string)})
	}
	held := map[uint32]*corpus.Passage{}
	for i := range ps {
		held[uint32(i)] = &ps[i]
	}
	var del2, del3 []uint32
	for k := uint32(0); k < 800; k++ {
		if k%9 == 4 {
			del2 = append(del2, k)
		}
	}
	del3 = append(del3, del2[3], 850, 851, 852) // one deleted before, three added by g2
	for k := uint32(100); k < 400; k += 5 {
		del3 = append(del3, k)
	}
	root := t.TempDir()
	gen := func(name string) backend.Gen { return backend.Gen{Name: name, Dir: filepath.Join(root, name)} }
	g1, g2, g3, clean := gen("g1"), gen("g2"), gen("g3"), gen("clean")
	write(t, g1.Dir, nil, op{add: ps[:800]}, held)
	write(t, g2.Dir, &g1, op{add: ps[800:], first: 800, del: del2}, held)
	write(t, g3.Dir, &g2, op{del: del3}, held)

	dead := map[uint32]bool{}
	for _, k := range append(del2, del3...) {
		dead[k] = true
	}
	// The clean generation: the live passages under their keys, one segment, no deletions.
	cw, err := Engine{}.Begin(context.Background(), clean, nil, backend.LexicalBegin{Analyzer: "en"})
	if err != nil {
		t.Fatal(err)
	}
	b := cw.NewBatch()
	for i := range ps {
		if !dead[uint32(i)] {
			b.Add(uint32(i), &ps[i])
		}
	}
	if err := cw.Apply(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	cc, err := cw.Commit(context.Background(), backend.CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cc.Docs != len(ps)-len(dead) {
		t.Fatalf("clean generation holds %d passages, want %d", cc.Docs, len(ps)-len(dead))
	}
	sc := backend.Scoring{Params: backend.BM25Params{K1: 1.2, B: 0.4}, Stats: backend.CollectionStats{Docs: cc.Docs, Tokens: cc.TokensAdded}}

	an, err := langanalysis.New("en")
	if err != nil {
		t.Fatal(err)
	}
	var queries [][]string
	for _, r := range sciFact(t, "queries.jsonl", 100) {
		seen, terms := map[string]bool{}, []string(nil)
		for _, tok := range an.Analyze([]byte(r["text"].(string))) {
			if s := string(tok.Term); !seen[s] {
				seen[s] = true
				terms = append(terms, s)
			}
		}
		queries = append(queries, terms)
	}
	search := func(g backend.Gen) [][]backend.Hit {
		t.Helper()
		r, err := Open(context.Background(), g.Dir, sc, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if n, _ := r.Docs(context.Background()); n != cc.Docs {
			t.Fatalf("%s holds %d live passages, want %d", g.Name, n, cc.Docs)
		}
		// Only a generation with deletions hands the search its tombstones: with a set,
		// the search reads the key of every candidate to look it up, a cost no ranking shows.
		pq := r.postingsQuery(backend.LexicalQuery{Terms: queries[0], N: 10})
		if carries, deletes := pq.Deleted != nil, r.deleted.Len() > 0; carries != deletes {
			t.Fatalf("%s: the query carries a tombstone set: %v; the generation has deletions: %v", g.Name, carries, deletes)
		}
		var out [][]backend.Hit
		for _, q := range queries {
			hits, err := r.Search(context.Background(), backend.LexicalQuery{Terms: q, N: 10})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, hits)
		}
		return out
	}
	want := search(clean)
	compare := func(what string, got [][]backend.Hit) {
		t.Helper()
		for i := range want {
			if len(want[i]) == 0 || !reflect.DeepEqual(got[i], want[i]) {
				t.Fatalf("%s, query %q:\n got %v\nwant %v", what, strings.Join(queries[i], " "), got[i], want[i])
			}
		}
	}
	compare("deleted from, counts from the file", search(g3))

	// The file holds what the segments say, and without it (an index written before it)
	// the counts are taken from the segments: the same scores.
	deleted, err := tombstones.Read(filepath.Join(Dir(g3.Dir), deletedName))
	if err != nil || deleted.Len() != len(dead) {
		t.Fatalf("deleted set: %d keys, %v; want %d", deleted.Len(), err, len(dead))
	}
	kept, err := deletedTermCounts(context.Background(), Dir(g3.Dir), deleted, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(Dir(g3.Dir), deletedDFName)); err != nil {
		t.Fatal(err)
	}
	counted, err := deletedTermCounts(context.Background(), Dir(g3.Dir), deleted, nil)
	if err != nil {
		t.Fatal(err)
	}
	if kept.Len() == 0 || !kept.Equal(counted) {
		t.Fatalf("kept counts (%d terms) differ from the segments' (%d terms)", kept.Len(), counted.Len())
	}
	if err := writeTermCounts(filepath.Join(Dir(clean.Dir), deletedDFName), kept); err != nil {
		t.Fatal(err)
	}
	if r, err := Open(context.Background(), clean.Dir, sc, nil); err != nil || r.Check(context.Background()) == nil {
		t.Fatalf("counts of deletions beside a generation without any: open %v, check passed", err)
	} else {
		r.Close()
	}
	os.Remove(filepath.Join(Dir(clean.Dir), deletedDFName))
	compare("deleted from, counts from the segments", search(g3))

	// Counts that are not the segments' (a passage's text other than the one indexed) are
	// reported by the check verify runs.
	wrong := kept.Map()
	for term := range wrong {
		wrong[term]++
		break
	}
	if err := writeTermCounts(filepath.Join(Dir(g3.Dir), deletedDFName), postings.NewTermCounts(wrong)); err != nil {
		t.Fatal(err)
	}
	r, err := Open(context.Background(), g3.Dir, sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Check(context.Background()); err == nil || !strings.Contains(err.Error(), deletedDFName) {
		t.Fatalf("Check on altered counts: %v", err)
	}
}

// TestNoLiveToken: when the passages that held words are deleted and the live ones hold only
// stop words, a search for the deleted passages' words finds nothing, as bleve does, instead
// of failing on collection statistics without a token.
func TestNoLiveToken(t *testing.T) {
	ps := []corpus.Passage{
		{ID: "a#0", DocID: "a", Text: "Vitamin D | Vitamin D was identified in 1922."},
		{ID: "b#0", DocID: "b", Text: "The and of | the of and"},
	}
	held := map[uint32]*corpus.Passage{0: &ps[0], 1: &ps[1]}
	root := t.TempDir()
	g1 := backend.Gen{Name: "g1", Dir: filepath.Join(root, "g1")}
	g2 := backend.Gen{Name: "g2", Dir: filepath.Join(root, "g2")}
	write(t, g1.Dir, nil, op{add: ps[:1]}, held)
	c := write(t, g2.Dir, &g1, op{add: ps[1:], first: 1, del: []uint32{0}}, held)
	if c.Docs != 1 {
		t.Fatalf("g2 holds %d live passages, want 1", c.Docs)
	}
	sc := backend.Scoring{Params: backend.BM25Params{K1: 1.2, B: 0.4}, Stats: backend.CollectionStats{Docs: 1, Tokens: 0}}
	r, err := Open(context.Background(), g2.Dir, sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	hits, err := r.Search(context.Background(), backend.LexicalQuery{Terms: []string{"vitamin"}, N: 10})
	if err != nil || len(hits) != 0 {
		t.Fatalf("search of a collection without a live token: %v, %v; want no hit, no error", hits, err)
	}
}

// TestDeleteNeedsThePassage: a deletion without the passage's text is refused (its terms'
// document frequencies could not be corrected).
func TestDeleteNeedsThePassage(t *testing.T) {
	dir := t.TempDir()
	p := corpus.Passage{ID: "a#0", Text: "vitamin d"}
	write(t, filepath.Join(dir, "g1"), nil, op{add: []corpus.Passage{p}}, nil)
	w, err := Engine{}.Begin(context.Background(), backend.Gen{Name: "g2", Dir: filepath.Join(dir, "g2")}, &backend.Gen{Name: "g1", Dir: filepath.Join(dir, "g1")}, backend.LexicalBegin{Analyzer: "en"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	b := w.NewBatch()
	b.Delete(0, nil)
	if err := w.Apply(context.Background(), b); err == nil || !strings.Contains(err.Error(), "without its passage") {
		t.Fatalf("Apply: %v, want a refusal", err)
	}
}

// BenchmarkSearchDeleted measures a query (SciFact's 1,109 in turn, top 10) on all of
// SciFact's abstracts after 200 were deleted, with the deleted term counts ("counted"), as
// the engine searched before it kept them ("uncounted": deleted passages still in the
// document frequencies), and on a clean generation of the live abstracts.
func BenchmarkSearchDeleted(b *testing.B) {
	recs := sciFact(b, "corpus.jsonl", 1<<30)
	var ps []corpus.Passage
	for _, r := range recs {
		id := r["_id"].(string)
		ps = append(ps, corpus.Passage{ID: id + "#0", DocID: id, Text: r["title"].(string) + " | " + r["text"].(string)})
	}
	root := b.TempDir()
	ctx := context.Background()
	commit := func(g backend.Gen, base *backend.Gen, add func(bt backend.LexicalBatch)) backend.LexicalCommit {
		w, err := Engine{}.Begin(ctx, g, base, backend.LexicalBegin{Analyzer: "en"})
		if err != nil {
			b.Fatal(err)
		}
		bt := w.NewBatch()
		add(bt)
		if err := w.Apply(ctx, bt); err != nil {
			b.Fatal(err)
		}
		c, err := w.Commit(ctx, backend.CommitOptions{})
		if err != nil {
			b.Fatal(err)
		}
		return c
	}
	g1 := backend.Gen{Name: "g1", Dir: filepath.Join(root, "g1")}
	g2 := backend.Gen{Name: "g2", Dir: filepath.Join(root, "g2")}
	clean := backend.Gen{Name: "clean", Dir: filepath.Join(root, "clean")}
	dead := func(i int) bool { return i%25 == 3 && i < 5000 } // 200 abstracts
	commit(g1, nil, func(bt backend.LexicalBatch) {
		for i := range ps {
			bt.Add(uint32(i), &ps[i])
		}
	})
	commit(g2, &g1, func(bt backend.LexicalBatch) {
		for i := range ps {
			if dead(i) {
				bt.Delete(uint32(i), &ps[i])
			}
		}
	})
	cc := commit(clean, nil, func(bt backend.LexicalBatch) {
		for i := range ps {
			if !dead(i) {
				bt.Add(uint32(i), &ps[i])
			}
		}
	})
	sc := backend.Scoring{Params: backend.BM25Params{K1: 1.2, B: 0.4}, Stats: backend.CollectionStats{Docs: cc.Docs, Tokens: cc.TokensAdded}}
	an, err := langanalysis.New("en")
	if err != nil {
		b.Fatal(err)
	}
	var queries [][]string
	for _, r := range sciFact(b, "queries.jsonl", 1<<30) {
		seen, terms := map[string]bool{}, []string(nil)
		for _, tok := range an.Analyze([]byte(r["text"].(string))) {
			if s := string(tok.Term); !seen[s] {
				seen[s] = true
				terms = append(terms, s)
			}
		}
		queries = append(queries, terms)
	}
	// Opening reads the counts' file; an index written before it counts them from the
	// segments (once per open).
	deleted, err := tombstones.Read(filepath.Join(Dir(g2.Dir), deletedName))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("counts/file", func(b *testing.B) {
		for b.Loop() {
			if _, err := deletedTermCounts(ctx, Dir(g2.Dir), deleted, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("counts/segments", func(b *testing.B) {
		segs, err := openSegments(Dir(g2.Dir), true)
		if err != nil {
			b.Fatal(err)
		}
		defer closeAll(segs)
		for b.Loop() {
			if _, err := countDeleted(ctx, segs, deleted); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, bc := range []struct {
		name      string
		gen       backend.Gen
		uncounted bool
	}{{"clean", clean, false}, {"deleted/counted", g2, false}, {"deleted/uncounted", g2, true}} {
		b.Run(bc.name, func(b *testing.B) {
			r, err := Open(ctx, bc.gen.Dir, sc, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			if bc.uncounted {
				r.deletedDF = nil
			}
			i := 0
			for b.Loop() {
				if _, err := r.Search(ctx, backend.LexicalQuery{Terms: queries[i%len(queries)], N: 10}); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// TestEmptyBatchTakesNoTurn: a batch left empty and never applied (the indexer drops those:
// a batch of unchanged documents in an update) does not hold up the batches made after it.
func TestEmptyBatchTakesNoTurn(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	w, err := Engine{}.Begin(ctx, backend.Gen{Name: "g1", Dir: filepath.Join(t.TempDir(), "g1")}, nil, backend.LexicalBegin{Analyzer: "en"})
	if err != nil {
		t.Fatal(err)
	}
	// No deferred Abort: it would wait behind an Apply this test finds stuck.
	_ = w.NewBatch() // dropped empty
	empty := w.NewBatch()
	if err := w.Apply(ctx, empty); err != nil { // applied empty
		t.Fatal(err)
	}
	b := w.NewBatch()
	if err := b.Add(0, &corpus.Passage{ID: "a#0", Text: "vitamin d deficiency"}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- w.Apply(ctx, b) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatal("Apply waits for the turn of an empty batch")
	}
	c, err := w.Commit(ctx, backend.CommitOptions{})
	if err != nil || c.Docs != 1 {
		t.Fatalf("commit: %+v, %v; want 1 passage", c, err)
	}
}
