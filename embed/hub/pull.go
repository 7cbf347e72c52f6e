// Package hub downloads model folders from a Hugging Face compatible endpoint (the hub or a
// mirror), verifying the sha256 pins Kairos knows, and lists the models installed locally.
package hub

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/kairos-rag/kairos/internal/atomicfile"
)

// DefaultEndpoint is used when neither PullOptions.Endpoint nor $HF_ENDPOINT is set.
const DefaultEndpoint = "https://huggingface.co"

// ManifestName is the file Pull writes last into a model folder: what was fetched, from where,
// with which hashes. Its presence means the pull completed.
const ManifestName = "kairos-pull.json"

// PullOptions configures Pull. Zero values mean defaults.
type PullOptions struct {
	Endpoint string // default $HF_ENDPOINT, then DefaultEndpoint
	Root     string // models root; default DefaultRoot()
	Revision string // branch, tag or commit; default "main"
	ONNXFile string // ONNX file in the repo; default "onnx/model.onnx"
	Token    string // bearer token for gated repos; default $HF_TOKEN
	Pins     Pins   // default BuiltinPins()
	// Layouts are the repos with files other than an ONNX export's (static models);
	// default Catalogue(). ONNXFile is ignored for them.
	Layouts  map[string]Layout
	Client   *http.Client // default: 30 s connect/header timeouts, no overall limit (files are big)
	Progress io.Writer    // progress lines (rate, ETA); nil: none
	Logger   *slog.Logger // nil: silent
}

// FileRecord is one fetched file.
type FileRecord struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	Pinned bool   `json:"pinned"` // a known pin existed and matched
}

// Manifest is the content of ManifestName.
type Manifest struct {
	Repo      string       `json:"repo"`
	Revision  string       `json:"revision"`
	Endpoint  string       `json:"endpoint"`
	Files     []FileRecord `json:"files"`
	FetchedAt time.Time    `json:"fetched_at"`
}

// DefaultRoot is $HOME/.cache/kairos/models.
func DefaultRoot() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(".cache", "kairos", "models")
	}
	return filepath.Join(home, ".cache", "kairos", "models")
}

var repoName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$`)

// Pull downloads repo ("owner/name") into Root/owner/name and returns its manifest. Each file is
// written to a temporary file, hashed while downloading, checked against its pin and renamed
// into place, so an interrupted or rejected download never leaves a partial file under the
// final name. A pin mismatch is an error and the file is discarded.
func Pull(ctx context.Context, repo string, o PullOptions) (Manifest, error) {
	if !repoName.MatchString(repo) || strings.Contains(repo, "..") {
		return Manifest{}, fmt.Errorf("model name %q: want owner/name", repo)
	}
	o.SetDefaults()
	dir := filepath.Join(o.Root, filepath.FromSlash(repo))
	created := missingDirs(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Manifest{}, err
	}
	m, err := o.pull(ctx, repo, dir)
	if err != nil {
		// A failed pull leaves no empty folder behind (a model that seems installed and is
		// not): the empty ones it made go, files already fetched whole stay.
		removeEmpty(dir)
		for _, d := range created {
			_ = os.Remove(d) // only if empty
		}
	}
	return m, err
}

// pull fetches repo's files into dir, then writes the manifest.
func (o PullOptions) pull(ctx context.Context, repo, dir string) (Manifest, error) {
	m := Manifest{Repo: repo, Revision: o.Revision, Endpoint: o.Endpoint}
	layout, ok := o.Layouts[repo]
	if !ok {
		layout = onnxLayout(o.ONNXFile)
	}
	files := append(append([]string{}, layout.Required...), layout.Optional...)
	for i, f := range files {
		optional := i >= len(layout.Required)
		rec, err := o.fetch(ctx, repo, f, dir)
		if errors.Is(err, errNotFound) && optional {
			o.Logger.Debug("optional file absent", slog.String("file", f))
			continue
		}
		if err != nil {
			return Manifest{}, fmt.Errorf("pulling %s: %w", repo, err)
		}
		m.Files = append(m.Files, rec)
	}
	m.FetchedAt = time.Now().UTC()
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return Manifest{}, err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, ManifestName), b, atomicfile.Options{}); err != nil {
		return Manifest{}, fmt.Errorf("pulling %s: %w", repo, err)
	}
	return m, nil
}

// SetDefaults sets the zero fields to their defaults: Endpoint from $HF_ENDPOINT, then
// DefaultEndpoint; Root DefaultRoot(); Revision "main".
func (o *PullOptions) SetDefaults() {
	if o.Endpoint == "" {
		o.Endpoint = os.Getenv("HF_ENDPOINT")
	}
	if o.Endpoint == "" {
		o.Endpoint = DefaultEndpoint
	}
	o.Endpoint = strings.TrimRight(o.Endpoint, "/")
	if o.Root == "" {
		o.Root = DefaultRoot()
	}
	if o.Revision == "" {
		o.Revision = "main"
	}
	if o.ONNXFile == "" {
		o.ONNXFile = "onnx/model.onnx"
	}
	if o.Token == "" {
		o.Token = os.Getenv("HF_TOKEN")
	}
	if o.Pins == nil {
		o.Pins = BuiltinPins()
	}
	if o.Layouts == nil {
		o.Layouts = Catalogue()
	}
	if o.Client == nil {
		o.Client = &http.Client{Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			TLSHandshakeTimeout:   30 * time.Second,
			ResponseHeaderTimeout: 30 * time.Second,
		}}
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

var errNotFound = errors.New("not found upstream (HTTP 404)")

// UnreachableError is a request that got no HTTP answer from the endpoint (no network, a
// name that does not resolve, a refused connection): the fix is another endpoint, so callers
// can name theirs (kairos models pull: --endpoint, $HF_ENDPOINT).
type UnreachableError struct {
	Endpoint string
	Err      error
}

func (e *UnreachableError) Error() string { return "cannot reach " + e.Endpoint + ": " + e.Err.Error() }
func (e *UnreachableError) Unwrap() error { return e.Err }

// missingDirs returns dir and those of its parents that do not exist yet, deepest first:
// what MkdirAll(dir) is about to create.
func missingDirs(dir string) []string {
	var out []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || filepath.Dir(d) == d {
			return out
		}
		out = append(out, d)
	}
}

// removeEmpty removes the empty folders under dir (onnx/, 1_Pooling/ of a pull that failed
// before their file arrived), deepest first; dir itself stays.
func removeEmpty(dir string) {
	var dirs []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && p != dir {
			dirs = append(dirs, p)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		_ = os.Remove(dirs[i]) // only if empty
	}
}

// fetch downloads one file into dir atomically and verifies its pin.
func (o PullOptions) fetch(ctx context.Context, repo, file, dir string) (FileRecord, error) {
	u := fmt.Sprintf("%s/%s/resolve/%s/%s", o.Endpoint, repo, url.PathEscape(o.Revision), file)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return FileRecord{}, err
	}
	if o.Token != "" {
		req.Header.Set("Authorization", "Bearer "+o.Token)
	}
	resp, err := o.Client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return FileRecord{}, fmt.Errorf("%s: %w", file, err)
		}
		return FileRecord{}, fmt.Errorf("%s: %w", file, &UnreachableError{Endpoint: o.Endpoint, Err: err})
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return FileRecord{}, fmt.Errorf("%s: %w", file, errNotFound)
	}
	if resp.StatusCode != http.StatusOK {
		return FileRecord{}, fmt.Errorf("%s: GET %s: %s", file, u, resp.Status)
	}
	dst := filepath.Join(dir, filepath.FromSlash(file))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return FileRecord{}, err
	}
	var rec FileRecord
	err = atomicfile.Write(dst, atomicfile.Options{}, func(w io.Writer) error {
		h := sha256.New()
		pr := &progress{w: o.Progress, name: file, total: resp.ContentLength, start: time.Now()}
		n, err := io.Copy(io.MultiWriter(w, h, pr), resp.Body)
		if err != nil {
			return fmt.Errorf("%s: after %d bytes: %w", file, n, err)
		}
		pr.done()
		if resp.ContentLength >= 0 && n != resp.ContentLength {
			return fmt.Errorf("%s: got %d bytes, server announced %d", file, n, resp.ContentLength)
		}
		rec = FileRecord{Path: file, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}
		if pin, ok := o.Pins.lookup(repo, file); ok {
			if pin.SHA256 != rec.SHA256 || (pin.Size != 0 && pin.Size != n) {
				return fmt.Errorf("%s: PIN MISMATCH: got sha256 %s (%d bytes), want %s (%d bytes); file discarded",
					file, rec.SHA256, n, pin.SHA256, pin.Size)
			}
			rec.Pinned = true
		}
		return nil
	})
	if err != nil {
		return FileRecord{}, err
	}
	return rec, nil
}

// progress prints "file: 12.0/90.4 MB (13%) 8.1 MB/s ETA 9s" at most once a second.
type progress struct {
	w     io.Writer
	name  string
	total int64
	n     int64
	start time.Time
	last  time.Time
}

func (p *progress) Write(b []byte) (int, error) {
	p.n += int64(len(b))
	if now := time.Now(); now.Sub(p.last) >= time.Second {
		p.last = now
		p.print()
	}
	return len(b), nil
}

func (p *progress) done() { p.print() }

func (p *progress) print() {
	el := time.Since(p.start).Seconds()
	rate := float64(p.n) / max(el, 1e-9)
	if p.total > 0 {
		eta := time.Duration(float64(p.total-p.n)/max(rate, 1)) * time.Second
		fmt.Fprintf(p.w, "%s: %.1f/%.1f MB (%d%%) %.1f MB/s ETA %s\n", p.name, mb(p.n), mb(p.total),
			p.n*100/p.total, mb(int64(rate)), eta.Round(time.Second))
		return
	}
	fmt.Fprintf(p.w, "%s: %.1f MB %.1f MB/s\n", p.name, mb(p.n), mb(int64(rate)))
}

func mb(n int64) float64 { return float64(n) / 1e6 }
