package hub_test

import (
	"context"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kairos-rag/kairos/embed"
	"github.com/kairos-rag/kairos/embed/hub"
	"github.com/kairos-rag/kairos/internal/sharedtest"
)

// TestPullStaticCatalogue pulls every static repo of the catalogue from a local hub serving
// the static fixture of its layout (plus files Pull must not fetch) and opens the pulled
// folder with embed's static encoder: the catalogue's file lists are what the encoder needs,
// no ONNX file is asked for, and a required file missing upstream fails the pull.
func TestPullStaticCatalogue(t *testing.T) {
	fixture := map[string]string{
		"minishlab/potion-base-8M":                         "models/synthetic/static-model2vec",
		"minishlab/potion-retrieval-32M":                   "models/synthetic/static-model2vec",
		"sentence-transformers/static-retrieval-mrl-en-v1": "models/synthetic/static-st",
	}
	if len(fixture) != len(hub.Catalogue()) {
		t.Fatalf("catalogue has %d repos, this test covers %d", len(hub.Catalogue()), len(fixture))
	}
	for repo, layout := range hub.Catalogue() {
		t.Run(repo, func(t *testing.T) {
			src := sharedtest.Path(t, fixture[repo])
			files := map[string][]byte{"/" + repo + "/resolve/main/onnx/model.onnx": []byte("not wanted")}
			err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				b, err := os.ReadFile(p)
				rel, _ := filepath.Rel(src, p)
				files["/"+repo+"/resolve/main/"+filepath.ToSlash(rel)] = b
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			var (
				mu    sync.Mutex
				asked []string
			)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				defer mu.Unlock()
				asked = append(asked, r.URL.Path)
				b, ok := files[r.URL.Path]
				if !ok {
					http.NotFound(w, r)
					return
				}
				w.Write(b)
			}))
			defer srv.Close()
			root := t.TempDir()
			m, err := hub.Pull(context.Background(), repo, hub.PullOptions{Endpoint: srv.URL, Root: root})
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			for _, a := range asked {
				if strings.HasSuffix(a, ".onnx") {
					t.Errorf("pull of a static repo asked for %s", a)
				}
			}
			mu.Unlock()
			if len(m.Files) < len(layout.Required) {
				t.Errorf("pulled %d files, layout requires %d", len(m.Files), len(layout.Required))
			}
			enc, err := embed.OpenEncoder(context.Background(), embed.Options{ModelDir: filepath.Join(root, filepath.FromSlash(repo))})
			if err != nil {
				t.Fatalf("opening the pulled folder: %v", err)
			}
			defer enc.Close()
			v, err := enc.Encode(context.Background(), embed.Passage, []string{"static embeddings pulled from a hub"})
			if err != nil || len(v) != 1 || len(v[0]) != enc.Info().Dim {
				t.Fatalf("encoding with the pulled model: %v", err)
			}

			mu.Lock()
			delete(files, "/"+repo+"/resolve/main/"+layout.Required[len(layout.Required)-1])
			mu.Unlock()
			_, err = hub.Pull(context.Background(), repo, hub.PullOptions{Endpoint: srv.URL, Root: t.TempDir()})
			if err == nil || !strings.Contains(err.Error(), "404") {
				t.Errorf("pull without %s: %v", layout.Required[len(layout.Required)-1], err)
			}
		})
	}
}
