package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// An index knows its model: stats names the encoder and says the index is dense; search
// without --model uses the folder the index was built with, and says so, with the same hits
// as with --model; with that folder gone it finds a copy in the models cache; with neither,
// it says what is missing and runs BM25; a folder whose model file changed is refused; serve
// loads the found model (a dense query answers). A BM25-only index says it is not dense.
func TestIndexKnowsItsModel(t *testing.T) {
	work := t.TempDir()
	model := filepath.Join(work, "m2v")
	if err := os.CopyFS(model, os.DirFS(coreShared(t, "models/synthetic/static-model2vec"))); err != nil {
		t.Fatal(err)
	}
	corpusFile := filepath.Join(work, "sf.jsonl")
	writeHead(t, coreShared(t, "data/beir-scifact/corpus.jsonl"), corpusFile, 200)
	idx := filepath.Join(work, "idx")
	if _, stderr, err := runCLI(t, "index", "--quiet", "--input", corpusFile, "--index", idx, "--model", model); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	bm25 := filepath.Join(work, "bm25")
	if _, stderr, err := runCLI(t, "index", "--quiet", "--input", corpusFile, "--index", bm25); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	cache := filepath.Join(work, "cache")
	type result struct {
		Hits []struct {
			PassageID string  `json:"passage_id"`
			Score     float64 `json:"score"`
		}
	}
	search := func(t *testing.T, args ...string) (result, string) {
		t.Helper()
		out, stderr, err := runCLI(t, append([]string{"search", "--index", idx, "--models-dir", cache, "-k", "5", "--json"}, append(args, "vitamin D deficiency")...)...)
		if err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		var r result
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return r, stderr
	}

	out, _, err := runCLI(t, "stats", "--index", idx)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"dense       yes: 514 vectors, HNSW M=16", "encoder     m2v (static), dim 256, mean pooling",
		"file model.safetensors fp16, sha256 ", "folder " + model + " (search and serve use it without --model)"} {
		if !strings.Contains(out, want) {
			t.Errorf("stats lacks %q:\n%s", want, out)
		}
	}
	if out, _, _ := runCLI(t, "stats", "--index", idx, "--json"); !regexp.MustCompile(`"encoder": \{\s+"model": \{\s+"name": "m2v",\s+"kind": "static"`).MatchString(out) {
		t.Errorf("stats --json lacks the encoder:\n%s", out)
	}
	if out, _, _ := runCLI(t, "stats", "--index", bm25); !strings.Contains(out, "dense       no: BM25 only") {
		t.Errorf("BM25-only stats:\n%s", out)
	}

	explicit, _ := search(t, "--model", model)
	found, stderr := search(t)
	if !strings.Contains(stderr, "no --model: using "+model+" (m2v), the folder the index was built with") {
		t.Errorf("search does not say which model it used:\n%s", stderr)
	}
	if len(found.Hits) == 0 || !equalJSON(t, found, explicit) {
		t.Errorf("hits without --model %v, with --model %v", found, explicit)
	}

	moved := filepath.Join(work, "elsewhere")
	if err := os.Rename(model, moved); err != nil {
		t.Fatal(err)
	}
	plain, stderr := search(t)
	if !strings.Contains(stderr, "its model folder "+model+" is gone); no model in "+cache+" has its model.safetensors") ||
		!strings.Contains(stderr, "only BM25 runs") {
		t.Errorf("with the folder gone:\n%s", stderr)
	}
	if len(plain.Hits) == 0 || equalJSON(t, plain, explicit) {
		t.Errorf("with the folder gone, hits %v should be BM25's", plain)
	}

	inCache := filepath.Join(cache, "someone", "m2v")
	if err := os.CopyFS(inCache, os.DirFS(moved)); err != nil {
		t.Fatal(err)
	}
	fromCache, stderr := search(t)
	if !strings.Contains(stderr, "using "+inCache+" (m2v), found in the models cache "+cache) || !equalJSON(t, fromCache, explicit) {
		t.Errorf("from the cache: %v\n%s", fromCache, stderr)
	}

	t.Run("serve", func(t *testing.T) {
		var logs syncBuffer
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- Run(ctx, []string{"serve", "--index", idx, "--models-dir", cache, "--addr", "127.0.0.1:0", "--chat-store", ""},
				strings.NewReader(""), &logs, &logs)
		}()
		defer func() { cancel(); <-done }()
		addr := regexp.MustCompile(`msg=serving addr=(\S+)`)
		var m []string
		for deadline := time.Now().Add(30 * time.Second); m == nil; time.Sleep(20 * time.Millisecond) {
			if m = addr.FindStringSubmatch(logs.String()); m == nil && time.Now().After(deadline) {
				t.Fatalf("serve did not start:\n%s", logs.String())
			}
		}
		if !strings.Contains(logs.String(), "using "+inCache) {
			t.Errorf("serve does not log the model it found:\n%s", logs.String())
		}
		resp, err := http.Post("http://"+m[1]+"/v1/search", "application/json", strings.NewReader(`{"text":"vitamin D deficiency","mode":"dense"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("dense query on serve without --model: %s", resp.Status)
		}
	})

	// The recorded folder back, but its table changed: the identity check refuses it.
	if err := os.CopyFS(model, os.DirFS(moved)); err != nil {
		t.Fatal(err)
	}
	table := filepath.Join(model, "model.safetensors")
	b, err := os.ReadFile(table)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-3] ^= 1
	if err := os.WriteFile(table, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, err = runCLI(t, "search", "--index", idx, "--models-dir", cache, "vitamin D")
	if err == nil || !strings.Contains(err.Error(), `does not match the index's "m2v"`) {
		t.Errorf("a changed model folder: err %v\n%s", err, stderr)
	}
}

func equalJSON(t *testing.T, a, b any) bool {
	t.Helper()
	x, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(x) == string(y)
}
