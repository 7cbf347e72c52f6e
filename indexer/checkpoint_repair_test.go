package indexer

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/hnswvec"
)

// commitLog records, in order, what a build asks of its graph writers.
type commitLog struct {
	mu    sync.Mutex
	calls []string
}

func (l *commitLog) add(s string) {
	l.mu.Lock()
	l.calls = append(l.calls, s)
	l.mu.Unlock()
}

func (l *commitLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.calls
	l.calls = nil
	return c
}

// loggingVectors is the real graph engine, its writers' commits recorded.
type loggingVectors struct {
	hnswvec.Engine
	log *commitLog
}

// Begin logs "begin", then what it is asked of the base and the size: "adopt" (a checkpoint
// to go on from) and "reserve N" (N more vectors coming than the part holds).
func (e loggingVectors) Begin(ctx context.Context, gen backend.Gen, dim int, base backend.VectorReader, o backend.VectorBegin) (backend.VectorWriter, error) {
	w, err := e.Engine.Begin(ctx, gen, dim, base, o)
	if err != nil {
		return nil, err
	}
	e.log.add("begin")
	if o.Adopt && base != nil {
		e.log.add("adopt")
	}
	if more := o.Expect - w.Len(); more > 0 {
		e.log.add(fmt.Sprintf("reserve %d", more))
	}
	return &loggingWriter{VectorWriter: w, log: e.log}, nil
}

type loggingWriter struct {
	backend.VectorWriter
	log *commitLog
}

// Commit logs "commit", or "checkpoint" for a checkpoint's (saved without the repair pass).
func (w *loggingWriter) Commit(ctx context.Context, o backend.CommitOptions) (backend.VectorCommit, error) {
	w.log.add(map[bool]string{false: "commit", true: "checkpoint"}[o.Checkpoint])
	return w.VectorWriter.Commit(ctx, o)
}

// checkpointEveryBatch are the options of a dense build of input that checkpoints after every
// batch of 100 passages, its graph writers' calls recorded in log.
func checkpointEveryBatch(dir, input string, enc PassageEncoder, lexicalFirst bool, log *commitLog) Options {
	return Options{Dir: dir, Inputs: []InputSpec{{Path: input}}, Encoder: enc, HNSW: fastHNSW, EmbedInline: !lexicalFirst,
		Build: BuildOptions{BatchSize: 100}, CheckpointEvery: 1, CheckpointAfter: time.Nanosecond,
		Engines: Engines{Vectors: loggingVectors{Engine: hnswvec.Engine{Params: fastHNSW}, log: log}}}
}

// referenceBuild builds input with the counting encoder, without checkpoints, and opens it:
// the vectors a checkpointed build must end with.
func referenceBuild(t *testing.T, input string) *Generation {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ref")
	if _, err := Build(context.Background(), Options{Dir: dir, Inputs: []InputSpec{{Path: input}}, EmbedInline: true, Encoder: &countingEncoder{dim: 32}, HNSW: fastHNSW}); err != nil {
		t.Fatal(err)
	}
	return openLive(t, dir)
}

// checkCheckpointCalls: a build that checkpointed saved each checkpoint's graph unrepaired,
// every writer that went on from one adopted it (so that its final save repairs the graph
// whole), and only the last writer saved the graph repaired.
func checkCheckpointCalls(t *testing.T, what string, calls []string, resumed bool) {
	t.Helper()
	got := strings.Join(calls, " ")
	if n := strings.Count(got, "checkpoint"); n < 2 && !resumed {
		t.Fatalf("%s: %d checkpoints, want several: %s", what, n, got)
	}
	if strings.Count(got, "commit") != 1 || calls[len(calls)-1] != "commit" {
		t.Errorf("%s: want one repaired save, last: %s", what, got)
	}
	for i, c := range calls {
		if c == "begin" && (i > 0 || resumed) && (i+1 == len(calls) || calls[i+1] != "adopt") {
			t.Errorf("%s: writer %d goes on from a checkpoint without adopting it: %s", what, i, got)
		}
	}
}

// TestCheckpointsSaveGraphUnrepaired: the checkpoints of a dense build, inline and
// LexicalFirst, and of a resumed one, save their graphs without the repair pass, which the
// final save runs once over the whole graph; an update, which goes on from a live graph, does
// not ask for it. The vectors and the verification are those of a build without checkpoints.
func TestCheckpointsSaveGraphUnrepaired(t *testing.T) {
	input := scifactHead(t, 300)
	ctx := context.Background()
	refGen := referenceBuild(t, input)
	defer refGen.Close()
	log := &commitLog{}
	opts := func(dir string, enc PassageEncoder, first bool) Options {
		return checkpointEveryBatch(dir, input, enc, first, log)
	}
	for _, first := range []bool{false, true} {
		dir := filepath.Join(t.TempDir(), "idx")
		if _, err := Build(ctx, opts(dir, &countingEncoder{dim: 32}, first)); err != nil {
			t.Fatal(err)
		}
		what := map[bool]string{false: "inline build", true: "LexicalFirst build"}[first]
		checkCheckpointCalls(t, what, log.take(), false)
		sameVectors(t, refGen, dir)
		if rep, err := verifyIndex(ctx, dir); err != nil || !rep.OK() {
			t.Errorf("%s: verify: %v %+v", what, err, rep)
		}

		u := UpdateOptions{Options: opts(dir, &countingEncoder{dim: 32}, false), CompactRatio: -1}
		u.Inputs = []InputSpec{{Path: scifactHead(t, 320)}}
		if _, err := updateIndex(ctx, u); err != nil {
			t.Fatal(err)
		}
		if calls := log.take(); !slices.Contains(calls, "commit") || slices.Contains(calls, "adopt") || slices.Contains(calls, "checkpoint") {
			t.Errorf("%s: update: %v, want a plain commit of the live graph's successor", what, calls)
		}
	}

	// Interrupted after some checkpoints of the embedding, then resumed.
	dir := filepath.Join(t.TempDir(), "resumed")
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if _, err := Build(cctx, opts(dir, &cancelEncoder{countingEncoder: &countingEncoder{dim: 32}, n: 4, cancel: cancel}, true)); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted build: %v", err)
	}
	log.take()
	if _, err := resumeBuild(ctx, opts(dir, &countingEncoder{dim: 32}, true)); err != nil {
		t.Fatal(err)
	}
	checkCheckpointCalls(t, "resumed build", log.take(), true)
	sameVectors(t, refGen, dir)
	if rep, err := verifyIndex(ctx, dir); err != nil || !rep.OK() {
		t.Errorf("resumed build: verify: %v %+v", err, rep)
	}
}

// TestResumeWithNothingLeft: a build stopped after a checkpoint that holds every passage (the
// inline build before its final commit, the embedding half before its generation goes live)
// resumes by adding nothing to the checkpoint's graph, which it opens mapped: the graph is
// adopted, read into memory and repaired by the final commit, and the index verifies. (Before
// the graph was read into memory for it, the repair pass panicked on the read-only mapping.)
func TestResumeWithNothingLeft(t *testing.T) {
	input := scifactHead(t, 300)
	ctx := context.Background()
	boom := errors.New("stopped before the final commit")
	for _, tc := range []struct {
		name  string
		first bool
		stop  string // the fault point, failed at its nth passing
		nth   int
	}{
		{"inline", false, "finished", 1},
		{"LexicalFirst", true, "gen-renamed", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := &commitLog{}
			dir := filepath.Join(t.TempDir(), "idx")
			opts := func(hook func(string) error) Options {
				o := checkpointEveryBatch(dir, input, &countingEncoder{dim: 32}, tc.first, log)
				o.faultAt = hook
				return o
			}
			seen := 0
			_, err := Build(ctx, opts(func(p string) error {
				if p == tc.stop {
					if seen++; seen == tc.nth {
						return boom
					}
				}
				return nil
			}))
			if !errors.Is(err, boom) {
				t.Fatalf("build: %v", err)
			}
			log.take()
			enc := &countingEncoder{dim: 32}
			o := opts(nil)
			o.Encoder = enc
			if _, err := resumeBuild(ctx, o); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(log.take(), " "); got != "begin adopt commit" || enc.texts.Load() != 0 {
				t.Errorf("resume: %s, %d passages embedded; want the checkpoint's graph adopted and committed, nothing embedded", got, enc.texts.Load())
			}
			if rep, err := verifyIndex(ctx, dir); err != nil || !rep.OK() {
				t.Errorf("verify: %v %+v", err, rep)
			}
		})
	}
}
