package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kairos-rag/kairos/corpus/document"
	"github.com/kairos-rag/kairos/indexer"
)

// stopWhen runs kairos index with args, cancelling it (as Ctrl-C does) once ready reports
// true; it returns stdout, stderr and the error.
func stopWhen(t *testing.T, args []string, ready func() bool) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			if ready() {
				cancel()
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	var stdout, stderr bytes.Buffer
	err := Run(ctx, append([]string{"index"}, args...), strings.NewReader(""), &stdout, &stderr)
	return stdout.String(), stderr.String(), err
}

func exists(path string) bool { _, err := os.Stat(path); return err == nil }

// A dense build stopped says what was kept and prints the command that resumes it; that
// command, run as printed, completes the index. Stopped after a checkpoint of a build that
// embeds inline (--bm25-first=false), the checkpoint holds passages and vectors; stopped
// after a checkpoint of the BM25 half (the default), it holds passages; stopped while
// embedding, the BM25 index is live. Stopped before anything was kept, it says so and that
// the live index is unchanged.
func TestIndexInterruptedSaysWhatWasKept(t *testing.T) {
	model := coreShared(t, "models/synthetic/static-model2vec")
	corpusFile := filepath.Join(t.TempDir(), "sf.jsonl")
	writeHead(t, coreShared(t, "data/beir-scifact/corpus.jsonl"), corpusFile, 1500)
	for _, tc := range []struct {
		name  string
		extra []string
		stop  func(idx string) func() bool
		want  string // regexp of the notice; the last group is the resume command's arguments
	}{
		{"inline, after a checkpoint", []string{"--bm25-first=false"},
			func(idx string) func() bool { return func() bool { return exists(filepath.Join(idx, "CHECKPOINT")) } },
			`kairos: interrupted: kept checkpoint generation \d+ \((\d+) passages, (\d+) embedded; \S+ read up to document \d+\); there is no index at \S+ yet\.\n  Continue with: kairos index --resume (.*)\n`},
		{"bm25 first, after a checkpoint", []string{"--checkpoint-every", "1", "--checkpoint-after", "0"}, // the BM25 half checkpoints by count
			func(idx string) func() bool { return func() bool { return exists(filepath.Join(idx, "CHECKPOINT")) } },
			`kairos: interrupted: kept checkpoint generation \d+ \((\d+) passages(); \S+ read up to document \d+\); there is no index at \S+ yet\.\n  Continue with: kairos index --resume (.*)\n`},
		{"bm25 first, while embedding", []string{"--checkpoint-every", "0"},
			func(idx string) func() bool { return func() bool { return exists(filepath.Join(idx, "CURRENT")) } },
			`kairos: interrupted while embedding: kept the BM25 index \(generation \d+, (\d+) passages\), live and searchable; the vectors were not finished\.\n  Continue with: kairos index --resume (.*)\n`},
		{"bm25 first, after an embedding checkpoint", nil, // the embedding checkpoints every --checkpoint-after
			func(idx string) func() bool {
				return func() bool {
					b, err := os.ReadFile(filepath.Join(idx, "CHECKPOINT"))
					return err == nil && strings.Contains(string(b), `"embedding"`)
				}
			},
			`kairos: interrupted while embedding: kept the BM25 index \(generation \d+, (\d+) passages\), live and searchable; the vectors were not finished \(checkpoint generation \d+ holds (\d+) of them\)\.\n  Continue with: kairos index --resume (.*)\n`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The stop is polled; a build that a starved poller let finish is run again
			// (three tries), so that only a build that cannot be stopped fails the test.
			var stderr string
			var err error
			for try := 1; try <= 3; try++ {
				idx := filepath.Join(t.TempDir(), "idx")
				args := append([]string{"--input", corpusFile, "--index", idx, "--model", model, "--batch", "200", "--checkpoint-after", "1ns"}, tc.extra...)
				if _, stderr, err = stopWhen(t, args, tc.stop(idx)); err != nil {
					break
				}
				t.Logf("try %d: the build finished before the stop", try)
			}
			if !errors.Is(err, context.Canceled) || ExitCode(err) != 130 {
				t.Fatalf("err %v (exit %d), want the build cancelled, exit 130\n%s", err, ExitCode(err), stderr)
			}
			// The error is the notice: main prints it after "kairos: ".
			notice := "kairos: " + err.Error() + "\n"
			m := regexp.MustCompile(tc.want).FindStringSubmatch(notice)
			if m == nil {
				t.Fatalf("the error does not say what was kept:\n%s", notice)
			}
			if strings.Contains(notice+stderr, "context canceled") {
				t.Errorf("a raw context error reaches the person:\n%s%s", notice, stderr)
			}
			if m[1] == "0" || (tc.name == "inline, after a checkpoint" && m[2] != m[1]) {
				t.Errorf("kept %s passages, %s embedded", m[1], m[2])
			}
			out, stderr2, err := runCLI(t, append([]string{"index", "--resume"}, strings.Fields(m[len(m)-1])...)...)
			if err != nil {
				t.Fatalf("the printed command failed: %v\n%s", err, stderr2)
			}
			if !strings.Contains(out, "documents   1500") || !regexp.MustCompile(`vectors     (\d+) `).MatchString(out) ||
				!strings.Contains(out, "passages    "+regexp.MustCompile(`vectors     (\d+) `).FindStringSubmatch(out)[1]) {
				t.Errorf("resumed build is not complete:\n%s", out)
			}
		})
	}

	// Stopped at once: nothing kept; an index built before stays live.
	idx := filepath.Join(t.TempDir(), "idx")
	if _, stderr, err := runCLI(t, "index", "--quiet", "--input", corpusFile, "--index", idx); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout, stderr bytes.Buffer
	err := Run(ctx, []string{"index", "--force", "--quiet", "--input", corpusFile, "--index", idx, "--model", model}, strings.NewReader(""), &stdout, &stderr)
	if !errors.Is(err, context.Canceled) || ExitCode(err) != 130 || !strings.HasPrefix(err.Error(),
		"interrupted before the first checkpoint: nothing of this build was kept; the live index (g-") ||
		!strings.Contains(err.Error(), ") is unchanged and searchable.") {
		t.Errorf("err %v (exit %d)\n%s", err, ExitCode(err), stderr.String())
	}
}

// A new build interrupted before it wrote anything leaves no directory behind, says so, and
// exits 130; so does one stopped by an error before it wrote anything (an input in a second
// language).
func TestIndexInterruptedEarlyLeavesNoDirectory(t *testing.T) {
	corpusFile := filepath.Join(t.TempDir(), "sf.jsonl")
	writeHead(t, coreShared(t, "data/beir-scifact/corpus.jsonl"), corpusFile, 1500)
	var err error
	var stderr string
	idx := filepath.Join(t.TempDir(), "new.idx")
	for try := 1; try <= 3; try++ { // as in TestIndexInterruptedSaysWhatWasKept
		// Stopped as soon as the build has made its directory.
		if _, stderr, err = stopWhen(t, []string{"--quiet", "--input", corpusFile, "--index", idx}, func() bool { return exists(idx) }); err != nil {
			break
		}
		t.Logf("try %d: the build finished before the stop", try)
		os.RemoveAll(idx)
	}
	if !errors.Is(err, context.Canceled) || ExitCode(err) != 130 {
		t.Fatalf("err %v (exit %d), want the build cancelled, exit 130\n%s", err, ExitCode(err), stderr)
	}
	if want := "interrupted before the first checkpoint: nothing of this build was kept; there is no index at " + idx + " yet."; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("err %q\nwant it to start %q", err, want)
	}
	if exists(idx) {
		t.Errorf("the interrupted build left %s behind", idx)
	}

	mixed := coreShared(t, "data/wikimedia-enterprise/api-testdata/articles.ndjson") // de, en, ru
	idx = filepath.Join(t.TempDir(), "mixed.idx")
	if _, _, err := runCLI(t, "index", "--quiet", "--input", mixed, "--index", idx); err == nil || ExitCode(err) != 1 {
		t.Fatalf("an input in three languages: %v (exit %d), want a refusal", err, ExitCode(err))
	}
	if exists(idx) {
		t.Errorf("the refused build left %s behind", idx)
	}
}

// A build that an error stopped after keeping something says so as an interrupted one does,
// with the resume command, unless the error is in the inputs (a resume needs the inputs the
// checkpoint recorded, so nothing there could be mended and resumed). The index left is that
// of a build stopped at the same point (the error that stopped the 10M build, a full disk,
// cannot be made to happen here); the command printed completes it.
func TestIndexFailedSaysWhatWasKept(t *testing.T) {
	model := coreShared(t, "models/synthetic/static-model2vec")
	corpusFile := filepath.Join(t.TempDir(), "sf.jsonl")
	writeHead(t, coreShared(t, "data/beir-scifact/corpus.jsonl"), corpusFile, 1500)
	diskFull := fmt.Errorf("saving HNSW graph checkpoint: %w", &fs.PathError{Op: "write", Path: "dense.hnsw", Err: syscall.ENOSPC})
	badRecord := &document.RecordError{File: corpusFile, Pos: "line 1400", Err: errors.New("invalid character")}
	for _, tc := range []struct {
		name  string
		extra []string
		kept  func(idx string) bool
		want  string // regexp of the notice; the last group is the resume command's arguments
	}{
		{"inline, after a checkpoint", []string{"--bm25-first=false"},
			func(idx string) bool { return exists(filepath.Join(idx, "CHECKPOINT")) },
			`^kairos: stopped by the error below: kept checkpoint generation \d+ \(\d+ passages, \d+ embedded; \S+ read up to document \d+\); there is no index at \S+ yet\.\n  Once it is dealt with \(the inputs and options must stay the same\), continue with: kairos index --resume (.*)\n$`},
		{"bm25 first, after an embedding checkpoint", nil,
			func(idx string) bool {
				b, err := os.ReadFile(filepath.Join(idx, "CHECKPOINT"))
				return err == nil && strings.Contains(string(b), `"embedding"`)
			},
			`^kairos: stopped by the error below while embedding: kept the BM25 index \(generation \d+, \d+ passages\), live and searchable; the vectors were not finished \(checkpoint generation \d+ holds \d+ of them\)\.\n  Once it is dealt with \(the inputs and options must stay the same\), continue with: kairos index --resume (.*)\n$`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var idx string
			var args []string
			var started time.Time
			for try := 1; try <= 3; try++ { // as in TestIndexInterruptedSaysWhatWasKept
				idx = filepath.Join(t.TempDir(), "idx")
				args = append([]string{"--input", corpusFile, "--index", idx, "--model", model, "--batch", "200", "--checkpoint-after", "1ns"}, tc.extra...)
				started = time.Now()
				if _, stderr, err := stopWhen(t, args, func() bool { return tc.kept(idx) }); err != nil {
					if !errors.Is(err, context.Canceled) {
						t.Fatalf("%v\n%s", err, stderr)
					}
					break
				}
				t.Logf("try %d: the build finished before the stop", try)
			}
			if !tc.kept(idx) {
				t.Fatal("no checkpoint kept")
			}
			var out bytes.Buffer
			stopped(&out, indexer.Location{Dir: idx}, args, "", false, started, badRecord)
			if out.Len() != 0 {
				t.Errorf("after a malformed record: %q, want nothing (a resume cannot mend the inputs)", out.String())
			}
			stopped(&out, indexer.Location{Dir: idx}, args, "", false, started, diskFull)
			m := regexp.MustCompile(tc.want).FindStringSubmatch(out.String())
			if m == nil {
				t.Fatalf("after a full disk, the notice does not say what was kept:\n%s", out.String())
			}
			// A build reading standard input cannot be resumed: the notice says what was kept
			// and why there is no command.
			var fromStdin bytes.Buffer
			stopped(&fromStdin, indexer.Location{Dir: idx}, args, "-", false, started, diskFull)
			if n := fromStdin.String(); strings.Contains(n, "--resume") || !strings.Contains(n, "kept") || !strings.Contains(n, "- is a stream") {
				t.Errorf("a stream's build: %q, want what was kept, no resume command, and why", n)
			}
			stdout, stderr, err := runCLI(t, append([]string{"index", "--resume"}, strings.Fields(m[len(m)-1])...)...)
			passages := regexp.MustCompile(`passages    (\d+)\n`).FindStringSubmatch(stdout)
			if err != nil || !strings.Contains(stdout, "documents   1500") || passages == nil || !strings.Contains(stdout, "vectors     "+passages[1]+" ") {
				t.Errorf("the printed command did not complete the index: %v\n%s%s", err, stdout, stderr)
			}
		})
	}
}

// Through Run, a build stopped by an error says nothing of a checkpoint when there is nothing
// to resume: after a malformed record, although the build checkpointed before reaching it (a
// resume needs the same inputs), and when a build fails before it starts, though an earlier
// build's checkpoint is still in the directory (it is not this build's).
func TestIndexFailedQuietWhenNothingToResume(t *testing.T) {
	model := coreShared(t, "models/synthetic/static-model2vec")
	dir := t.TempDir()
	corpusFile := filepath.Join(dir, "sf.jsonl")
	writeHead(t, coreShared(t, "data/beir-scifact/corpus.jsonl"), corpusFile, 1500)
	f, err := os.OpenFile(corpusFile, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("{\"_id\": \"bad\", \"text\": \n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	idx := filepath.Join(dir, "idx")
	_, stderr, err := runCLI(t, "index", "--quiet", "--input", corpusFile, "--index", idx, "--model", model,
		"--batch", "200", "--checkpoint-after", "1ns", "--bm25-first=false")
	if err == nil || !strings.Contains(err.Error(), "sf.jsonl: line 1501") {
		t.Fatalf("err %v, want the malformed line 1501\n%s", err, stderr)
	}
	if !exists(filepath.Join(idx, "CHECKPOINT")) {
		t.Fatal("no checkpoint before the malformed line: the test shows nothing")
	}
	if strings.Contains(stderr, "kept") || strings.Contains(stderr, "--resume") {
		t.Errorf("after a malformed record, the notice offers a resume:\n%s", stderr)
	}
	_, stderr, err = runCLI(t, "index", "--quiet", "--input", filepath.Join(dir, "missing.jsonl"), "--index", idx, "--model", model)
	if err == nil {
		t.Fatal("a build of a missing input did not fail")
	}
	if strings.Contains(stderr, "kept") || strings.Contains(stderr, "--resume") {
		t.Errorf("a build that failed at once speaks of the earlier build's checkpoint:\n%s", stderr)
	}
}
