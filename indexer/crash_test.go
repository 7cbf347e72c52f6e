package indexer

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kairos-rag/kairos/indexer/manifest"
)

// crashEnv, when set, makes TestCrashResume the child process: it builds (or resumes) the
// index named by the variable and is killed by the parent.
const crashEnv = "KAIROS_CRASH_CHILD"

// crashOptions are the build options of the child and of every resume: the same inputs and
// options, or Resume refuses.
func crashOptions(dir, input string) Options {
	return Options{
		Dir: dir, Inputs: []InputSpec{{Path: input}}, Build: BuildOptions{BatchSize: 100},
		CheckpointEvery: 400, CheckpointAfter: -1, Encoder: &countingEncoder{dim: 32}, HNSW: fastHNSW, EmbedInline: true,
	}
}

// scifactHead writes the first n abstracts of SciFact to a file.
func scifactHead(t testing.TB, n int) string {
	t.Helper()
	f, err := os.Open(shared(t, "data/beir-scifact/corpus.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	path := filepath.Join(t.TempDir(), "head.jsonl")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for i := 0; i < n && sc.Scan(); i++ {
		fmt.Fprintf(out, "%s\n", sc.Bytes())
	}
	return path
}

// TestCrashResume kills a child process building an index with frequent checkpoints at random
// points (SIGKILL, seeded). After every kill the live generation is the previous index and
// verifies, the checkpoint (if any) verifies, and Resume ends with exactly the passages of a
// clean build. Some iterations kill a resuming child too before the final resume.
func TestCrashResume(t *testing.T) {
	if spec := os.Getenv(crashEnv); spec != "" {
		dir, input, _ := strings.Cut(spec, "|")
		if _, err := resumeBuild(context.Background(), crashOptions(dir, input)); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(3)
		}
		os.Exit(0)
	}
	if testing.Short() {
		t.Skip("-short: kills child processes building SciFact at random points")
	}
	ctx := context.Background()
	input := scifactHead(t, 800)
	faq := shared(t, "data/faq-covid-deepset/faq_covidbert.csv")
	// The clean reference is built by a child too, twice, which measures how long a child takes
	// from start to finish; kills land uniformly within the shorter span (one run slowed by a
	// burst of load would otherwise let most later children finish before their kill).
	var clean string
	full := time.Duration(math.MaxInt64)
	for range 2 {
		clean = t.TempDir()
		start := time.Now()
		if !runAndKill(t, clean, input, time.Hour) {
			t.Fatal("reference build did not finish")
		}
		full = min(full, time.Since(start))
	}
	want := livePassages(t, clean)
	wantMan, _ := manifest.Read(mustCurrent(t, clean))

	rng := rand.New(rand.NewSource(7))
	iterations := 15
	if raceEnabled {
		iterations = 4
	}
	kills, resumedFromCheckpoint := 0, 0
	for it := 0; it < iterations; it++ {
		dir := t.TempDir()
		if _, err := Build(ctx, Options{Dir: dir, Inputs: []InputSpec{{Path: faq}}}); err != nil {
			t.Fatal(err)
		}
		prevGen := mustCurrent(t, dir)
		prevMan, _ := manifest.Read(prevGen)
		rounds := 1 + rng.Intn(2) // one or two killed children before the final resume
		for r := 0; r < rounds; r++ {
			delay := time.Duration(rng.Int63n(int64(full)))
			var completed bool
			if resumedFromCheckpoint == 0 && it == iterations-1 {
				// No kill has yet come after a checkpoint (4 iterations under -race leave that
				// to chance, and a timed kill in the second half of the build still missed
				// every checkpoint on a loaded CI machine): the last iteration kills the child
				// the moment it has committed a new checkpoint.
				completed = runAndKillAtCheckpoint(t, dir, input)
			} else {
				completed = runAndKill(t, dir, input, delay)
			}
			if !completed {
				kills++
			}
			rep, err := verifyIndex(ctx, dir)
			if err != nil || !rep.OK() {
				t.Fatalf("iteration %d round %d (kill after %v): verify: %v %v", it, r, delay, err, rep.Problems)
			}
			cur := mustCurrent(t, dir)
			if !completed && cur != prevGen {
				// Possible only if the child committed in the instant before the kill.
				if m, _ := manifest.Read(cur); m.Counts.Passages != len(want) {
					t.Fatalf("iteration %d: live generation %s is neither the previous nor the complete one", it, cur)
				}
			}
			if cur == prevGen {
				if m, err := manifest.Read(cur); err != nil || m.Checksum != prevMan.Checksum {
					t.Fatalf("iteration %d: previous generation changed: %v", it, err)
				}
			}
			if cp, err := checkpointDir(dir); err != nil {
				t.Fatal(err)
			} else if cp != "" {
				resumedFromCheckpoint++
				if rep, err := verifyGenDir(ctx, cp); err != nil || !rep.OK() {
					t.Fatalf("iteration %d: checkpoint %s: %v %v", it, cp, err, rep.Problems)
				}
			}
		}
		sum, err := resumeBuild(ctx, crashOptions(dir, input))
		if err != nil {
			t.Fatalf("iteration %d: resume: %v", it, err)
		}
		if got := livePassages(t, dir); !reflect.DeepEqual(got, want) {
			t.Fatalf("iteration %d: resumed index has %d passages, clean build %d, or different texts", it, len(got), len(want))
		}
		if sum.Counts.Documents != wantMan.Counts.Documents || sum.Counts.Passages != wantMan.Counts.Passages {
			t.Fatalf("iteration %d: counts %+v, clean build %+v", it, sum.Counts, wantMan.Counts)
		}
		if rep, err := verifyIndex(ctx, dir); err != nil || !rep.OK() {
			t.Fatalf("iteration %d: final verify: %v %v", it, err, rep.Problems)
		}
		if cp, _ := checkpointDir(dir); cp != "" {
			t.Fatalf("iteration %d: checkpoint %s left after the build completed", it, cp)
		}
	}
	t.Logf("%d iterations, %d kills, %d resumes from a checkpoint (clean build %v)", iterations, kills, resumedFromCheckpoint, full)
	if kills < iterations/2 || resumedFromCheckpoint == 0 {
		t.Errorf("only %d kills and %d checkpoints: the test did not exercise resuming", kills, resumedFromCheckpoint)
	}

	// A resume with other inputs or options is refused.
	dir := t.TempDir()
	if runAndKillAtCheckpoint(t, dir, input) {
		t.Fatal("the child finished without committing a checkpoint")
	}
	o := crashOptions(dir, input)
	o.Build.MaxWords = 100
	if _, err := resumeBuild(ctx, o); err == nil || !strings.Contains(err.Error(), "options") {
		t.Errorf("resume with other options: %v", err)
	}
	o = crashOptions(dir, input)
	o.Inputs[0].Options.Source = "other"
	if _, err := resumeBuild(ctx, o); err == nil || !strings.Contains(err.Error(), `source "other"`) {
		t.Errorf("resume with another --source: %v", err)
	}
	o = crashOptions(dir, faq)
	if _, err := resumeBuild(ctx, o); err == nil || !strings.Contains(err.Error(), "changed since the checkpoint") {
		t.Errorf("resume with another input: %v", err)
	}
}

func mustCurrent(t testing.TB, dir string) string {
	t.Helper()
	cur, err := manifest.Current(dir)
	if err != nil {
		t.Fatal(err)
	}
	return cur
}

// runAndKill starts the child on dir and SIGKILLs it after delay; it reports whether the
// child finished first.
func runAndKill(t testing.TB, dir, input string, delay time.Duration) (completed bool) {
	t.Helper()
	return runChild(t, dir, input, func(stop <-chan struct{}) bool {
		select {
		case <-stop:
			return false
		case <-time.After(delay):
			return true
		}
	})
}

// runAndKillAtCheckpoint starts the child on dir and SIGKILLs it as soon as a checkpoint
// other than the one dir had at the start is committed; it reports whether the child
// finished first (possible only if it wrote no checkpoint this side of its commit).
func runAndKillAtCheckpoint(t testing.TB, dir, input string) (completed bool) {
	t.Helper()
	before, err := checkpointDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return runChild(t, dir, input, func(stop <-chan struct{}) bool {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return false
			case <-tick.C:
				// A read racing the child's commit may fail; the next tick reads again.
				if cp, err := checkpointDir(dir); err == nil && cp != "" && cp != before {
					return true
				}
			}
		}
	})
}

// runChild starts the child on dir and SIGKILLs it when killNow returns true; killNow must
// return false once stop is closed (the child exited). It reports whether the child finished
// before the kill.
func runChild(t testing.TB, dir, input string, killNow func(stop <-chan struct{}) bool) (completed bool) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashResume$")
	cmd.Env = append(os.Environ(), crashEnv+"="+dir+"|"+input)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	stop := make(chan struct{})
	go func() { done <- cmd.Wait(); close(stop) }()
	kill := killNow(stop)
	if kill {
		cmd.Process.Kill() // SIGKILL; an error means the child had already exited
	}
	err := <-done
	if !kill || err == nil {
		if err != nil {
			t.Fatalf("child failed: %v\n%s", err, stderr.String())
		}
		return true
	}
	return false
}
