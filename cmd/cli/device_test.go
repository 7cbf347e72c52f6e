package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/embed"
	"github.com/kairos-rag/kairos/indexer"
	"github.com/kairos-rag/kairos/indexer/manifest"
)

// Every command that embeds or cross-encodes takes --device, and a bad value is a one-line usage
// error (exit 2) before anything opens.
func TestDeviceFlagOnModelCommands(t *testing.T) {
	commands := [][]string{{"index"}, {"search"}, {"eval"}, {"serve"}, {"chat"}, {"embed"}, {"bank", "build"}}
	values := []struct {
		value, want string
	}{
		{"gpu", `device "gpu": want cpu, cuda or cuda:N`},
		{"cuda:", `device "cuda:": want cpu, cuda or cuda:N`},
		{"cuda:-1", `device "cuda:-1"`},
		{"CUDA", `device "CUDA"`},
	}
	for _, cmd := range commands {
		for _, v := range values {
			t.Run(strings.Join(cmd, " ")+" "+v.value, func(t *testing.T) {
				_, stderr, err := runCLI(t, append(cmd, "--device", v.value)...)
				if ExitCode(err) != 2 || !errors.Is(err, ErrUsage) {
					t.Fatalf("exit %d (%v), want 2", ExitCode(err), err)
				}
				if msg := err.Error(); !strings.Contains(msg, v.want) || strings.Contains(msg, "\n") {
					t.Errorf("error %q: want one line containing %q", msg, v.want)
				}
				if stderr != "" {
					t.Errorf("a usage mistake printed the help:\n%s", stderr)
				}
			})
		}
	}
}

// --device cuda without a usable CUDA provider fails at start, in one sentence that names the
// missing file and how to get it, before anything is written: no silent CPU run.
func TestDeviceCUDAFailsAtStart(t *testing.T) {
	requireORTLib(t)
	dump := coreShared(t, "data/mediawiki-xml-gensim/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2")
	tmp := t.TempDir()
	missing := filepath.Join(tmp, "no", "libonnxruntime_providers_cuda.so")
	notELF := filepath.Join(tmp, "libonnxruntime_providers_cuda.so")
	if err := os.WriteFile(notELF, []byte("not a library\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	queries := filepath.Join(tmp, "q.jsonl")
	if err := os.WriteFile(queries, []byte(`{"_id":"1","text":"anarchism"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	qrels := filepath.Join(tmp, "qrels.tsv")
	if err := os.WriteFile(qrels, []byte("query-id\tcorpus-id\tscore\n1\tAnarchism\t1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	idx := filepath.Join(tmp, "idx")
	tests := []struct {
		name string
		args []string
		env  string // $KAIROS_ORT_CUDA_LIB
		want []string
	}{
		{"index, flag", []string{"index", "--quiet", "--input", dump, "--index", idx, "--model", tinyEncoder, "--device", "cuda", "--ort-provider-lib", missing},
			"", []string{missing, "does not exist", "make ort-gpu"}},
		{"index --update, env", []string{"index", "--update", "--quiet", "--input", dump, "--index", idx, "--model", tinyEncoder, "--device", "cuda:1"},
			missing, []string{missing, "does not exist", "KAIROS_ORT_CUDA_LIB"}},
		{"embed, not ELF", []string{"embed", "--model", tinyEncoder, "--device", "cuda", "--ort-provider-lib", notELF},
			"", []string{notELF, "is not a loadable shared library"}},
		{"search", []string{"search", "--index", idx, "--model", tinyEncoder, "--device", "cuda", "anarchism"},
			missing, []string{missing, "does not exist"}},
		{"search, cross-encoder", []string{"search", "--index", idx, "--cross-model", filepath.Join(filepath.Dir(tinyEncoder), "tiny-cross-encoder"), "--rerank", "cross", "--device", "cuda", "--ort-provider-lib", notELF, "anarchism"},
			"", []string{notELF, "is not a loadable shared library"}},
		{"eval", []string{"eval", "--index", idx, "--queries", queries, "--qrels", qrels, "--model", tinyEncoder, "--device", "cuda", "--ort-provider-lib", missing},
			"", []string{missing, "does not exist"}},
		{"serve", []string{"serve", "--index", idx, "--model", tinyEncoder, "--device", "cuda", "--addr", "127.0.0.1:0"},
			missing, []string{missing, "does not exist"}},
		{"chat", []string{"chat", "--llm-url", "http://127.0.0.1:1/v1", "--llm-model", "m", "--index", idx, "--model", tinyEncoder, "--device", "cuda", "--message", "hi"},
			missing, []string{missing, "does not exist"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(embed.EnvORTCUDALib, tc.env)
			out, stderr, err := runCLI(t, tc.args...)
			if ExitCode(err) != 1 {
				t.Fatalf("exit %d (%v), want 1\n%s%s", ExitCode(err), err, out, stderr)
			}
			msg := err.Error()
			for _, w := range append(tc.want, "--device cuda") {
				if !strings.Contains(msg, w) {
					t.Errorf("error lacks %q:\n%s", w, msg)
				}
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line:\n%s", msg)
			}
			if strings.Contains(stderr, "pure-Go") || strings.Contains(stderr, "backend go") {
				t.Errorf("fell back to the CPU:\n%s", stderr)
			}
			if _, err := manifest.Current(idx); !errors.Is(err, indexer.ErrNoIndex) {
				t.Errorf("an index was written at %s (%v)", idx, err)
			}
		})
	}
}

// --device cpu (and no --device) give the vectors Kairos gave before the flag existed: the
// golden files were written by `kairos embed` of commit 3159d82 (--backend ort --threads 1) on
// the random-weight models of ../shared/models/synthetic; they are not regenerated by -update,
// since their point is to be older than the flag. The two runs here give the same bytes; the
// golden vectors are matched to within 1e-6 a component, since ONNX Runtime's kernels sum in
// another order on a processor without AVX-512 (2e-8 apart at most, measured on an AVX2-only
// EPYC).
func TestDeviceCPUVectorsUnchanged(t *testing.T) {
	requireORTLib(t)
	in := filepath.Join("testdata", "device-cpu", "input.jsonl")
	for _, model := range []string{"minilm-l6", "tiny-encoder"} {
		t.Run(model, func(t *testing.T) {
			dir := filepath.Join(filepath.Dir(tinyEncoder), model)
			var first []byte
			for _, device := range [][]string{nil, {"--device", "cpu"}} {
				out := filepath.Join(t.TempDir(), "vectors.jsonl")
				args := append([]string{"embed", "--model", dir, "--backend", "ort", "--threads", "1", "--input", in, "--output", out}, device...)
				if _, stderr, err := runCLI(t, args...); err != nil {
					t.Fatalf("%q: %v\n%s", device, err, stderr)
				}
				got, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				if first == nil {
					first = got
				} else if !bytes.Equal(got, first) {
					t.Errorf("%q: vectors differ from those without --device", device)
				}
			}
			golden := filepath.Join("testdata", "device-cpu", model+".golden.jsonl")
			if d, err := maxVectorDiff(first, golden); err != nil || d > 1e-6 {
				t.Errorf("vectors differ from %s, written before --device existed: %v, %.3g apart at most", golden, err, d)
			}
		})
	}
}

// maxVectorDiff is the largest difference of a component between the vectors of got and those
// of the golden file, both `kairos embed` JSON lines; an error when their ids or dimensions
// differ.
func maxVectorDiff(got []byte, golden string) (float64, error) {
	want, err := os.ReadFile(golden)
	if err != nil {
		return 0, err
	}
	type line struct {
		ID     json.RawMessage `json:"id"`
		Vector []float64       `json:"vector"`
	}
	read := func(b []byte) ([]line, error) {
		var ls []line
		dec := json.NewDecoder(bytes.NewReader(b))
		for dec.More() {
			var l line
			if err := dec.Decode(&l); err != nil {
				return nil, err
			}
			ls = append(ls, l)
		}
		return ls, nil
	}
	a, err := read(got)
	if err != nil {
		return 0, err
	}
	b, err := read(want)
	if err != nil {
		return 0, err
	}
	if len(a) != len(b) || len(a) == 0 {
		return 0, fmt.Errorf("%d vectors, the golden file %d", len(a), len(b))
	}
	d := 0.0
	for i := range a {
		if !bytes.Equal(a[i].ID, b[i].ID) || len(a[i].Vector) != len(b[i].Vector) {
			return 0, fmt.Errorf("line %d: id %s of %d dimensions, the golden file's %s of %d", i+1, a[i].ID, len(a[i].Vector), b[i].ID, len(b[i].Vector))
		}
		for j, v := range a[i].Vector {
			d = max(d, math.Abs(v-b[i].Vector[j]))
		}
	}
	return d, nil
}
