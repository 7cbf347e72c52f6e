package indexer

import (
	"context"
	"testing"

	"github.com/kairos-rag/kairos/indexer/backend/blevebm25"
	"github.com/kairos-rag/kairos/indexer/backend/postingsbm25"
	"github.com/kairos-rag/kairos/internal/postings"
)

// TestRAMBudgetReachesPostingsEngine: Options.RAMBudget (--ram-budget) is handed to the
// postings engine of a build and of an update that adopts its base's engine (0: as
// postings.DefaultRAMBudget, SetDefaults), and a budget below postings.MinRAMBudget or
// negative is refused.
func TestRAMBudgetReachesPostingsEngine(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		budget int64
		ok     bool
	}{{0, true}, {postings.MinRAMBudget, true}, {1 << 30, true}, {postings.MinRAMBudget - 1, false}, {-1, false}} {
		o := Options{Dir: t.TempDir(), RAMBudget: tt.budget, Build: BuildOptions{Lexical: LexicalPostings}}
		err := o.validate()
		if (err == nil) != tt.ok {
			t.Fatalf("budget %d: validate %v, want ok %v", tt.budget, err, tt.ok)
		}
		if !tt.ok {
			continue
		}
		want := tt.budget
		if want == 0 {
			want = postings.DefaultRAMBudget
		}
		ix, err := openIndex(ctx, o.Dir)
		if err != nil {
			t.Fatal(err)
		}
		eng, err := ix.engines(ctx, &o, nil)
		if err != nil {
			t.Fatal(err)
		}
		if e, ok := o.eng.Lexical.(postingsbm25.Engine); !ok || e.RAMBudget != want {
			t.Fatalf("budget %d: lexical engine %#v", tt.budget, o.eng.Lexical)
		}
		eng.Close()
		u := Options{Dir: o.Dir, RAMBudget: tt.budget}
		u.SetDefaults()
		base := &Manifest{Options: BuildOptions{Lexical: LexicalPostings}}
		if err := u.adoptLexical(base); err != nil {
			t.Fatal(err)
		}
		if eng, err = ix.engines(ctx, &u, base); err != nil {
			t.Fatal(err)
		}
		if e, ok := u.eng.Lexical.(postingsbm25.Engine); !ok || e.RAMBudget != want {
			t.Fatalf("budget %d: update's lexical engine %#v", tt.budget, u.eng.Lexical)
		}
		eng.Close()
		ix.Close()
	}
	// a bleve build ignores the budget
	o := Options{Dir: t.TempDir(), RAMBudget: 1 << 20, Build: BuildOptions{Lexical: LexicalBleve}}
	if err := o.validate(); err != nil {
		t.Fatal(err)
	}
	ix, err := openIndex(ctx, o.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.engines(ctx, &o, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := o.eng.Lexical.(blevebm25.Engine); !ok {
		t.Fatalf("lexical engine %#v, want bleve", o.eng.Lexical)
	}
}
