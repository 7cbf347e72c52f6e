package embed

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/internal/sharedtest"
)

var sharedModels = sharedtest.Join("models")

func synthetic(name string) string { return filepath.Join(sharedModels, "synthetic", name) }

// requireORT fails (never skips) when the ONNX Runtime library is missing: the tests of both
// backends are the point of this package.
func requireORT(t testing.TB) {
	t.Helper()
	lib := ResolveORTLib("")
	if _, err := os.Stat(lib); err != nil {
		t.Fatalf("ONNX Runtime library %s missing: run make ort (%v)", lib, err)
	}
}

func requireModel(t testing.TB, dir string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "model.onnx")); err != nil {
		t.Fatalf("test model missing (../shared beside the repository, or $%s): %v", sharedtest.EnvVar, err)
	}
}

func openEnc(t testing.TB, dir, backend string) *Encoder {
	t.Helper()
	requireORT(t)
	requireModel(t, dir)
	e, err := OpenEncoder(context.Background(), Options{ModelDir: dir, Backend: backend, BatchSize: 4})
	if err != nil {
		t.Fatalf("OpenEncoder(%s, %s): %v", dir, backend, err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}

// testTexts mixes short, long (beyond max_seq_length 256), accented, CJK and punctuation-heavy
// texts, in an order that is not sorted by length.
func testTexts() []string {
	long := strings.Repeat("Retrieval engines truncate long passages before the encoder sees them. ", 60)
	return []string{
		"How old is the universe?",
		long,
		"Café déjà vu: naïve résumé, Zürich and São Paulo.",
		"a",
		"東京は日本の首都です。",
		"The quick brown fox jumps over the lazy dog!!! (1999-2024) $12.50 #tags @users",
		strings.Repeat("word ", 120),
		"Microstructural development of human newborn cerebral white matter assessed in vivo by diffusion tensor magnetic resonance imaging.",
		"  leading and trailing spaces  ",
	}
}

// linkModel builds a model folder in a temp dir from the files of src (symlinked) plus extra
// files written verbatim, so a test can override one config file.
func linkModel(t *testing.T, src string, extra map[string]string) string {
	t.Helper()
	dst := t.TempDir()
	abs, err := filepath.Abs(src)
	if err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(abs)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if overridden(extra, e.Name()) {
			continue
		}
		if err := os.Symlink(filepath.Join(abs, e.Name()), filepath.Join(dst, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	for name, body := range extra {
		p := filepath.Join(dst, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// overridden reports whether extra replaces name or a file inside it.
func overridden(extra map[string]string, name string) bool {
	for k := range extra {
		if k == name || strings.HasPrefix(k, name+"/") {
			return true
		}
	}
	return false
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
