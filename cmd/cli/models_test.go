package cli

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCmdModels pulls the synthetic tiny-encoder from a local fake hub and lists it.
func TestCmdModels(t *testing.T) {
	files := map[string]string{
		"config.json": "config.json", "tokenizer.json": "tokenizer.json", "modules.json": "modules.json",
		"sentence_bert_config.json": "sentence_bert_config.json", "1_Pooling/config.json": "1_Pooling/config.json",
		"onnx/model.onnx": "model.onnx",
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.Path, "/owner/tiny/resolve/main/")
		if src, found := files[rest]; ok && found {
			http.ServeFile(w, r, filepath.Join(tinyEncoder, src))
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	root := t.TempDir()
	var stdout, stderr bytes.Buffer
	io := IO{Stdout: &stdout, Stderr: &stderr}
	if err := cmdModels(context.Background(), []string{"pull", "owner/tiny", "--endpoint", srv.URL, "--dir", root}, io); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "pulled owner/tiny (6 files, 0 verified") || !strings.Contains(stderr.String(), "unverified") {
		t.Errorf("pull output:\n%s\n%s", stdout.String(), stderr.String())
	}
	if _, err := os.Stat(filepath.Join(root, "owner", "tiny", "onnx", "model.onnx")); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	if err := cmdModels(context.Background(), []string{"list", "--dir", root}, io); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "NAME") ||
		strings.Join(strings.Fields(lines[1]), " ") != "owner/tiny 8.9 MB 64 mean no pins known" {
		t.Errorf("list output:\n%s", stdout.String())
	}
	err := cmdModels(context.Background(), []string{"pull", "owner/absent", "--endpoint", srv.URL, "--dir", root}, io)
	if err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("pull of a missing repo: %v", err)
	}
}

// A pull with no answer from the hub (offline) names the ways out (--endpoint, HF_ENDPOINT,
// --model with a copied folder) and leaves no empty model folder, whether the endpoint came
// from --endpoint or from HF_ENDPOINT.
func TestModelsPullOffline(t *testing.T) {
	closed := httptest.NewServer(nil)
	endpoint := closed.URL
	closed.Close()
	for _, tc := range []struct {
		name string
		args []string
		env  string
	}{
		{"--endpoint", []string{"--endpoint", endpoint}, ""},
		{"HF_ENDPOINT", nil, endpoint},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("HF_ENDPOINT", tc.env)
			root := filepath.Join(t.TempDir(), "models")
			_, _, err := runCLI(t, append([]string{"models", "pull", "--dir", root, "owner/tiny"}, tc.args...)...)
			if err == nil {
				t.Fatal("pull with no hub succeeded")
			}
			for _, want := range []string{"cannot reach " + endpoint, "pass --endpoint URL or set HF_ENDPOINT", "--model"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error lacks %q:\n%v", want, err)
				}
			}
			if _, err := os.Stat(root); !os.IsNotExist(err) {
				t.Errorf("the models root was left behind (%v)", err)
			}
		})
	}
}
