package annbench

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/kairos-rag/kairos/internal/childrss"
	"github.com/kairos-rag/kairos/internal/version"
)

// The engine protocol. Every engine of a comparison (Compare) that is not a server runs as child
// processes of the harness, one per phase, so that each one's peak resident memory is its own:
//
//	version  prints {"type":"version","version":V}; exit status 3 means "not installed"
//	build    reads the dump (--data), builds on --threads threads with --params (a JSON
//	         object of numbers) into --index, and prints {"type":"build","build_s":S}: the
//	         time from the vectors read to an index on disk that a new process can serve
//	serve    opens --index (the served form --setting, for an engine with several), then for
//	         each point of --sweep (a JSON list of objects of numbers, the engine's search
//	         settings) runs every query --repeat times on one thread, and prints one line
//	         {"type":"point","point":P,"seconds":S,"cpu_s":C,"ids":[[...]]} a point (the
//	         fastest pass, its CPU time, and the ids found, best first: the harness computes
//	         recall from them, the same way for every engine), then
//	         {"type":"serve","load_s":L,"rss_bytes":R} with the resident memory after the sweep
//	         (and "index_bytes" when the setting serves part of --index: else it is all of it).
//
// anchor_bench.py (hnswlib, FAISS) and anchor_lancedb.js speak it; Kairos's own indexes speak it
// through RunEngine, which `kairos bench ann-engine` runs.

// EngineOptions are one engine child's arguments (the protocol above). The zero value is not
// ready: Flags registers them, Phase and Engine are required.
type EngineOptions struct {
	Engine  string // the Kairos index: one of KairosEngines
	Setting string // serve: the served form (one of the engine's settings; "": its first)
	Data    string // the dump directory (Dump)
	Index   string // the engine's index directory
	Threads int    // build threads (0: GOMAXPROCS)
	Params  string // build parameters, a JSON object of numbers
	Sweep   string // search settings, a JSON list of objects of numbers
	Repeat  int    // timed passes per sweep point, the fastest kept (0: 1)
}

// Flags registers o's flags on fs.
func (o *EngineOptions) Flags(fs *flag.FlagSet) {
	fs.StringVar(&o.Engine, "engine", o.Engine, "the Kairos index `name` (kairos bench ann --engines lists them)")
	fs.StringVar(&o.Setting, "setting", o.Setting, "serve: the served form of the index (default: its first)")
	fs.StringVar(&o.Data, "data", o.Data, "the `directory` kairos bench ann --dump wrote")
	fs.StringVar(&o.Index, "index", o.Index, "the engine's index `directory`")
	fs.IntVar(&o.Threads, "threads", o.Threads, "build threads (0: all cores)")
	fs.StringVar(&o.Params, "params", o.Params, "build parameters, a JSON object of numbers")
	fs.StringVar(&o.Sweep, "sweep", o.Sweep, "serve: search settings, a JSON list of objects of numbers")
	fs.IntVar(&o.Repeat, "repeat", o.Repeat, "serve: timed passes per sweep point, the fastest kept")
}

// kairosIndex is one of Kairos's vector indexes as the harness builds and serves it: one entry
// of the comparison, built once and served in each of its settings. A new index (the IVF one)
// is one more element of KairosEngines with its build and open functions.
type kairosIndex struct {
	name, about string
	knob        string   // the sweep's key, which search reads from each point
	settings    []string // served forms, the first the default
	// params are the build parameters of n vectors of dim under o.
	params func(o CompareOptions, n, dim int) map[string]float64
	// build writes the index of the dump into dir.
	build func(ctx context.Context, d *dumpReader, dir string, threads int, p map[string]float64, log io.Writer) error
	// open opens the index in dir in one setting.
	open func(dir, setting string) (kairosSearcher, error)
	// files are the files of dir that setting serves (its index bytes).
	files func(dir, setting string) []string
}

// kairosSearcher answers one query with the ids of its k best, best first, at one sweep point.
type kairosSearcher interface {
	search(q []float32, k int, point map[string]float64) ([]uint64, error)
	Close() error
}

// KairosEngines are Kairos's own indexes in a comparison.
func KairosEngines() []kairosIndex {
	return []kairosIndex{hnswIndex(), ivfIndex()}
}

func kairosEngine(name string) (kairosIndex, error) {
	var names []string
	for _, e := range KairosEngines() {
		if e.name == name {
			return e, nil
		}
		names = append(names, e.name)
	}
	return kairosIndex{}, fmt.Errorf("no Kairos index %q (want one of %v)", name, names)
}

// RunEngine runs one phase of a Kairos engine child (see the protocol above), writing its JSON
// lines to out and its progress to log.
func RunEngine(ctx context.Context, phase string, o EngineOptions, out, log io.Writer) error {
	e, err := kairosEngine(o.Engine)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(out)
	if phase == "version" {
		return enc.Encode(map[string]any{"type": "version", "version": kairosVersion()})
	}
	if o.Data == "" || o.Index == "" {
		return fmt.Errorf("%s needs --data and --index", phase)
	}
	d, err := openDump(o.Data)
	if err != nil {
		return err
	}
	switch phase {
	case "build":
		var p map[string]float64
		if err := json.Unmarshal([]byte(orJSON(o.Params, "{}")), &p); err != nil {
			return fmt.Errorf("--params %q: %w", o.Params, err)
		}
		if err := os.MkdirAll(o.Index, 0o755); err != nil {
			return err
		}
		threads := o.Threads
		if threads <= 0 {
			threads = runtime.GOMAXPROCS(0)
		}
		t0 := time.Now()
		if err := e.build(ctx, d, o.Index, threads, p, log); err != nil {
			return fmt.Errorf("%s: build: %w", e.name, err)
		}
		return enc.Encode(map[string]any{"type": "build", "engine": e.name, "build_s": time.Since(t0).Seconds()})
	case "serve":
		var sweep []map[string]float64
		if err := json.Unmarshal([]byte(orJSON(o.Sweep, "[]")), &sweep); err != nil {
			return fmt.Errorf("--sweep %q: %w", o.Sweep, err)
		}
		setting := o.Setting
		if setting == "" {
			setting = e.settings[0]
		}
		if !slices.Contains(e.settings, setting) {
			return fmt.Errorf("%s: no setting %q (want one of %v)", e.name, setting, e.settings)
		}
		return serveKairos(ctx, e, setting, d, o.Index, sweep, max(o.Repeat, 1), enc)
	}
	return fmt.Errorf("unknown phase %q: want version, build or serve", phase)
}

func orJSON(s, empty string) string {
	if s == "" {
		return empty
	}
	return s
}

// serveKairos is the serve phase: the queries one after another on this goroutine's thread,
// the process confined to one CPU by the harness.
func serveKairos(ctx context.Context, e kairosIndex, setting string, d *dumpReader, dir string, sweep []map[string]float64, repeat int, enc *json.Encoder) error {
	queries, err := d.queries()
	if err != nil {
		return err
	}
	t0 := time.Now()
	s, err := e.open(dir, setting)
	if err != nil {
		return fmt.Errorf("%s: opening %s: %w", e.name, dir, err)
	}
	open := true
	defer func() {
		if open {
			s.Close()
		}
	}()
	load := time.Since(t0).Seconds()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, p := range sweep {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		best, bestCPU := math.Inf(1), 0.0
		var ids [][]int64
		for range repeat {
			res := make([][]uint64, len(queries))
			c0 := threadCPU()
			w0 := time.Now()
			for i, q := range queries {
				if res[i], err = s.search(q, d.meta.K, p); err != nil {
					return fmt.Errorf("%s: query %d at %v: %w", e.name, i, p, err)
				}
			}
			if el := time.Since(w0).Seconds(); el < best {
				best, bestCPU = el, (threadCPU() - c0).Seconds()
			}
			ids = toInt64(res)
		}
		if err := enc.Encode(map[string]any{"type": "point", "point": p, "seconds": best, "cpu_s": bestCPU, "ids": ids}); err != nil {
			return err
		}
	}
	rss, _, _ := childrss.Status(0)
	// Closed before its files are listed: listing may open the index again (the inverted
	// file's does, and reads every page for its checksums), and two mappings at once doubled
	// the peak this process reports (7.16 GB against 3.59 resident, 10M vectors).
	open = false
	if err := s.Close(); err != nil {
		return fmt.Errorf("%s: closing %s: %w", e.name, dir, err)
	}
	var size int64
	for _, f := range e.files(dir, setting) {
		st, err := os.Stat(f)
		if err != nil {
			return err
		}
		size += st.Size()
	}
	return enc.Encode(map[string]any{"type": "serve", "load_s": load, "rss_bytes": rss, "index_bytes": size})
}

func toInt64(res [][]uint64) [][]int64 {
	out := make([][]int64, len(res))
	for i, r := range res {
		out[i] = make([]int64, len(r))
		for j, x := range r {
			out[i][j] = int64(x)
		}
	}
	return out
}

// kairosVersion names the build of this binary as kairos version does (internal/version).
func kairosVersion() string { return version.String() }

// Meta is a dump's meta.json.
type Meta struct {
	N       int   `json:"n"`
	Dim     int   `json:"dim"`
	Queries int   `json:"queries"`
	K       int   `json:"k"`
	Seed    int64 `json:"seed"`
	M       int   `json:"m"`
	EfC     int   `json:"efc"`
	Efs     []int `json:"efs"`
}

// dumpReader reads a dump's base set in chunks (an engine child never holds it whole, so its
// peak memory is the index's, not the input's), and its queries.
type dumpReader struct {
	dir  string
	meta Meta
}

func openDump(dir string) (*dumpReader, error) {
	path := filepath.Join(dir, "meta.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m Meta
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if m.N < 1 || m.Dim < 1 || m.Queries < 1 || m.K < 1 {
		return nil, fmt.Errorf("%s: n %d, dim %d, queries %d, k %d: each must be positive", path, m.N, m.Dim, m.Queries, m.K)
	}
	st, err := os.Stat(filepath.Join(dir, "base.f32"))
	if err != nil {
		return nil, err
	}
	if st.Size() != int64(m.N)*int64(m.Dim)*4 {
		return nil, fmt.Errorf("%s: %d bytes, meta.json says %d x %d float32", filepath.Join(dir, "base.f32"), st.Size(), m.N, m.Dim)
	}
	return &dumpReader{dir: dir, meta: m}, nil
}

// chunks hands fn the base vectors in order, rows at a time; the slices are reused.
func (d *dumpReader) chunks(rows int, fn func(first int, vecs [][]float32) error) error {
	path := filepath.Join(d.dir, "base.f32")
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	dim := d.meta.Dim
	r := bufio.NewReaderSize(f, 1<<20)
	flat := make([]float32, rows*dim)
	vecs := make([][]float32, rows)
	raw := make([]byte, rows*dim*4)
	for first := 0; first < d.meta.N; first += rows {
		c := min(rows, d.meta.N-first)
		if _, err := io.ReadFull(r, raw[:c*dim*4]); err != nil {
			return fmt.Errorf("%s: row %d: %w", path, first, err)
		}
		for i := range c * dim {
			flat[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[i*4:]))
		}
		for i := range c {
			vecs[i] = flat[i*dim : (i+1)*dim : (i+1)*dim]
		}
		if err := fn(first, vecs[:c]); err != nil {
			return err
		}
	}
	return nil
}

func (d *dumpReader) queries() ([][]float32, error) {
	q, _, err := readDump(d.dir)
	return q, err
}
