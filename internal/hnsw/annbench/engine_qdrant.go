package annbench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/kairos-rag/kairos/internal/childrss"
	"github.com/kairos-rag/kairos/internal/dirsize"
	"github.com/kairos-rag/kairos/internal/hnsw/bench"
	"golang.org/x/sync/errgroup"
)

// QdrantVersion is the Qdrant release `make qdrant` installs (the Makefile's QDRANT_VERSION).
const QdrantVersion = "1.16.3"

// DefaultQdrantBinary is $KAIROS_QDRANT_BIN, else where `make qdrant` puts the server.
func DefaultQdrantBinary() string {
	if p := os.Getenv("KAIROS_QDRANT_BIN"); p != "" {
		return p
	}
	return filepath.Join(cacheDir(), "qdrant-"+QdrantVersion, "qdrant")
}

// defaultLanceDBModules is $KAIROS_LANCEDB_MODULES, else where `make lancedb` installs them.
func defaultLanceDBModules() string {
	if p := os.Getenv("KAIROS_LANCEDB_MODULES"); p != "" {
		return p
	}
	return filepath.Join(cacheDir(), "lancedb-"+bench.LanceDBVersion, "node_modules")
}

func benchLanceDBVersion() string { return bench.LanceDBVersion }

// cacheDir is the Makefile's $(CACHE): ~/.cache/kairos.
func cacheDir() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "kairos-cache")
	}
	return filepath.Join(home, ".cache", "kairos")
}

// qdrantRunner measures Qdrant: the engine is the server, a child process of its own for the
// build (every core indexing) and another for serving (confined to one CPU, one search
// thread), whose peak and resident memory are measured like any child's. This process is its
// client over REST on the loopback: the build uploads the vectors as Qdrant's bulk-load advice
// says (indexing off during the upload, then on) and waits for the collection to be indexed;
// the queries go in batches of qdrantBatch to /points/query/batch, so that HTTP costs little
// per query. Vectors stay on disk (on_disk), their quantized codes in memory (always_ram), and
// the candidates are rescored with the original vectors (rescore, oversampling).
type qdrantRunner struct{ quant string } // "binary" or "scalar"

const (
	qdrantCollection = "bench"
	qdrantUpload     = 1000 // points per upsert
	qdrantBatch      = 100  // queries per batch request
)

func (r qdrantRunner) version(ctx context.Context, e *Entry, env *runEnv) (string, error) {
	out, err := exec.CommandContext(ctx, env.o.Qdrant, "--version").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s --version: %v: run `%s` (or pass --qdrant)", env.o.Qdrant, err, e.Install)
	}
	f := strings.Fields(string(out))
	if len(f) < 2 {
		return "", fmt.Errorf("%s --version: %q", env.o.Qdrant, out)
	}
	return f[len(f)-1], nil
}

// qdrantProc is one running server.
type qdrantProc struct {
	cmd  *exec.Cmd
	base string // http://127.0.0.1:port
	done chan struct{}
	log  *os.File
}

// startQdrant starts a server on env.index's storage; pinned confines it to env.cpu with one
// search thread.
func startQdrant(ctx context.Context, env *runEnv, pinned bool) (*qdrantProc, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	dir := env.index
	log, err := os.OpenFile(filepath.Join(dir, "qdrant.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(env.o.Qdrant, "--disable-telemetry")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"QDRANT__SERVICE__HOST=127.0.0.1",
		"QDRANT__SERVICE__HTTP_PORT="+strconv.Itoa(ports[0]),
		"QDRANT__SERVICE__GRPC_PORT="+strconv.Itoa(ports[1]),
		"QDRANT__STORAGE__STORAGE_PATH="+filepath.Join(dir, "storage"),
		"QDRANT__STORAGE__SNAPSHOTS_PATH="+filepath.Join(dir, "snapshots"),
		"QDRANT__LOG_LEVEL=WARN",
	)
	if pinned {
		cmd.Env = append(cmd.Env, "QDRANT__STORAGE__PERFORMANCE__MAX_SEARCH_THREADS=1")
	}
	cmd.Stdout, cmd.Stderr = log, log
	start := childrss.Start
	if pinned && env.cpu >= 0 {
		start = func(c *exec.Cmd) error { return childrss.StartOnCPU(c, env.cpu) }
	}
	if err := start(cmd); err != nil {
		log.Close()
		return nil, fmt.Errorf("starting %s: %w", env.o.Qdrant, err)
	}
	p := &qdrantProc{cmd: cmd, base: "http://127.0.0.1:" + strconv.Itoa(ports[0]), done: make(chan struct{}), log: log}
	go func() { cmd.Wait(); close(p.done) }()
	if err := p.waitReady(ctx, time.Minute); err != nil {
		p.stop()
		return nil, err
	}
	return p, nil
}

func (p *qdrantProc) waitReady(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		select {
		case <-p.done:
			return fmt.Errorf("qdrant exited while starting: %s", tailFile(p.log.Name()))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if code, _, err := p.call(ctx, http.MethodGet, "/readyz", nil); err == nil && code == 200 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("qdrant not ready after %v: %s", limit, tailFile(p.log.Name()))
		}
	}
}

// stop ends the server (SIGTERM, then SIGKILL after a minute) and returns its peak RSS.
func (p *qdrantProc) stop() int64 {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(time.Minute):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	p.log.Close()
	return childrss.Peak(p.cmd.ProcessState)
}

// call sends a JSON request and returns the status and body.
func (p *qdrantProc) call(ctx context.Context, method, path string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, p.base+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// must is call that wants a 200.
func (p *qdrantProc) must(ctx context.Context, method, path string, body any) ([]byte, error) {
	var raw []byte
	switch b := body.(type) {
	case nil:
	case []byte:
		raw = b
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			return nil, err
		}
	}
	code, out, err := p.call(ctx, method, path, raw)
	if err != nil {
		return nil, fmt.Errorf("qdrant %s %s: %w", method, path, err)
	}
	if code != http.StatusOK {
		return nil, fmt.Errorf("qdrant %s %s: %d %s", method, path, code, truncate(out))
	}
	return out, nil
}

func (r qdrantRunner) collection(e *Entry, dim int) map[string]any {
	q := map[string]any{"binary": map[string]any{"always_ram": true}}
	if r.quant == "scalar" {
		q = map[string]any{"scalar": map[string]any{"type": "int8", "quantile": 0.99, "always_ram": true}}
	}
	return map[string]any{
		"vectors": map[string]any{"size": dim, "distance": "Dot", "on_disk": true},
		// full_scan_threshold 10 KB (its least): every segment is searched through its graph, however small
		// (a test's); a benchmark's segments are far above Qdrant's 10 MB default anyway.
		"hnsw_config":         map[string]any{"m": int(e.Params["m"]), "ef_construct": int(e.Params["efc"]), "full_scan_threshold": 10},
		"optimizers_config":   map[string]any{"indexing_threshold": 0}, // no indexing during the upload
		"quantization_config": q,
	}
}

func (r qdrantRunner) build(ctx context.Context, e *Entry, env *runEnv) (built, error) {
	d, err := openDump(env.data)
	if err != nil {
		return built{}, err
	}
	p, err := startQdrant(ctx, env, false)
	if err != nil {
		return built{}, err
	}
	b := built{}
	fail := func(err error) (built, error) {
		b.peakRSS = p.stop()
		return b, err
	}
	t0 := time.Now()
	if _, err := p.must(ctx, http.MethodPut, "/collections/"+qdrantCollection, r.collection(e, d.meta.Dim)); err != nil {
		return fail(err)
	}
	// As many upserts in flight as the build has threads, as Qdrant's own clients upload in
	// parallel: one at a time kept the server on one core (87% of it, this client 13%; 7,200
	// vectors a second at 10M) while the other stood idle.
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(env.threads, 1))
	var uploaded atomic.Int64
	var logMu sync.Mutex
	err = d.chunks(qdrantUpload, func(first int, vecs [][]float32) error {
		if gctx.Err() != nil {
			return gctx.Err() // an upsert failed: g.Wait says which
		}
		body := new(bytes.Buffer) // encoded now: chunks reuses vecs for the next batch
		body.WriteString(`{"batch":{"ids":[`)
		for i := range vecs {
			if i > 0 {
				body.WriteByte(',')
			}
			body.WriteString(strconv.Itoa(first + i))
		}
		body.WriteString(`],"vectors":[`)
		writeVectors(body, vecs)
		body.WriteString(`]}}`)
		n := int64(len(vecs))
		g.Go(func() error {
			if _, err := p.must(gctx, http.MethodPut, "/collections/"+qdrantCollection+"/points?wait=true", body.Bytes()); err != nil {
				return err
			}
			if done := uploaded.Add(n); done%(100*qdrantUpload) == 0 || done == int64(d.meta.N) {
				logMu.Lock()
				fmt.Fprintf(env.log, "  %s: uploaded %d/%d (%.0f/s)\n", e.Name, done, d.meta.N, float64(done)/time.Since(t0).Seconds())
				logMu.Unlock()
			}
			return nil
		})
		return nil
	})
	if werr := g.Wait(); werr != nil {
		err = werr
	}
	if err != nil {
		return fail(err)
	}
	// Indexing on for every segment (1 KB), then wait until every vector is in a graph.
	if _, err := p.must(ctx, http.MethodPatch, "/collections/"+qdrantCollection,
		map[string]any{"optimizers_config": map[string]any{"indexing_threshold": 1}}); err != nil {
		return fail(err)
	}
	if err := p.waitIndexed(ctx, d.meta.N, env.log, e.Name, t0); err != nil {
		return fail(err)
	}
	b.seconds = time.Since(t0).Seconds()
	b.peakRSS = p.stop()
	if _, err := os.Stat(filepath.Join(env.index, "storage")); err != nil {
		return b, err
	}
	return b, nil
}

// waitIndexed waits until the collection is green with n points, all of them indexed.
func (p *qdrantProc) waitIndexed(ctx context.Context, n int, log io.Writer, name string, t0 time.Time) error {
	last := time.Now()
	for {
		out, err := p.must(ctx, http.MethodGet, "/collections/"+qdrantCollection, nil)
		if err != nil {
			return err
		}
		var info struct {
			Result struct {
				Status          string `json:"status"`
				OptimizerStatus any    `json:"optimizer_status"`
				Points          int    `json:"points_count"`
				Indexed         int    `json:"indexed_vectors_count"`
				Segments        int    `json:"segments_count"`
			} `json:"result"`
		}
		if err := json.Unmarshal(out, &info); err != nil {
			return fmt.Errorf("qdrant collection info %q: %w", truncate(out), err)
		}
		ri := info.Result
		if ri.OptimizerStatus != "ok" {
			return fmt.Errorf("qdrant optimizer: %v", ri.OptimizerStatus)
		}
		if ri.Status == "green" && ri.Points == n && ri.Indexed >= n {
			fmt.Fprintf(log, "  %s: %d points indexed in %d segments\n", name, ri.Points, ri.Segments)
			return nil
		}
		if time.Since(last) > 30*time.Second {
			last = time.Now()
			fmt.Fprintf(log, "  %s: indexing, %d of %d vectors in graphs, status %s (%.0fs)\n", name, ri.Indexed, ri.Points, ri.Status, time.Since(t0).Seconds())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.done:
			return fmt.Errorf("qdrant exited while indexing: %s", tailFile(p.log.Name()))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func writeVectors(b *bytes.Buffer, vecs [][]float32) {
	var num []byte
	for i, v := range vecs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('[')
		for j, x := range v {
			if j > 0 {
				b.WriteByte(',')
			}
			num = strconv.AppendFloat(num[:0], float64(x), 'g', -1, 32)
			b.Write(num)
		}
		b.WriteByte(']')
	}
}

func (r qdrantRunner) serve(ctx context.Context, e *Entry, s Setting, env *runEnv) (served, error) {
	d, err := openDump(env.data)
	if err != nil {
		return served{}, err
	}
	queries, err := d.queries()
	if err != nil {
		return served{}, err
	}
	t0 := time.Now()
	p, err := startQdrant(ctx, env, true)
	if err != nil {
		return served{}, err
	}
	sv := served{cpus: childrss.CPUs(p.cmd.Process.Pid)}
	fail := func(err error) (served, error) {
		sv.peakRSS = p.stop()
		return sv, err
	}
	if err := p.waitIndexed(ctx, d.meta.N, env.log, e.Name, t0); err != nil {
		return fail(err)
	}
	sv.loadS = time.Since(t0).Seconds()
	pid := p.cmd.Process.Pid
	for _, pt := range s.Sweep {
		bodies := qdrantQueries(queries, d.meta.K, pt)
		best, bestCPU := math.Inf(1), 0.0
		var ids [][]int64
		for range max(env.o.Repeat, 1) {
			c0, _ := childrss.CPUTime(pid)
			w0 := time.Now()
			got := make([][]int64, 0, len(queries))
			for _, body := range bodies {
				out, err := p.must(ctx, http.MethodPost, "/collections/"+qdrantCollection+"/points/query/batch", body)
				if err != nil {
					return fail(err)
				}
				var res struct {
					Result []struct {
						Points []struct {
							ID int64 `json:"id"`
						} `json:"points"`
					} `json:"result"`
				}
				if err := json.Unmarshal(out, &res); err != nil {
					return fail(fmt.Errorf("qdrant query answer %q: %w", truncate(out), err))
				}
				for _, r := range res.Result {
					row := make([]int64, len(r.Points))
					for i, x := range r.Points {
						row[i] = x.ID
					}
					got = append(got, row)
				}
			}
			el := time.Since(w0).Seconds()
			c1, _ := childrss.CPUTime(pid)
			if el < best {
				best, bestCPU = el, c1-c0
			}
			ids = got
		}
		if len(ids) != len(queries) {
			return fail(fmt.Errorf("qdrant answered %d of %d queries", len(ids), len(queries)))
		}
		sv.points = append(sv.points, rawPoint{Point: pt, Seconds: best, CPUS: bestCPU, IDs: ids})
	}
	sv.rss, _, _ = childrss.Status(pid)
	sv.peakRSS = p.stop()
	sv.indexBytes, _ = dirsize.Bytes(filepath.Join(env.index, "storage"))
	return sv, nil
}

// qdrantQueries are the batch request bodies of every query at one sweep point.
func qdrantQueries(queries [][]float32, k int, pt map[string]float64) [][]byte {
	params := fmt.Sprintf(`"params":{"hnsw_ef":%d,"quantization":{"rescore":true,"oversampling":%s}}`,
		int(pt["hnsw_ef"]), strconv.FormatFloat(max(pt["oversampling"], 1), 'g', -1, 64))
	var out [][]byte
	for i := 0; i < len(queries); i += qdrantBatch {
		var b bytes.Buffer
		b.WriteString(`{"searches":[`)
		for j, q := range queries[i:min(i+qdrantBatch, len(queries))] {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`{"query":`)
			writeVectors(&b, [][]float32{q})
			fmt.Fprintf(&b, `,"limit":%d,"with_payload":false,"with_vector":false,%s}`, k, params)
		}
		b.WriteString(`]}`)
		out = append(out, b.Bytes())
	}
	return out
}

// freePorts returns n loopback ports free now.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// tailFile is the last lines of a log, for an error.
func tailFile(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return "(empty log " + path + ")"
	}
	return string(b)
}
