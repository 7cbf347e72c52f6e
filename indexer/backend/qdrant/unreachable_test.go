package qdrant

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/qdrant/qdranttest"
)

// TestReadsFailWhenUnreachable: the passage and vector readers' reads run under the caller's
// context, and once the server is gone each returns an error naming it, never an empty or
// false answer (a vector that is missing, a passage that is dead), which a caller would take
// for the index's content.
func TestReadsFailWhenUnreachable(t *testing.T) {
	ctx := t.Context()
	c := qdranttest.Start(t, 1)
	// One retry, quickly: the reads below are meant to fail, and the default retries would
	// spend seconds backing off first.
	e := newEngine(t, c, "gone", Options{Dim: 4, Retries: 1, Backoff: 10 * time.Millisecond, Timeout: 5 * time.Second})
	gen := backend.Gen{Name: "g-000001"}
	ps := sciFact(t)[:20]
	writeLexical(t, e.Lexical(), gen, ps)
	vecs := make([][]float32, len(ps))
	for i := range vecs {
		vecs[i] = []float32{1, float32(i), 0, 1}
	}
	if err := writeVectors(t, e, gen, nil, seq(0, len(ps)), vecs); err != nil {
		t.Fatal(err)
	}
	pr, err := e.OpenPassages(ctx, gen)
	if err != nil {
		t.Fatal(err)
	}
	vr, err := e.Vectors().Open(ctx, gen, pr)
	if err != nil {
		t.Fatal(err)
	}
	defer vr.Close()

	// While the server runs: the reads answer, and a key beyond the passages is absent
	// without an error (the case an unreachable server must not be mistaken for).
	if p, err := pr.Get(ctx, 3); err != nil || p.ID != ps[3].ID {
		t.Fatalf("Get(3) = %q, %v; want %q", p.ID, err, ps[3].ID)
	}
	if ok, err := vr.Has(ctx, 3); !ok || err != nil {
		t.Fatalf("Has(3) = %v, %v; want true", ok, err)
	}
	if ok, err := vr.Has(ctx, 99); ok || err != nil {
		t.Fatalf("Has(99) = %v, %v; want false, no error", ok, err)
	}
	if dead, err := pr.Dead(ctx, 99); !dead || err != nil {
		t.Fatalf("Dead(99) = %v, %v; want true, no error", dead, err)
	}
	// The caller's context reaches the request: a cancelled one fails the read at once.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := pr.Get(cancelled, 3); !errors.Is(err, context.Canceled) {
		t.Errorf("Get under a cancelled context: %v, want context.Canceled", err)
	}
	if _, err := vr.Has(cancelled, 3); !errors.Is(err, context.Canceled) {
		t.Errorf("Has under a cancelled context: %v, want context.Canceled", err)
	}

	c.Kill(0)
	host := c.Peers[0].GRPCAddr()
	checks := []struct {
		name string
		read func() (answer any, err error)
	}{
		{"Get", func() (any, error) { return pr.Get(ctx, 3) }},
		{"DocID", func() (any, error) { return pr.DocID(ctx, 3) }},
		{"Meta", func() (any, error) { _, src, err := pr.Meta(ctx, 3); return src, err }},
		{"Dead", func() (any, error) { return pr.Dead(ctx, 3) }},
		{"GetMany", func() (any, error) { return pr.GetMany(ctx, []uint32{3, 4}) }},
		{"Each", func() (any, error) {
			n := 0
			err := pr.Each(ctx, func(uint32, corpus.Passage) error { n++; return nil })
			return n, err
		}},
		{"Vector", func() (any, error) { v, _, err := vr.Vector(ctx, 3); return v, err }},
		{"Has", func() (any, error) { return vr.Has(ctx, 3) }},
	}
	for _, tc := range checks {
		got, err := tc.read()
		switch {
		case err == nil:
			t.Errorf("%s with the server gone: %v and no error", tc.name, got)
		case errors.Is(err, errNoPassage):
			t.Errorf("%s with the server gone: %v, a missing passage rather than a failed request", tc.name, err)
		case !strings.Contains(err.Error(), host):
			t.Errorf("%s with the server gone: %v, want an error naming %s", tc.name, err, host)
		}
	}
}
