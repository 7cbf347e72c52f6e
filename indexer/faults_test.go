package indexer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/kairos-rag/kairos/indexer/manifest"
)

// The fault-injection suite: every writer operation (index, resume, update, update followed
// by compaction, delete, compact) is run once with a recording hook that lists the commit
// points it passes (Options.faultAt), then, for each point reached, (1) killed there with
// SIGKILL in a child process and (2) failed there with an injected ENOSPC in process. After
// every fault the live generation must verify and hold exactly the passages of before or of
// after the operation (anything else is data lost), and rerunning the operation must reach
// the clean result and leave no unfinished generation behind.

// faultChildEnv, when set, makes TestFaultInjection the child: it runs one operation and
// SIGKILLs itself at one commit point. The value is a JSON faultChild.
const faultChildEnv = "KAIROS_FAULT_CHILD"

type faultChild struct {
	Op    string    `json:"op"`
	Dir   string    `json:"dir"`
	Point string    `json:"point"`
	Occ   int       `json:"occ"` // kill at this occurrence of Point (1-based)
	Fx    faultData `json:"fx"`
}

// faultData are the inputs of the operations, shared by parent and child.
type faultData struct {
	Older, Newer string   // two revisions of 120 SciFact abstracts
	Deleted      []string // document ids the delete operation removes
	Lexical      string   // the lexical engine of every index ("": the default)
}

// options are the writer options of every operation: small batches and checkpoints so
// that each operation passes many commit points.
func (fx faultData) options(dir, input string, hook func(string) error) Options {
	o := Options{Dir: dir, Build: BuildOptions{BatchSize: 30, Lexical: fx.Lexical}, CheckpointEvery: 50,
		CheckpointAfter: -1, Encoder: &countingEncoder{dim: 16}, HNSW: fastHNSW, EmbedInline: true, faultAt: hook}
	if input != "" {
		o.Inputs = []InputSpec{{Path: input}}
	}
	return o
}

// faultRun runs an operation on the index in dir, calling hook at each commit point.
type faultRun func(ctx context.Context, dir string, fx faultData, hook func(string) error) error

// faultOps are the operations under test. start names the state each starts from.
var faultOps = []struct {
	name, start string
	run         faultRun
}{
	{"index", "older", func(ctx context.Context, dir string, fx faultData, hook func(string) error) error {
		_, err := Build(ctx, fx.options(dir, fx.Newer, hook))
		return err
	}},
	{"resume", "checkpointed", func(ctx context.Context, dir string, fx faultData, hook func(string) error) error {
		_, err := resumeBuild(ctx, fx.options(dir, fx.Newer, hook))
		return err
	}},
	{"update", "older", func(ctx context.Context, dir string, fx faultData, hook func(string) error) error {
		_, err := updateIndex(ctx, UpdateOptions{Options: fx.options(dir, fx.Newer, hook), DeleteMissing: true, CompactRatio: -1})
		return err
	}},
	{"update+compact", "older", func(ctx context.Context, dir string, fx faultData, hook func(string) error) error {
		s, err := updateIndex(ctx, UpdateOptions{Options: fx.options(dir, fx.Newer, hook), DeleteMissing: true, CompactRatio: 0.01})
		if err == nil && s.CompactionError != "" {
			err = errors.New(s.CompactionError)
		}
		return err
	}},
	{"delete", "older", func(ctx context.Context, dir string, fx faultData, hook func(string) error) error {
		_, err := deleteDocs(ctx, UpdateOptions{Options: fx.options(dir, "", hook), CompactRatio: -1}, fx.Deleted)
		return err
	}},
	{"compact", "deleted", func(ctx context.Context, dir string, fx faultData, hook func(string) error) error {
		o := fx.options(dir, "", hook)
		_, err := compactWith(ctx, &o)
		return err
	}},
}

// recoverOp reruns an operation after a fault: a build with a checkpoint resumes, anything
// else runs again.
func recoverOp(ctx context.Context, op, dir string, fx faultData) error {
	for _, o := range faultOps {
		if o.name != op {
			continue
		}
		if op == "index" || op == "resume" {
			if cp, _ := checkpointDir(dir); cp != "" {
				_, err := resumeBuild(ctx, fx.options(dir, fx.Newer, nil))
				return err
			}
			_, err := Build(ctx, fx.options(dir, fx.Newer, nil))
			return err
		}
		return o.run(ctx, dir, fx, nil)
	}
	return fmt.Errorf("unknown operation %q", op)
}

// faultFixture writes the two revisions: older is the first 120 abstracts; newer drops every
// 10th, edits every 7th and adds 20 more. The delete operation removes the first 20.
func faultFixture(t testing.TB) faultData {
	t.Helper()
	src := scifactHead(t, 140)
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	dir := t.TempDir()
	fx := faultData{Older: filepath.Join(dir, "older.jsonl"), Newer: filepath.Join(dir, "newer.jsonl")}
	var older, newer strings.Builder
	for i, l := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatal(err)
		}
		if i < 120 {
			older.WriteString(l + "\n")
			if i < 20 {
				fx.Deleted = append(fx.Deleted, fmt.Sprint(rec["_id"]))
			}
		}
		switch {
		case i < 120 && i%10 == 0:
			continue
		case i < 120 && i%7 == 0:
			rec["text"] = fmt.Sprint(rec["text"]) + " Revised."
			nb, _ := json.Marshal(rec)
			l = string(nb)
		}
		newer.WriteString(l + "\n")
	}
	if err := os.WriteFile(fx.Older, []byte(older.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fx.Newer, []byte(newer.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return fx
}

// faultStarts builds the start states: "older" (older built), "deleted" (older minus the
// deleted documents, tombstoned) and "checkpointed" (older live, and a build of newer
// interrupted after its second checkpoint).
func faultStarts(t testing.TB, fx faultData) map[string]string {
	t.Helper()
	ctx := context.Background()
	root := t.TempDir()
	st := map[string]string{}
	older := filepath.Join(root, "older")
	if _, err := Build(ctx, fx.options(older, fx.Older, nil)); err != nil {
		t.Fatal(err)
	}
	st["older"] = older
	del := filepath.Join(root, "deleted")
	copyTree(t, older, del)
	if _, err := deleteDocs(ctx, UpdateOptions{Options: fx.options(del, "", nil), CompactRatio: -1}, fx.Deleted); err != nil {
		t.Fatal(err)
	}
	st["deleted"] = del
	cp := filepath.Join(root, "checkpointed")
	copyTree(t, older, cp)
	n := 0
	stop := errors.New("stop after the second checkpoint")
	_, err := Build(ctx, fx.options(cp, fx.Newer, func(p string) error {
		if p == "checkpoint-cleaned" {
			if n++; n == 2 {
				return stop
			}
		}
		return nil
	}))
	if !errors.Is(err, stop) {
		t.Fatalf("interrupting the build: %v", err)
	}
	if g, _ := checkpointDir(cp); g == "" {
		t.Fatal("no checkpoint after the interrupted build")
	}
	st["checkpointed"] = cp
	return st
}

// point is one occurrence of a named commit point.
type point struct {
	name string
	occ  int
}

func (p point) String() string { return fmt.Sprintf("%s#%d", p.name, p.occ) }

// recordPoints runs op on a copy of start and returns the commit points it passed. Of the
// many "batch-applied" and checkpoint points only the first and the last of each name are
// kept: the first checkpoint has none before it, and every later one replaces one as the
// last does.
func recordPoints(t *testing.T, run faultRun, start string, fx faultData) []point {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "idx")
	copyTree(t, start, dir)
	seen := map[string]int{}
	var pts []point
	err := run(context.Background(), dir, fx, func(p string) error {
		seen[p]++
		pts = append(pts, point{p, seen[p]})
		return nil
	})
	if err != nil {
		t.Fatalf("recording run: %v", err)
	}
	var out []point
	for _, p := range pts {
		repeated := p.name == "batch-applied" || strings.HasPrefix(p.name, "checkpoint-")
		if !repeated || p.occ == 1 || p.occ == seen[p.name] {
			out = append(out, p)
		}
	}
	return out
}

// faultCounts are the suite's figures, counted by trials that run in parallel.
type faultCounts struct {
	mu                                      sync.Mutex
	trials, kills, injected, survived, lost int
}

// trial counts one trial: a child SIGKILLed (kill) or an injected error, and whether the
// index survived it.
func (c *faultCounts) trial(kill, survived bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.trials++
	if kill {
		c.kills++
	} else {
		c.injected++
	}
	if survived {
		c.survived++
	} else {
		c.lost++
	}
}

// checkAfterFault checks the index after a fault: the live generation verifies and holds the
// passages of before or of after; then the operation rerun reaches after, with no unfinished
// generation left. It returns false when data was lost.
func checkAfterFault(t *testing.T, op, dir string, fx faultData, before, after map[string]string, what string) bool {
	t.Helper()
	ctx := context.Background()
	rep, err := verifyIndex(ctx, dir)
	if err != nil || !rep.OK() {
		t.Errorf("%s: live generation does not verify: %v %v", what, err, rep.Problems)
		return false
	}
	got := livePassages(t, dir)
	if !reflect.DeepEqual(got, before) && !reflect.DeepEqual(got, after) {
		t.Errorf("%s: live generation holds %d passages, neither before (%d) nor after (%d)", what, len(got), len(before), len(after))
		return false
	}
	if cp, _ := checkpointDir(dir); cp != "" {
		if rep, err := verifyGenDir(ctx, cp); err != nil || !rep.OK() {
			t.Errorf("%s: checkpoint %s does not verify: %v %v", what, cp, err, rep.Problems)
			return false
		}
	}
	if err := recoverOp(ctx, op, dir, fx); err != nil {
		t.Errorf("%s: rerun: %v", what, err)
		return false
	}
	if got := livePassages(t, dir); !reflect.DeepEqual(got, after) {
		t.Errorf("%s: after the rerun %d passages, want %d", what, len(got), len(after))
		return false
	}
	if tmp, _ := filepath.Glob(filepath.Join(dir, "g-*.tmp")); len(tmp) > 0 {
		t.Errorf("%s: unfinished generations left after the rerun: %v", what, tmp)
	}
	return true
}

func TestFaultInjection(t *testing.T) {
	if spec := os.Getenv(faultChildEnv); spec != "" {
		faultChildMain(spec)
		return
	}
	if testing.Short() {
		t.Skip("fault injection suite: not with -short")
	}
	// Every operation under bleve. Under postings, the operations whose commit points differ
	// by engine: a build with checkpoints (its segments, the count at commit), a derived
	// generation that compacts, and a compaction; resume, update and delete go through the
	// same engine calls, and the suite would take twice as long.
	t.Run(LexicalBleve, func(t *testing.T) { faultSuite(t, LexicalBleve, nil) })
	t.Run(LexicalPostings, func(t *testing.T) {
		if raceEnabled {
			// Under the race detector without -short (make test's race pass skips the suite)
			// it runs once, bleve with injected errors only; the plain pass runs both
			// engines, children and all.
			t.Skip("postings engine: the plain pass runs it")
		}
		faultSuite(t, LexicalPostings, map[string]bool{"index": true, "update+compact": true, "compact": true})
	})
}

// faultSuite runs the operations named in ops (nil: all) and their faults on indexes of the
// lexical engine named.
func faultSuite(t *testing.T, lexical string, ops map[string]bool) {
	fx := faultFixture(t)
	fx.Lexical = lexical
	if raceEnabled {
		t.Log("race detector: injected errors only; the plain pass also kills a child at every point")
	}
	starts := faultStarts(t, fx)
	var c faultCounts
	for _, op := range faultOps {
		if ops != nil && !ops[op.name] {
			continue
		}
		t.Run(op.name, func(t *testing.T) {
			ctx := context.Background()
			before := livePassages(t, starts[op.start])
			clean := filepath.Join(t.TempDir(), "clean")
			copyTree(t, starts[op.start], clean)
			if err := op.run(ctx, clean, fx, nil); err != nil {
				t.Fatal(err)
			}
			after := livePassages(t, clean)
			if m, _ := manifest.Read(mustCurrent(t, clean)); reflect.DeepEqual(before, after) && (op.name != "compact" || m.Tombstones != 0) {
				// Compaction keeps the passages and drops the tombstones.
				t.Fatal("the operation changes nothing: the fixture is wrong")
			}
			pts := recordPoints(t, op.run, starts[op.start], fx)
			names := map[string]bool{}
			for _, p := range pts {
				names[p.name] = true
			}
			if !names["current-written"] {
				t.Fatalf("no commit recorded: points %v", pts)
			}
			for _, p := range pts {
				// The trials are independent (each on its own copy of the start), and one at a
				// time they kept 1.2 of two cores busy: two run at once.
				t.Run(p.String(), func(t *testing.T) {
					t.Parallel()
					faultTrials(t, op.name, op.run, starts[op.start], fx, p, before, after, &c)
				})
			}
			list := make([]string, 0, len(names))
			for n := range names {
				list = append(list, n)
			}
			sort.Strings(list)
			t.Logf("%s: %d fault points (%d named: %s)", op.name, len(pts), len(list), strings.Join(list, " "))
		})
	}
	t.Logf("fault injection: %d trials (%d SIGKILLs, %d injected ENOSPC), %d faults survived, %d with data lost",
		c.trials, c.kills, c.injected, c.survived, c.lost)
	if c.lost != 0 || c.survived != c.trials {
		t.Errorf("data lost in %d of %d trials", c.lost, c.trials)
	}
}

// faultTrials kills a child running op at p (except under the race detector) and injects ENOSPC
// at p in this process, each on a copy of start, and checks the index after each.
func faultTrials(t *testing.T, op string, run faultRun, start string, fx faultData, p point, before, after map[string]string, c *faultCounts) {
	// SIGKILL at p, in a child. Under the race detector the children are skipped: they are
	// processes killed at a point, not goroutines racing, and the plain pass runs them; the
	// injected errors below run the writer in this process.
	if !raceEnabled {
		dir := filepath.Join(t.TempDir(), "idx")
		copyTree(t, start, dir)
		if !runFaultChild(t, faultChild{Op: op, Dir: dir, Point: p.name, Occ: p.occ, Fx: fx}) {
			// A trial, not a kill: the summary's trials then exceed what survived.
			c.mu.Lock()
			c.trials++
			c.mu.Unlock()
			t.Errorf("%s: the child was not killed at %v", op, p)
			return
		}
		c.trial(true, checkAfterFault(t, op, dir, fx, before, after, op+": SIGKILL at "+p.String()))
	}

	// ENOSPC at p, in process.
	dir := filepath.Join(t.TempDir(), "idx")
	copyTree(t, start, dir)
	n := 0
	err := run(context.Background(), dir, fx, func(name string) error {
		if name == p.name {
			if n++; n == p.occ {
				return fmt.Errorf("injected at %s: %w", p, syscall.ENOSPC)
			}
		}
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "no space left on device") {
		t.Errorf("%s: ENOSPC at %v: got %v, want the injected error", op, p, err)
	}
	c.trial(false, checkAfterFault(t, op, dir, fx, before, after, op+": ENOSPC at "+p.String()))
}

// runFaultChild runs the child and reports whether it died of SIGKILL.
func runFaultChild(t *testing.T, fc faultChild) (killed bool) {
	t.Helper()
	spec, _ := json.Marshal(fc)
	cmd := exec.Command(os.Args[0], "-test.run=^TestFaultInjection$")
	cmd.Env = append(os.Environ(), faultChildEnv+"="+string(spec))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			return true
		}
	}
	t.Logf("child %s at %s#%d: %v\n%s", fc.Op, fc.Point, fc.Occ, err, stderr.String())
	return false
}

// faultChildMain is the child: it runs the operation and kills itself at the point.
func faultChildMain(spec string) {
	var fc faultChild
	if err := json.Unmarshal([]byte(spec), &fc); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(3)
	}
	n := 0
	hook := func(p string) error {
		if p == fc.Point {
			if n++; n == fc.Occ {
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {} // the signal is on its way
			}
		}
		return nil
	}
	for _, op := range faultOps {
		if op.name == fc.Op {
			err := op.run(context.Background(), fc.Dir, fc.Fx, hook)
			fmt.Fprintln(os.Stderr, "child: finished without reaching the point:", err)
			os.Exit(4)
		}
	}
	os.Exit(5)
}

// checkpointError is an in-process reproduction of the "close of closed channel": an
// I/O error while a checkpoint is finished used to close bleve twice; the error must come out.
func TestCheckpointIOError(t *testing.T) {
	fx := faultFixture(t)
	for _, at := range []string{"checkpoint-finished", "synced", "manifest-written", "checkpoint-renamed", "checkpoint-recorded"} {
		t.Run(at, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "idx")
			_, err := Build(context.Background(), fx.options(dir, fx.Older, func(p string) error {
				if p == at {
					return &os.PathError{Op: "write", Path: "injected", Err: syscall.EIO}
				}
				return nil
			}))
			if !errors.Is(err, syscall.EIO) {
				t.Fatalf("got %v, want the injected EIO", err)
			}
			if _, err := manifest.Current(dir); !errors.Is(err, ErrNoIndex) {
				t.Errorf("a failed first build left a live index: %v", err)
			}
		})
	}
}

// dirSize sums the sizes of the regular files under dir.
func dirSize(t testing.TB, dir string) int64 {
	t.Helper()
	var n int64
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// TestEmptyInputKeepsLiveIndex: an empty or all-bad input never replaces a live index unless
// AllowEmpty says so.
func TestEmptyInputKeepsLiveIndex(t *testing.T) {
	fx := faultFixture(t)
	starts := faultStarts(t, fx)
	tmp := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	empty := write("empty.jsonl", "\n\n")
	allBad := write("bad.jsonl", `{"_id":"1","title":"t"}`+"\n"+`{"_id":"2","text":""}`+"\n")
	ctx := context.Background()
	for _, tt := range []struct {
		name  string
		run   func(dir string, allow bool) error
		empty bool // with AllowEmpty the live index ends up empty
	}{
		{"build from an empty file", func(dir string, allow bool) error {
			o := fx.options(dir, empty, nil)
			o.AllowEmpty = allow
			_, err := Build(ctx, o)
			return err
		}, true},
		{"build from all-bad records, skipped", func(dir string, allow bool) error {
			o := fx.options(dir, allBad, nil)
			o.SkipBad, o.AllowEmpty = true, allow
			_, err := Build(ctx, o)
			return err
		}, true},
		{"update --delete-missing from an empty file", func(dir string, allow bool) error {
			o := fx.options(dir, empty, nil)
			o.AllowEmpty = allow
			_, err := updateIndex(ctx, UpdateOptions{Options: o, DeleteMissing: true, CompactRatio: -1})
			return err
		}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "idx")
			copyTree(t, starts["older"], dir)
			live := mustCurrent(t, dir)
			want := livePassages(t, dir)
			if err := tt.run(dir, false); !errors.Is(err, ErrEmptyInput) {
				t.Fatalf("got %v, want ErrEmptyInput", err)
			}
			if cur := mustCurrent(t, dir); cur != live || !reflect.DeepEqual(livePassages(t, dir), want) {
				t.Fatalf("the live generation changed: %s -> %s", live, cur)
			}
			if err := tt.run(dir, true); err != nil {
				t.Fatalf("with AllowEmpty: %v", err)
			}
			if got := livePassages(t, dir); (len(got) == 0) != tt.empty {
				t.Errorf("with AllowEmpty: %d live passages", len(got))
			}
		})
	}
}

// TestLockSurvivesFileDeletion: the writer lock is on the directory, so no file a user may
// delete releases it; taking it removes unfinished generations a killed writer left.
func TestLockSurvivesFileDeletion(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, manifest.GenerationName(7)+tmpSuffix)
	if err := os.MkdirAll(filepath.Join(stale, "bm25"), 0o755); err != nil {
		t.Fatal(err)
	}
	unlock, err := lockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("unfinished generation %s not removed: %v", stale, err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries { // whatever a user deletes by hand
		os.RemoveAll(filepath.Join(dir, e.Name()))
	}
	if _, err := lockDir(dir); !errors.Is(err, ErrLocked) {
		t.Errorf("second writer after the directory was emptied: %v, want ErrLocked", err)
	}
	unlock()
	unlock2, err := lockDir(dir)
	if err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	unlock2()
}
