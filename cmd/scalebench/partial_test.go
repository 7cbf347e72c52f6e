package scalebench

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/internal/sharedtest"
)

// TestBenchScaleKeepsMeasuredSizes: an anchor that fails at the second size (as a disk that
// fills, or a kill, hours into a 10M run) loses neither the first size's row nor the second's
// Kairos figures, in JSON lines and in the table, and its error still reaches the caller. The
// anchor is a stand-in that fails on purpose; Kairos's builds and queries are real.
func TestBenchScaleKeepsMeasuredSizes(t *testing.T) {
	bin := buildKairos(t)
	dir := t.TempDir()
	ran := filepath.Join(dir, "ran")
	// It answers the availability check, then one build with figures, then fails.
	python := filepath.Join(dir, "python")
	script := `#!/bin/sh
if [ "$1" = -c ]; then echo 1.4.22; exit 0; fi
db=; prev=
for a in "$@"; do [ "$prev" = --db ] && db=$a; prev=$a; done
if [ -e "` + ran + `" ]; then echo "xapian: No space left on device" >&2; exit 3; fi
touch "` + ran + `"; mkdir -p "$db"
echo '{"version":"1.4.22","passages":300,"build_s":0.5,"p50_ms":1,"p99_ms":2,"mean_ms":1.5,"queries":40}'
`
	if err := os.WriteFile(python, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, asJSON := range []bool{true, false} {
		if err := os.Remove(ran); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		args := []string{"--passages", "300,200", "--queries", "40", "--warmup", "4", "--lucene", "off",
			"--python", python, "--kairos", bin, "--shared", sharedtest.Dir(), "--work", t.TempDir()}
		if asJSON {
			args = append(args, "--json")
		}
		var stdout, stderr bytes.Buffer
		err := runArgs(t, args, &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), "xapian anchor") {
			t.Fatalf("json %v: error %v, want the anchor's failure\n%s", asJSON, err, stderr.String())
		}
		if asJSON {
			var rows []Row
			for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
				var r Row
				if err := json.Unmarshal([]byte(line), &r); err != nil {
					t.Fatalf("line %q: %v", line, err)
				}
				rows = append(rows, r)
			}
			if len(rows) != 2 {
				t.Fatalf("%d rows, want 2:\n%s", len(rows), stdout.String())
			}
			if r := rows[0]; r.Passages != 300 || r.Incomplete != "" || r.Xapian == nil || r.Xapian.Passages != 300 || r.BM25.Queries != 40 {
				t.Errorf("first size: %+v; want 300 passages, complete, with the anchor", r)
			}
			if r := rows[1]; r.Passages != 200 || r.BuildS <= 0 || r.BM25.Queries != 40 || r.Xapian != nil || r.Incomplete != err.Error() {
				t.Errorf("second size: %+v; want 200 passages built and queried, no anchor, incomplete %q", r, err)
			}
			continue
		}
		table := stdout.String()
		var sizes []string
		for _, line := range strings.Split(table, "\n") {
			if f := strings.Fields(line); len(f) > 1 && f[1] == "kairos" {
				sizes = append(sizes, f[0])
			}
		}
		if strings.Join(sizes, ",") != "300,200" || !strings.Contains(table, "200 passages incomplete") || !strings.Contains(table, "xapian 1.4.22") {
			t.Errorf("table rows %v, want 300 and 200 with the incomplete note and the first anchor:\n%s", sizes, table)
		}
	}
}

// buildKairos builds the kairos binary that bench scale runs as its build child.
func buildKairos(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "kairos")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/kairos-rag/kairos/cmd/kairos").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
