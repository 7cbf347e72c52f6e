package scalebench

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"github.com/kairos-rag/kairos/search"
)

// xapianScript is the Xapian anchor (see its doc string); it is written next to the passages
// and run with the configured python.
//
//go:embed scale_xapian.py
var xapianScript []byte

// xapianAvailable says why the anchor cannot run, or "" when it can.
func xapianAvailable(ctx context.Context, python string) string {
	out, err := exec.CommandContext(ctx, python, "-c", "import xapian; print(xapian.version_string())").CombinedOutput()
	if err != nil {
		// Python's traceback ends with what went wrong ("ModuleNotFoundError: No module named
		// 'xapian'"); without output, the error of running it ("executable file not found").
		why := err.Error()
		if lines := bytes.Split(bytes.TrimSpace(out), []byte("\n")); len(lines[len(lines)-1]) > 0 {
			why = string(lines[len(lines)-1])
		}
		return fmt.Sprintf("%s cannot import xapian (%s): install Debian's python3-xapian, or pass --python", python, why)
	}
	return ""
}

// runXapian indexes passages (a JSON lines file) with Xapian and times the queries, with
// Kairos's BM25 k1 and b.
func runXapian(ctx context.Context, python, dir, passages, queriesFile string, k, warmup int, progress io.Writer) (*AnchorResult, error) {
	script := filepath.Join(dir, "scale_xapian.py")
	if err := os.WriteFile(script, xapianScript, 0o644); err != nil {
		return nil, err
	}
	db := filepath.Join(dir, "xapian.db")
	defer os.RemoveAll(db)
	return runAnchor(ctx, "xapian", db, progress, python, script, "--passages", passages, "--queries", queriesFile, "--db", db,
		"--k", strconv.Itoa(k), "--warmup", strconv.Itoa(warmup),
		"--k1", strconv.FormatFloat(search.BM25K1, 'g', -1, 64), "--b", strconv.FormatFloat(search.BM25B, 'g', -1, 64))
}

// writeQueries writes the queries as JSON strings, one a line, for the anchor.
func writeQueries(path string, queries []string) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, q := range queries {
		if err := enc.Encode(q); err != nil {
			return err
		}
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}
