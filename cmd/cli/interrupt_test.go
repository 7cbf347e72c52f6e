package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// A dense build stopped after a checkpoint says what was kept and prints the command that
// resumes it; that command, run as printed, completes the index. One stopped before any
// checkpoint says that nothing was kept and that the live index is unchanged.
func TestIndexInterruptedSaysWhatWasKept(t *testing.T) {
	model := coreShared(t, "models/synthetic/static-model2vec")
	corpusFile := filepath.Join(t.TempDir(), "sf.jsonl")
	writeHead(t, coreShared(t, "data/beir-scifact/corpus.jsonl"), corpusFile, 400)
	idx := filepath.Join(t.TempDir(), "idx")
	args := []string{"--quiet", "--input", corpusFile, "--index", idx, "--model", model, "--batch", "60", "--checkpoint-after", "1ns"}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // Ctrl-C as soon as the first checkpoint is recorded
		for ctx.Err() == nil {
			if _, err := os.Stat(filepath.Join(idx, "CHECKPOINT")); err == nil {
				cancel()
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	var stdout, stderr bytes.Buffer
	err := Run(ctx, append([]string{"index"}, args...), strings.NewReader(""), &stdout, &stderr)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want the build cancelled after its first checkpoint\n%s", err, stderr.String())
	}
	m := regexp.MustCompile(`kairos: interrupted: kept checkpoint generation (\d+) \((\d+) passages, (\d+) embedded; ` +
		regexp.QuoteMeta(corpusFile) + ` read up to document (\d+)\); there is no index at ` + regexp.QuoteMeta(idx) +
		` yet\.\n  Continue with: kairos index --resume (.*)\n`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("stderr does not say what was kept:\n%s", stderr.String())
	}
	if m[2] != m[3] || m[2] == "0" {
		t.Errorf("checkpoint of %s passages, %s embedded", m[2], m[3])
	}
	resumed, stderr2, err := runCLI(t, append([]string{"index", "--resume"}, strings.Fields(m[5])...)...)
	if err != nil {
		t.Fatalf("the printed command failed: %v\n%s", err, stderr2)
	}
	if !strings.Contains(resumed, "resumed     after "+m[4]+" documents") || !strings.Contains(resumed, "documents   400") {
		t.Errorf("resumed build:\n%s", resumed)
	}

	// Stopped at once: no checkpoint; the index just built stays live.
	ctx2, cancel2 := context.WithCancel(context.Background())
	cancel2()
	stderr.Reset()
	err = Run(ctx2, append([]string{"index", "--force"}, args...), strings.NewReader(""), &stdout, &stderr)
	if !errors.Is(err, context.Canceled) || !strings.Contains(stderr.String(),
		"kairos: interrupted before the first checkpoint: nothing of this build was kept; the live index (g-") ||
		!strings.Contains(stderr.String(), ") is unchanged and searchable.") {
		t.Errorf("err %v\n%s", err, stderr.String())
	}
}
