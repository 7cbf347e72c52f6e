package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeBinaryRescore: `kairos serve --binary-rescore float` opens an index with binary
// codes for float rescoring and answers dense queries from it; the flag reaches every open,
// so serve refuses to start on an index without binary codes, and a reload onto a generation
// with int8 codes fails and leaves the served generation answering.
func TestServeBinaryRescore(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "scifact.jsonl")
	writeShortSciFact(t, in, 300)
	model := coreShared(t, "models/synthetic/static-model2vec")
	bin, lex := filepath.Join(dir, "binary"), filepath.Join(dir, "bm25")
	if _, _, err := runCLI(t, "index", "--quiet", "--input", in, "--index", bin, "--model", model, "--vectors", "binary"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCLI(t, "index", "--quiet", "--input", in, "--index", lex); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := cmdServe(ctx, []string{"--index", lex, "--addr", "127.0.0.1:0", "--binary-rescore", "float"}, IO{Stdout: io.Discard, Stderr: io.Discard})
	if err == nil || !strings.Contains(err.Error(), "binary rescoring (--binary-rescore) applies to an index with binary codes") {
		t.Fatalf("serve --binary-rescore float of an index without binary codes: %v", err)
	}

	base := startServeCmd(t, "--index", bin, "--model", model, "--binary-rescore", "float")
	post := func(path, body string) (int, []byte) {
		t.Helper()
		resp, err := http.Post(base+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	// A passage's own text is its nearest vector (cosine 1): the first dense hit. The texts
	// are cut short enough to be queries (server.Options' 512 characters).
	selfHits := func() {
		t.Helper()
		for _, id := range []string{newbornDoc + "#0", "5836#0"} {
			resp, err := http.Get(base + "/v1/passages/" + strings.ReplaceAll(id, "#", "%23"))
			if err != nil {
				t.Fatal(err)
			}
			var p struct{ Text string }
			err = json.NewDecoder(resp.Body).Decode(&p)
			resp.Body.Close()
			if resp.StatusCode != 200 || err != nil || p.Text == "" {
				t.Fatalf("passage %s: %d %v", id, resp.StatusCode, err)
			}
			q, _ := json.Marshal(map[string]any{"text": p.Text, "mode": "dense", "k": 3})
			code, b := post("/v1/search", string(q))
			var res struct {
				Results []struct {
					Hits []struct {
						ID string `json:"passage_id"`
					}
				}
			}
			if code != 200 || json.Unmarshal(b, &res) != nil || len(res.Results) != 1 || len(res.Results[0].Hits) == 0 || res.Results[0].Hits[0].ID != id {
				t.Errorf("dense search for the text of %s: %d %s", id, code, b)
			}
		}
	}
	selfHits()

	// The index rebuilt with int8 codes: the reload is refused, the binary generation stays.
	if _, _, err := runCLI(t, "index", "--quiet", "--force", "--input", in, "--index", bin, "--model", model, "--vectors", "int8"); err != nil {
		t.Fatal(err)
	}
	if code, b := post("/v1/admin/reload", ""); code != http.StatusInternalServerError || !strings.Contains(string(b), "applies to an index with binary codes") {
		t.Errorf("reload onto int8 codes: %d %s", code, b)
	}
	selfHits()
}

// writeShortSciFact writes the first n SciFact abstracts cut to at most 300 bytes (their passages hold the title too) on a word
// boundary, so that a passage's whole text can be sent as a query.
func writeShortSciFact(t *testing.T, path string, n int) {
	t.Helper()
	writeSciFactHead(t, path, n)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var d map[string]any
		if err := json.Unmarshal(line, &d); err != nil {
			t.Fatal(err)
		}
		text, _ := d["text"].(string)
		for len(text) > 300 {
			text = text[:strings.LastIndexByte(text[:300], ' ')]
		}
		d["text"] = text
		rec, _ := json.Marshal(d)
		out.Write(append(rec, '\n'))
	}
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
