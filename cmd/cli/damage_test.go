package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kairos-rag/kairos/indexer"
	"github.com/kairos-rag/kairos/indexer/manifest"
	"github.com/kairos-rag/kairos/server"
)

// damageLive applies one of the corruptions to a bleve segment of the live generation
// of dir (built with --lexical bleve) and returns the damaged file.
func damageLive(t *testing.T, dir, how string) string {
	t.Helper()
	gen, err := manifest.Current(dir)
	if err != nil {
		t.Fatal(err)
	}
	zaps, _ := filepath.Glob(filepath.Join(gen, "bm25", "store", "*.zap"))
	sort.Strings(zaps)
	if len(zaps) == 0 {
		t.Fatalf("no segment in %s", gen)
	}
	path := zaps[0]
	switch how {
	case "truncated zap":
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		err = os.Truncate(path, fi.Size()/2)
		if err != nil {
			t.Fatal(err)
		}
	case "padded zap":
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.Write(bytes.Repeat([]byte{0xff}, 1000))
		f.Close()
	case "damaged root.bolt":
		path = filepath.Join(gen, "bm25", "store", "root.bolt")
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 64 && i < len(b); i++ {
			b[i] = 0
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatalf("unknown damage %q", how)
	}
	return path
}

var cliDamages = []string{"truncated zap", "padded zap", "damaged root.bolt"}

// TestDamagedIndexCLI: verify, search, stats, update, delete and compact on a damaged index
// fail with exit status 1 and "index damaged: FILE: ..." (no panic: the test runs them in
// process, so a panic would end it).
func TestDamagedIndexCLI(t *testing.T) {
	faq := coreShared(t, "data/faq-covid-deepset/faq_covidbert.csv")
	for _, how := range cliDamages {
		t.Run(how, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "idx")
			if _, _, err := runCLI(t, "index", "--quiet", "--lexical", "bleve", "--input", faq, "--index", dir); err != nil {
				t.Fatal(err)
			}
			path := damageLive(t, dir, how)
			for _, args := range [][]string{
				{"verify", "--index", dir},
				{"search", "--index", dir, "mask"},
				{"stats", "--index", dir},
				{"index", "--quiet", "--update", "--input", faq, "--index", dir},
				{"delete", "--index", dir, "--doc-id", "1"},
				{"compact", "--index", dir},
			} {
				out, errOut, err := runCLI(t, args...)
				if err == nil {
					t.Errorf("%s succeeded on a damaged index:\n%s", args[0], out)
					continue
				}
				if ExitCode(err) != 1 {
					t.Errorf("%s: exit %d, want 1", args[0], ExitCode(err))
				}
				msg := err.Error()
				if args[0] == "verify" {
					msg = out // verify lists the problems, its error counts them
				}
				if !strings.Contains(msg, path) || strings.Contains(msg+errOut, "goroutine ") {
					t.Errorf("%s: %v\n%s\nwant the damaged file %s named", args[0], err, out, path)
				}
				if args[0] != "verify" && !strings.Contains(msg, "index damaged: "+path+": ") {
					t.Errorf("%s: %v, want index damaged: %s: ...", args[0], err, path)
				}
			}
		})
	}
}

// syncBuffer is a log sink tests read while the server writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestReloadOntoDamagedIndex serves a real index, rebuilds it, damages the new generation,
// and reloads by SIGHUP and by HTTP: both fail, say "index damaged", and the old engine keeps
// answering. A repaired index then reloads.
func TestReloadOntoDamagedIndex(t *testing.T) {
	faq := coreShared(t, "data/faq-covid-deepset/faq_covidbert.csv")
	for _, how := range cliDamages {
		t.Run(how, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "idx")
			rebuild := func() {
				t.Helper()
				if _, _, err := runCLI(t, "index", "--quiet", "--force", "--lexical", "bleve", "--input", faq, "--index", dir); err != nil {
					t.Fatal(err)
				}
			}
			rebuild()
			logs := &syncBuffer{}
			log := slog.New(slog.NewTextHandler(logs, nil))
			opts := server.Options{Logger: log,
				Index: newLiveIndex(indexer.Location{Dir: dir}, "", retrievalOptions{Logger: log})}
			ctx, cancel := context.WithCancel(context.Background())
			hup := make(chan os.Signal, 1)
			addrc := make(chan net.Addr, 1)
			done := make(chan error, 1)
			go func() {
				done <- serve(ctx, "127.0.0.1:0", 5*time.Second, opts, hup, func(a net.Addr) { addrc <- a })
			}()
			base := "http://" + (<-addrc).String()
			call := func(method, path, body string) (int, string) {
				t.Helper()
				req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(b)
			}
			serving := func(when string) {
				t.Helper()
				if code, body := call("GET", "/readyz", ""); code != 200 || !strings.Contains(body, `"generation":1`) {
					t.Fatalf("%s: readyz %d %s, want generation 1 serving", when, code, body)
				}
				if code, body := call("POST", "/v1/search", `{"text":"mask","k":3}`); code != 200 || !strings.Contains(body, "passage_id") {
					t.Fatalf("%s: search %d %s", when, code, body)
				}
			}
			serving("start")
			rebuild() // a new generation, with files of its own
			path := damageLive(t, dir, how)

			hup <- syscall.SIGHUP
			for deadline := time.Now().Add(10 * time.Second); !strings.Contains(logs.String(), "reload failed"); time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("no reload failure logged after SIGHUP:\n%s", logs.String())
				}
			}
			if !strings.Contains(logs.String(), "index damaged: "+path) {
				t.Errorf("SIGHUP reload log does not name %s:\n%s", path, logs.String())
			}
			serving("after SIGHUP")

			code, body := call("POST", "/v1/admin/reload", "")
			if code != 500 || !strings.Contains(body, "index damaged: "+path) {
				t.Errorf("HTTP reload: %d %s, want 500 naming %s", code, body, path)
			}
			serving("after HTTP reload")

			rebuild()
			// Three builds (--force), one successful reload: generation 3, reloaded once.
			if code, body := call("POST", "/v1/admin/reload", ""); code != 200 || !strings.Contains(body, `"generation":3,"reloads":1`) {
				t.Errorf("reload of the repaired index: %d %s", code, body)
			}
			cancel()
			if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
				t.Fatalf("serve: %v", err)
			}
		})
	}
}
