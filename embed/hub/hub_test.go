package hub

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/kairos-rag/kairos/internal/sharedtest"
)

// fakeHub serves repo files under /{repo}/resolve/{rev}/{file} and records the paths asked for.
type fakeHub struct {
	files map[string][]byte // "owner/name/resolve/main/file" -> body
	mu    sync.Mutex
	asked []string
}

func (h *fakeHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.asked = append(h.asked, r.URL.Path)
	h.mu.Unlock()
	b, ok := h.files[strings.TrimPrefix(r.URL.Path, "/")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	_, _ = w.Write(b)
}

// modelFiles are the files of the synthetic tiny-encoder, served as if they were a hub repo.
func modelFiles(t *testing.T, repo string) map[string][]byte {
	t.Helper()
	src := sharedtest.Path(t, "models/synthetic/tiny-encoder")
	out := map[string][]byte{}
	for _, f := range []string{"config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
		"vocab.txt", "modules.json", "sentence_bert_config.json", "1_Pooling/config.json", "model.onnx"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatalf("test model missing (../shared must sit beside the repo): %v", err)
		}
		if f == "model.onnx" {
			f = "onnx/model.onnx"
		}
		out[repo+"/resolve/main/"+f] = b
	}
	return out
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func TestPull(t *testing.T) {
	const repo = "kairos-test/tiny-encoder"
	files := modelFiles(t, repo)
	onnx := files[repo+"/resolve/main/onnx/model.onnx"]
	good := Pins{repo: {"onnx/model.onnx": {int64(len(onnx)), sum(onnx)}}}
	bad := Pins{repo: {"onnx/model.onnx": {int64(len(onnx)), strings.Repeat("0", 64)}}}

	for _, tc := range []struct {
		name     string
		pins     Pins
		drop     string // file the server does not have
		wantErr  string
		wantONNX bool // onnx/model.onnx present afterwards
	}{
		{name: "verified", pins: good, wantONNX: true},
		{name: "no pin known", pins: Pins{}, wantONNX: true},
		{name: "optional file missing", pins: good, drop: "config_sentence_transformers.json", wantONNX: true},
		{name: "wrong hash", pins: bad, wantErr: "PIN MISMATCH"},
		{name: "required file 404", pins: good, drop: "tokenizer.json", wantErr: "tokenizer.json: not found upstream (HTTP 404)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &fakeHub{files: map[string][]byte{}}
			for k, v := range files {
				if !strings.HasSuffix(k, "/"+tc.drop) || tc.drop == "" {
					h.files[k] = v
				}
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			root := t.TempDir()
			var prog bytes.Buffer
			m, err := Pull(context.Background(), repo, PullOptions{Endpoint: srv.URL, Root: root, Pins: tc.pins, Progress: &prog})
			dir := filepath.Join(root, "kairos-test", "tiny-encoder")
			if _, statErr := os.Stat(filepath.Join(dir, "onnx", "model.onnx")); (statErr == nil) != tc.wantONNX {
				t.Errorf("onnx/model.onnx present = %v, want %v", statErr == nil, tc.wantONNX)
			}
			assertNoPartials(t, root)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				if _, err := os.Stat(filepath.Join(dir, ManifestName)); err == nil {
					t.Error("manifest written for a failed pull")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Files) != 9 {
				t.Errorf("fetched %d files, want 9: %+v", len(m.Files), m.Files)
			}
			for _, f := range m.Files {
				got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Path)))
				if err != nil || sum(got) != f.SHA256 || f.SHA256 != sum(files[repo+"/resolve/main/"+f.Path]) {
					t.Errorf("%s: on disk differs from server (%v)", f.Path, err)
				}
				if f.Pinned != (f.Path == "onnx/model.onnx" && len(tc.pins) > 0) {
					t.Errorf("%s: Pinned = %v", f.Path, f.Pinned)
				}
			}
			if !strings.Contains(prog.String(), "onnx/model.onnx: ") || !strings.Contains(prog.String(), "(100%)") {
				t.Errorf("progress output lacks the onnx file at 100%%:\n%s", prog.String())
			}
			// The pulled folder is a usable, listed model.
			list, err := List(root)
			if err != nil {
				t.Fatal(err)
			}
			wantVerified := "sha256 ok (1 pinned)"
			if len(tc.pins) == 0 {
				wantVerified = "no pins known"
			}
			if len(list) != 1 || list[0].Name != "kairos-test/tiny-encoder" || list[0].Dim != 64 ||
				list[0].Pooling != "mean" || list[0].Verified != wantVerified || list[0].Size < int64(len(onnx)) {
				t.Errorf("List = %+v", list)
			}
		})
	}
}

func TestListDetectsModifiedFile(t *testing.T) {
	const repo = "kairos-test/tiny-encoder"
	files := modelFiles(t, repo)
	onnx := files[repo+"/resolve/main/onnx/model.onnx"]
	srv := httptest.NewServer(&fakeHub{files: files})
	defer srv.Close()
	root := t.TempDir()
	pins := Pins{repo: {"onnx/model.onnx": {int64(len(onnx)), sum(onnx)}}}
	if _, err := Pull(context.Background(), repo, PullOptions{Endpoint: srv.URL, Root: root, Pins: pins}); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, "kairos-test", "tiny-encoder", "onnx", "model.onnx")
	if err := os.WriteFile(p, append([]byte{1}, onnx...), 0o644); err != nil {
		t.Fatal(err)
	}
	list, err := List(root)
	if err != nil || len(list) != 1 || list[0].Verified != "MODIFIED: onnx/model.onnx" {
		t.Errorf("List = %+v, %v", list, err)
	}
}

func TestPullRejectsBadNames(t *testing.T) {
	for _, name := range []string{"", "noslash", "../etc/passwd", "a/../b", "a/b/c", "/abs"} {
		if _, err := Pull(context.Background(), name, PullOptions{Root: t.TempDir(), Endpoint: "http://127.0.0.1:1"}); err == nil {
			t.Errorf("Pull(%q) succeeded", name)
		}
	}
}

// TestBuiltinPinsMatchREADME keeps the compiled table equal to ../shared/models/README.md.
func TestBuiltinPinsMatchREADME(t *testing.T) {
	f, err := os.Open(sharedtest.Path(t, "models/README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	row := regexp.MustCompile(`^\| (\S+) (\S+) \| (\d+) \| ([0-9a-f]{64}) \|$`)
	readme := Pins{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := row.FindStringSubmatch(sc.Text()); m != nil {
			size, _ := strconv.ParseInt(m[3], 10, 64)
			if readme[m[1]] == nil {
				readme[m[1]] = map[string]Pin{}
			}
			readme[m[1]][m[2]] = Pin{size, m[4]}
		}
	}
	builtin := BuiltinPins()
	n := 0
	for repo, files := range readme {
		for file, pin := range files {
			n++
			if got, ok := builtin.lookup(repo, file); !ok || got != pin {
				t.Errorf("%s %s: builtin %+v, README %+v", repo, file, got, pin)
			}
		}
	}
	if n < 7 {
		t.Errorf("parsed only %d pins from the README", n)
	}
	// Pins beyond the README's table: hash only (size unknown), so each must say so.
	for repo, files := range builtin {
		for file, pin := range files {
			if _, ok := readme.lookup(repo, file); !ok && pin.Size != 0 {
				t.Errorf("%s %s: pinned with size %d but not in the README's table", repo, file, pin.Size)
			}
		}
	}
}

// The fp16 variant is pulled by its file name and verified against a pin: the built-in
// hash-only pin of Xenova's model_fp16.onnx refuses other bytes, and a hash-only pin accepts
// the right bytes whatever their size.
func TestPullFP16Variant(t *testing.T) {
	const fp16 = "onnx/model_fp16.onnx"
	body := []byte("stand-in for an fp16 ONNX file")
	tests := []struct {
		name, repo string
		pins       Pins // nil: BuiltinPins
		wantErr    string
	}{
		{"builtin pin refuses other bytes", "Xenova/all-MiniLM-L6-v2", nil, "PIN MISMATCH: got sha256 " + sum(body)},
		{"hash-only pin accepts", "kairos-test/tiny-encoder", Pins{"kairos-test/tiny-encoder": {fp16: {0, sum(body)}}}, ""},
		{"hash-only pin refuses", "kairos-test/tiny-encoder", Pins{"kairos-test/tiny-encoder": {fp16: {0, strings.Repeat("0", 64)}}}, "PIN MISMATCH"},
		{"sized pin checks the size", "kairos-test/tiny-encoder", Pins{"kairos-test/tiny-encoder": {fp16: {int64(len(body)) + 1, sum(body)}}}, "PIN MISMATCH"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string][]byte{}
			for k, v := range modelFiles(t, tc.repo) {
				if !strings.HasSuffix(k, "/onnx/model.onnx") {
					files[k] = v
				}
			}
			files[tc.repo+"/resolve/main/"+fp16] = body
			srv := httptest.NewServer(&fakeHub{files: files})
			defer srv.Close()
			root := t.TempDir()
			m, err := Pull(context.Background(), tc.repo, PullOptions{Endpoint: srv.URL, Root: root, ONNXFile: fp16, Pins: tc.pins})
			dst := filepath.Join(root, filepath.FromSlash(tc.repo), filepath.FromSlash(fp16))
			_, statErr := os.Stat(dst)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Pull: %v, want %q", err, tc.wantErr)
				}
				if statErr == nil {
					t.Errorf("%s kept after a pin mismatch", dst)
				}
				assertNoPartials(t, root)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			pinned := 0
			for _, f := range m.Files {
				if f.Pinned {
					pinned++
					if f.Path != fp16 {
						t.Errorf("%s pinned", f.Path)
					}
				}
			}
			if pinned != 1 || statErr != nil {
				t.Errorf("%d files pinned, %s: %v", pinned, dst, statErr)
			}
		})
	}
}

func assertNoPartials(t *testing.T, root string) {
	t.Helper()
	_ = filepath.Walk(root, func(p string, _ os.FileInfo, _ error) error {
		if strings.Contains(filepath.Base(p), ".part-") {
			t.Errorf("partial file left behind: %s", p)
		}
		return nil
	})
}
