package annbench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kairos-rag/kairos/internal/childrss"
	"github.com/kairos-rag/kairos/internal/dirsize"
	"github.com/kairos-rag/kairos/internal/hnsw"
)

// CompareOptions is a comparison of vector indexes on one data set: Kairos's own and the anchor
// engines users pick instead, each built once by a child process on every core and served by
// another confined to one CPU, over a sweep of its own search knob. The zero value is not
// ready: call SetDefaults, or Flags (which registers SetDefaults's values as the flags'
// defaults). The graph parameters, seed, ef list and repeat count are Config's, copied in by
// the caller.
type CompareOptions struct {
	// Engines are the engines to run, by name or group (EngineGroups); every one must be
	// installed, or Compare refuses before it starts and names the make target.
	Engines []string
	// Work holds the dump and the indexes ("": a temporary directory, removed at the end unless
	// Keep). Each engine's index is removed once it is measured, unless Keep.
	Work string
	Keep bool
	// Kairos is the command line that runs a Kairos engine child: `kairos bench ann-engine`
	// ("": this executable with those arguments).
	Kairos []string
	// KairosEnv is added to the environment of Kairos engine children (tests re-run their own
	// binary as the child).
	KairosEnv []string
	Python    string // the python with Debian's python3-faiss and python3-hnswlib
	Node      string // the node that runs the LanceDB anchor
	// LanceDBModules is the node_modules directory `make lancedb` installs.
	LanceDBModules string
	Qdrant         string // the qdrant server binary `make qdrant` installs

	M, EfC  int   // graph parameters of every HNSW engine (Kairos, hnswlib, FAISS, Qdrant)
	Seed    int64 // graph seed where an engine takes one
	Efs     []int // the ef sweep of the HNSW engines (Qdrant's hnsw_ef)
	Repeat  int   // timed passes per sweep point, the fastest kept
	Threads int   // build threads (0: GOMAXPROCS)

	NList int // FAISS IVF lists (0: a power of two near 4*sqrt(n))
	PQM   int // FAISS IVF-PQ sub-quantizers of 8 bits (0: dim/8)
	Train int // FAISS training vectors (0: 64 per list)
	// NProbes is the nprobe sweep of the FAISS IVF engines (values above the lists dropped).
	NProbes []int
	// QdrantOversampling is crossed with Efs for Qdrant's sweep (its quantized candidates
	// rescored with the on-disk vectors).
	QdrantOversampling []float64
	// LanceDBPartitions and LanceDBSubVectors are IVF_PQ's num_partitions and num_sub_vectors
	// (0: LanceDB's defaults, sqrt(n) and dim/16).
	LanceDBPartitions, LanceDBSubVectors int
	// LanceDBNProbes and LanceDBRefine are crossed for LanceDB's sweep (refine_factor 0: none).
	// Its default product codes of dim/16 bytes hold recall@10 near 0.23 unrefined on the topic
	// fixture at 200k, and 0.47 with refine_factor 4 at any nprobes, so the sweep refines to 64.
	LanceDBNProbes, LanceDBRefine []int

	// AtQPS is the query rate the summary compares recall at (recall@10 of each engine's best
	// point at or above it).
	AtQPS float64
	Data  string    // what the vectors are, for the report ("topic fixture, 1000 topics")
	Log   io.Writer // progress; nil: none
}

// Defaults of CompareOptions.
const (
	DefaultPython = "/usr/bin/python3" // Debian's, which python3-faiss and python3-hnswlib serve
	DefaultNode   = "node"
	DefaultAtQPS  = 1000
)

// AnchorEngines are the engines --engines anchors names: the ones the dense-retrieval issue
// compares Kairos with (faiss-hnsw-flat, which it does not, only by name).
func AnchorEngines() []string {
	return []string{"hnswlib", "faiss-ivfpq", "faiss-ivfflat", "faiss-hnsw-sq", "qdrant-bq", "qdrant-sq", "lancedb-ivfpq"}
}

// SetDefaults fills the unset fields.
func (o *CompareOptions) SetDefaults() {
	if len(o.Engines) == 0 {
		o.Engines = []string{"kairos", "anchors"}
	}
	if o.Python == "" {
		o.Python = DefaultPython
	}
	if o.Node == "" {
		o.Node = DefaultNode
	}
	if o.LanceDBModules == "" {
		o.LanceDBModules = defaultLanceDBModules()
	}
	if o.Qdrant == "" {
		o.Qdrant = DefaultQdrantBinary()
	}
	if o.M == 0 {
		o.M = hnsw.DefaultM
	}
	if o.EfC == 0 {
		o.EfC = hnsw.DefaultEfConstruction
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if len(o.Efs) == 0 {
		o.Efs = []int{16, 32, 64, 128, 256, 512}
	}
	if o.Repeat == 0 {
		o.Repeat = 3
	}
	if len(o.NProbes) == 0 {
		o.NProbes = []int{1, 2, 4, 8, 16, 32, 64, 128, 256}
	}
	if len(o.QdrantOversampling) == 0 {
		o.QdrantOversampling = []float64{1, 2, 4, 16}
	}
	if len(o.LanceDBNProbes) == 0 {
		o.LanceDBNProbes = []int{5, 10, 20, 40, 80, 160}
	}
	if len(o.LanceDBRefine) == 0 {
		o.LanceDBRefine = []int{0, 4, 16, 64}
	}
	if o.AtQPS == 0 {
		o.AtQPS = DefaultAtQPS
	}
}

// Flags registers the comparison's own flags on fs (the graph parameters, ef list, seed and
// repeat count are bench ann's, which the caller copies in), with SetDefaults's values.
func (o *CompareOptions) Flags(fs *flag.FlagSet) {
	d := *o
	d.SetDefaults()
	fs.Func("engines", fmt.Sprintf("compare these engines on the same vectors, each built and served by its own child process (comma-separated names or groups; default %s): %s",
		strings.Join(d.Engines, ","), engineHelp()), func(s string) error {
		o.Engines = splitList(s)
		return nil
	})
	fs.StringVar(&o.Work, "work", d.Work, "with --engines: `directory` for the dump and the indexes (default: a temporary one, removed)")
	fs.BoolVar(&o.Keep, "keep", d.Keep, "with --engines: keep the dump and every index in --work")
	fs.Func("kairos", "kairos `binary` whose bench ann-engine builds and serves Kairos's indexes (default: this one)", func(s string) error {
		o.Kairos = []string{s, "bench", "ann-engine"}
		return nil
	})
	fs.StringVar(&o.Python, "python", d.Python, "python with Debian's python3-faiss and python3-hnswlib (make apt)")
	fs.StringVar(&o.Node, "node", d.Node, "node for the LanceDB anchor")
	fs.StringVar(&o.LanceDBModules, "lancedb-modules", d.LanceDBModules, "node_modules `directory` with @lancedb/lancedb "+benchLanceDBVersion()+" (make lancedb)")
	fs.StringVar(&o.Qdrant, "qdrant", d.Qdrant, "qdrant server `binary` (make qdrant)")
	intList(fs, &o.NProbes, "nprobe", d.NProbes, "FAISS IVF nprobe sweep")
	fs.IntVar(&o.NList, "nlist", d.NList, "FAISS IVF lists (0: a power of two near 4*sqrt(n))")
	fs.IntVar(&o.PQM, "pq-m", d.PQM, "FAISS IVF-PQ sub-quantizers of 8 bits (0: dim/8)")
	fs.IntVar(&o.Train, "train", d.Train, "FAISS training vectors (0: 64 per list)")
	fs.Func("qdrant-oversampling", fmt.Sprintf("Qdrant oversampling values, crossed with --ef (default %v)", d.QdrantOversampling), func(s string) error {
		var out []float64
		for _, f := range splitList(s) {
			v, err := strconv.ParseFloat(f, 64)
			if err != nil || v < 1 {
				return fmt.Errorf("%q is not a number >= 1", f)
			}
			out = append(out, v)
		}
		o.QdrantOversampling = out
		return nil
	})
	fs.IntVar(&o.LanceDBPartitions, "lancedb-partitions", d.LanceDBPartitions, "LanceDB IVF_PQ num_partitions (0: LanceDB's default, sqrt(n))")
	fs.IntVar(&o.LanceDBSubVectors, "lancedb-sub-vectors", d.LanceDBSubVectors, "LanceDB IVF_PQ num_sub_vectors (0: LanceDB's default, dim/16)")
	intList(fs, &o.LanceDBNProbes, "lancedb-nprobes", d.LanceDBNProbes, "LanceDB nprobes values, crossed with --lancedb-refine")
	intList(fs, &o.LanceDBRefine, "lancedb-refine", d.LanceDBRefine, "LanceDB refine_factor values (0: none)")
	fs.Float64Var(&o.AtQPS, "at-qps", d.AtQPS, "the summary's query rate: each engine's best recall@10 at this many queries/s or more")
}

func intList(fs *flag.FlagSet, dst *[]int, name string, def []int, usage string) {
	fs.Func(name, fmt.Sprintf("%s (default %s)", usage, joinInts(def)), func(s string) error {
		var out []int
		for _, f := range splitList(s) {
			v, err := strconv.Atoi(f)
			if err != nil || v < 0 {
				return fmt.Errorf("%q is not a count", f)
			}
			out = append(out, v)
		}
		if len(out) == 0 {
			return errors.New("empty list")
		}
		*dst = out
		return nil
	})
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func engineHelp() string {
	var names []string
	for _, e := range allEntries(CompareOptions{}, 1000, 8) {
		names = append(names, e.Name)
	}
	return "kairos (" + strings.Join(kairosNames(), ", ") + "), anchors (" + strings.Join(AnchorEngines(), ", ") + "), all (both, and every other engine), or any of " + strings.Join(names, ", ")
}

func kairosNames() []string {
	var out []string
	for _, e := range KairosEngines() {
		out = append(out, e.name)
	}
	return out
}

// expand resolves the engine words to engine names, in order, without repeats.
func expand(words []string) ([]string, error) {
	known := map[string]bool{}
	var every []string
	for _, e := range allEntries(CompareOptions{}, 1000, 8) {
		known[e.Name] = true
		every = append(every, e.Name)
	}
	var out []string
	add := func(n string) {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	for _, w := range words {
		switch {
		case w == "kairos":
			for _, n := range kairosNames() {
				add(n)
			}
		case w == "anchors":
			for _, n := range AnchorEngines() {
				add(n)
			}
		case w == "all": // kairos, anchors, then the engines neither group names
			for _, n := range slices.Concat(kairosNames(), AnchorEngines(), every) {
				add(n)
			}
		case known[w]:
			add(w)
		default:
			return nil, fmt.Errorf("--engines: no engine %q (%s)", w, engineHelp())
		}
	}
	if len(out) == 0 {
		return nil, errors.New("--engines: no engine named")
	}
	return out, nil
}

// Validate reports the first setting that cannot run, naming its flag.
func (o *CompareOptions) Validate() error {
	if _, err := expand(o.Engines); err != nil {
		return err
	}
	switch {
	case o.Repeat < 1:
		return fmt.Errorf("--repeat %d: need at least 1", o.Repeat)
	case o.AtQPS <= 0:
		return fmt.Errorf("--at-qps %v: need a positive rate", o.AtQPS)
	case o.NList < 0 || o.PQM < 0 || o.Train < 0 || o.LanceDBPartitions < 0 || o.LanceDBSubVectors < 0:
		return errors.New("--nlist, --pq-m, --train, --lancedb-partitions and --lancedb-sub-vectors must not be negative")
	}
	for _, v := range append(slices.Clone(o.NProbes), o.LanceDBNProbes...) {
		if v < 1 {
			return fmt.Errorf("--nprobe and --lancedb-nprobes: %d is not a positive count", v)
		}
	}
	return nil
}

// Entry is one engine of a comparison: built once, served in each of its settings.
type Entry struct {
	Name    string
	About   string
	Install string // the make target that installs it ("" for Kairos's own)
	Knob    string // what the sweep turns
	Params  map[string]float64
	// Settings are the served forms; a single one is named "".
	Settings []Setting
	run      runner
}

// Setting is one served form of an engine's index and its sweep.
type Setting struct {
	Name  string
	Sweep []map[string]float64
}

// runner builds and serves one kind of engine.
type runner interface {
	// version says which release runs, or why none can (an error naming the make target).
	version(ctx context.Context, e *Entry, env *runEnv) (string, error)
	build(ctx context.Context, e *Entry, env *runEnv) (built, error)
	serve(ctx context.Context, e *Entry, s Setting, env *runEnv) (served, error)
}

// runEnv is what a runner is handed: where things are and how to run them.
type runEnv struct {
	o       *CompareOptions
	data    string // the dump
	work    string // the work directory (absolute)
	index   string // this engine's index directory
	scripts string // where the anchor scripts are written
	cpu     int    // the CPU a serving child is confined to (-1: none)
	threads int
	k       int
	log     io.Writer
}

// built is what a build measured.
type built struct {
	seconds float64 // timed by the engine: from its input to an index a new process can serve
	peakRSS int64   // the build process's (the server's, for Qdrant)
}

// served is what a serve measured: each sweep point's ids and times, and the process.
type served struct {
	points     []rawPoint
	loadS      float64
	rss        int64 // VmRSS after the sweep
	peakRSS    int64 // the serving process's, loading included
	indexBytes int64 // the files served (0: the whole index directory)
	cpus       int   // the CPUs the serving process could run on
}

type rawPoint struct {
	Point   map[string]float64 `json:"point"`
	Seconds float64            `json:"seconds"`
	CPUS    float64            `json:"cpu_s"`
	IDs     [][]int64          `json:"ids"`
}

// allEntries are every engine Compare knows, with their parameters for n vectors of dim.
func allEntries(o CompareOptions, n, dim int) []Entry {
	o.SetDefaults()
	efSweep := func(key string) []map[string]float64 {
		var s []map[string]float64
		for _, ef := range o.Efs {
			s = append(s, map[string]float64{key: float64(ef)})
		}
		return s
	}
	var out []Entry
	for _, k := range KairosEngines() {
		e := Entry{Name: k.name, About: k.about, Knob: k.knob, Params: k.params(o, n, dim), run: kairosRunner{}}
		for _, s := range k.settings {
			e.Settings = append(e.Settings, Setting{Name: s, Sweep: efSweep(k.knob)})
		}
		out = append(out, e)
	}
	graph := map[string]float64{"m": float64(o.M), "efc": float64(o.EfC), "seed": float64(o.Seed)}
	nlist := o.NList
	if nlist == 0 {
		nlist = 1 << int(math.Round(math.Log2(4*math.Sqrt(float64(n)))))
		nlist = max(min(nlist, 65536), 1)
	}
	train := o.Train
	if train == 0 {
		train = 64 * nlist
	}
	pqm := o.PQM
	if pqm == 0 {
		pqm = max(dim/8, 1)
	}
	var probes []map[string]float64
	for _, p := range o.NProbes {
		if p <= nlist {
			probes = append(probes, map[string]float64{"nprobe": float64(p)})
		}
	}
	py := func(name, about string, params map[string]float64, sweep []map[string]float64, knob string) Entry {
		return Entry{Name: name, About: about, Install: "make apt", Knob: knob, Params: params,
			Settings: []Setting{{Sweep: sweep}}, run: scriptRunner{kind: "python"}}
	}
	out = append(out,
		py("hnswlib", "hnswlib's HNSW on float32 vectors", graph, efSweep("ef"), "ef"),
		py("faiss-hnsw-flat", "FAISS IndexHNSWFlat, float32 vectors", graph, efSweep("ef"), "ef"),
		py("faiss-hnsw-sq", "FAISS IndexHNSWSQ, 8-bit scalar codes", merge(graph, map[string]float64{"train": float64(min(n, 200000))}), efSweep("ef"), "ef"),
		py("faiss-ivfflat", "FAISS IndexIVFFlat, float32 vectors in inverted lists", map[string]float64{"nlist": float64(nlist), "train": float64(train)}, probes, "nprobe"),
		py("faiss-ivfpq", "FAISS IndexIVFPQ, 8-bit product codes in inverted lists", map[string]float64{"nlist": float64(nlist), "pq_m": float64(pqm), "train": float64(train)}, probes, "nprobe"),
	)
	var qsweep []map[string]float64
	for _, ef := range o.Efs {
		for _, os := range o.QdrantOversampling {
			qsweep = append(qsweep, map[string]float64{"hnsw_ef": float64(ef), "oversampling": os})
		}
	}
	for _, q := range []struct{ name, quant, about string }{
		{"qdrant-bq", "binary", "Qdrant, vectors on disk, binary quantization in memory, rescoring"},
		{"qdrant-sq", "scalar", "Qdrant, vectors on disk, int8 scalar quantization in memory, rescoring"},
	} {
		out = append(out, Entry{Name: q.name, About: q.about, Install: "make qdrant", Knob: "hnsw_ef, oversampling",
			Params: map[string]float64{"m": float64(o.M), "efc": float64(o.EfC)}, Settings: []Setting{{Sweep: qsweep}},
			run: qdrantRunner{quant: q.quant}})
	}
	var lsweep []map[string]float64
	for _, p := range o.LanceDBNProbes {
		for _, r := range o.LanceDBRefine {
			lsweep = append(lsweep, map[string]float64{"nprobes": float64(p), "refine_factor": float64(r)})
		}
	}
	out = append(out, Entry{Name: "lancedb-ivfpq", About: "LanceDB IVF_PQ (dot), vectors on disk", Install: "make lancedb",
		Knob: "nprobes, refine_factor", Params: map[string]float64{"num_partitions": float64(o.LanceDBPartitions), "num_sub_vectors": float64(o.LanceDBSubVectors)},
		Settings: []Setting{{Sweep: lsweep}}, run: scriptRunner{kind: "node"}})
	return out
}

func merge(a, b map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// Compare measures every engine of o on ds: the exact top-K of every query (the ground
// truth), the dump every engine reads, then each engine's build and, for each of its
// settings, its serve, one child process each. Each result goes to emit as soon as it is
// measured (a run stopped hours in keeps what it measured), and the report holds them all.
// ds.Base is released once dumped (set to nil, the memory returned to the system): a child's
// peak RSS would include what this process holds when it starts (childrss), and at 10M x 256
// that is 10 GB. Engines that are not installed are refused before anything runs, with the
// make target that installs them; an engine that fails after that is reported with its error
// and the others still run.
func Compare(ctx context.Context, ds *Dataset, o CompareOptions, emit func(Result) error) (*Report, error) {
	n := len(ds.Base)
	if n < K || len(ds.Queries) < 1 {
		return nil, fmt.Errorf("annbench: %d base vectors and %d queries: need at least %d and 1", n, len(ds.Queries), K)
	}
	c, err := prepareComparison(ctx, o, "", n, ds.Dim, len(ds.Queries))
	if err != nil {
		return nil, err
	}
	defer c.cleanup()
	t0 := time.Now()
	gt, err := GroundTruth(ctx, *ds, o.Threads)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(c.env.log, "exact ground truth of %d queries over %d vectors in %.1fs\n", len(ds.Queries), n, time.Since(t0).Seconds())
	cfg := Config{Seed: c.o.Seed, M: c.o.M, EfC: c.o.EfC, Efs: c.o.Efs}
	if err := Dump(c.env.data, *ds, gt, cfg); err != nil {
		return nil, err
	}
	ds.Base = nil
	runtime.GC()
	debug.FreeOSMemory()
	rss, _, _ := childrss.Status(0)
	fmt.Fprintf(c.env.log, "dumped to %s; this process now holds %.0f MB\n", c.env.data, float64(rss)/1e6)
	return c.run(ctx, gt, emit)
}

// CompareDump is Compare on the vectors an earlier run dumped in dir (bench ann --dump, or
// Compare's work directory kept): nothing is generated, embedded or copied, and the ground
// truth is the dump's. A 10M data set embeds in about 17 minutes on two cores, so runs that
// add an engine or change a sweep reuse it. dir is only read.
func CompareDump(ctx context.Context, dir string, o CompareOptions, emit func(Result) error) (*Report, error) {
	d, err := openDump(dir)
	if err != nil {
		return nil, fmt.Errorf("annbench: dump: %w", err)
	}
	if d.meta.K != K || d.meta.N < K {
		return nil, fmt.Errorf("annbench: dump %s: k %d over %d vectors; Compare measures recall@%d", dir, d.meta.K, d.meta.N, K)
	}
	_, gt, err := readDump(dir)
	if err != nil {
		return nil, err
	}
	for i, row := range gt {
		for _, id := range row {
			if id >= uint64(d.meta.N) {
				return nil, fmt.Errorf("annbench: dump %s: gt.i32: query %d's neighbour %d is past the %d vectors", dir, i, id, d.meta.N)
			}
		}
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, err
	}
	c, err := prepareComparison(ctx, o, dir, d.meta.N, d.meta.Dim, d.meta.Queries)
	if err != nil {
		return nil, err
	}
	defer c.cleanup()
	return c.run(ctx, gt, emit)
}

// comparison is a Compare ready to measure: its engines checked, its work directory made.
type comparison struct {
	o        CompareOptions
	env      *runEnv
	names    []string
	entries  map[string]Entry
	versions map[string]string
	rep      *Report
	cleanup  func()
}

// prepareComparison validates o, makes the work directory (the dump goes to its data folder
// unless data names one) and asks every engine for its version, refusing before anything is
// measured when one is not installed.
func prepareComparison(ctx context.Context, o CompareOptions, data string, n, dim, queries int) (*comparison, error) {
	o.SetDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	log := o.Log
	if log == nil {
		log = io.Discard
	}
	names, err := expand(o.Engines)
	if err != nil {
		return nil, err
	}
	c := &comparison{o: o, names: names, cleanup: func() {}}
	work := o.Work
	if work == "" {
		if work, err = os.MkdirTemp("", "kairos-bench-ann-"); err != nil {
			return nil, err
		}
		if !o.Keep {
			c.cleanup = func() { os.RemoveAll(work) }
		}
	} else if err := os.MkdirAll(work, 0o755); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			c.cleanup()
		}
	}()
	// Absolute: the children do not all run where this process does (Qdrant's server runs in
	// its index directory, so a relative storage path landed one level too deep).
	if work, err = filepath.Abs(work); err != nil {
		return nil, err
	}
	if len(c.o.Kairos) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("finding this binary: %w", err)
		}
		c.o.Kairos = []string{exe, "bench", "ann-engine"}
	}
	threads := o.Threads
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	if data == "" {
		data = filepath.Join(work, "data")
	}
	c.env = &runEnv{o: &c.o, data: data, work: work, scripts: filepath.Join(work, "scripts"), cpu: childrss.LastCPU(),
		threads: threads, k: K, log: log}
	if err := writeScripts(c.env.scripts); err != nil {
		return nil, err
	}
	c.entries = map[string]Entry{}
	for _, e := range allEntries(c.o, n, dim) {
		c.entries[e.Name] = e
	}
	c.rep = &Report{RunInfo: RunInfo{N: n, Dim: dim, Queries: queries, K: K, Data: o.Data, Threads: threads, AtQPS: o.AtQPS,
		Load1: load1(), Date: time.Now().UTC().Format("2006-01-02")}}
	if c.versions, err = checkEngines(ctx, names, c.entries, c.env); err != nil {
		return nil, err
	}
	ok = true
	return c, nil
}

// run builds and serves every engine in turn against gt.
func (c *comparison) run(ctx context.Context, gt [][]uint64, emit func(Result) error) (*Report, error) {
	for _, name := range c.names {
		e := c.entries[name]
		c.env.index = filepath.Join(c.env.work, "index-"+name)
		for _, r := range measureEntry(ctx, &e, c.env, gt) {
			r.RunInfo, r.Version = c.rep.RunInfo, c.versions[name]
			c.rep.Results = append(c.rep.Results, r)
			if emit != nil {
				if err := emit(r); err != nil {
					return c.rep, err
				}
			}
		}
		if !c.o.Keep {
			os.RemoveAll(c.env.index)
		}
		if ctx.Err() != nil {
			return c.rep, ctx.Err()
		}
	}
	return c.rep, nil
}

// CheckEngines asks every engine of o for its version, and returns the error Compare would
// refuse with when one is not installed (naming the make target that installs it): a caller
// with hours of work before its comparison (bench scale) checks first.
func CheckEngines(ctx context.Context, o CompareOptions) error {
	o.SetDefaults()
	if err := o.Validate(); err != nil {
		return err
	}
	names, err := expand(o.Engines)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "kairos-ann-check-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if len(o.Kairos) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		o.Kairos = []string{exe, "bench", "ann-engine"}
	}
	env := &runEnv{o: &o, scripts: dir, log: io.Discard}
	if err := writeScripts(dir); err != nil {
		return err
	}
	entries := map[string]Entry{}
	for _, e := range allEntries(o, 1000, 8) {
		entries[e.Name] = e
	}
	_, err = checkEngines(ctx, names, entries, env)
	return err
}

// checkEngines returns each engine's version, or the error naming every engine that cannot run.
func checkEngines(ctx context.Context, names []string, entries map[string]Entry, env *runEnv) (map[string]string, error) {
	versions := map[string]string{}
	var missing []string
	for _, name := range names {
		e := entries[name]
		v, err := e.run.version(ctx, &e, env)
		if err != nil {
			missing = append(missing, fmt.Sprintf("%s: %v", name, err))
			continue
		}
		versions[name] = v
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("engines not installed:\n  %s\n(or leave them out of the engines)", strings.Join(missing, "\n  "))
	}
	return versions, nil
}

// measureEntry builds e and serves each of its settings; a failure is recorded in the results.
func measureEntry(ctx context.Context, e *Entry, env *runEnv, gt [][]uint64) []Result {
	base := Result{Engine: e.Name, About: e.About, Knob: e.Knob, Params: e.Params}
	fmt.Fprintf(env.log, "== %s: build on %d threads (load %.2f)\n", e.Name, env.threads, load1())
	os.RemoveAll(env.index)
	if err := os.MkdirAll(env.index, 0o755); err != nil {
		base.Error = err.Error()
		return []Result{base}
	}
	b, err := e.run.build(ctx, e, env)
	base.BuildS, base.BuildPeakRSS = b.seconds, b.peakRSS
	if err != nil {
		base.Error = "build: " + err.Error()
		fmt.Fprintf(env.log, "== %s: %s\n", e.Name, base.Error)
		return []Result{base}
	}
	fmt.Fprintf(env.log, "== %s: built in %.1fs, peak RSS %.0f MB\n", e.Name, b.seconds, float64(b.peakRSS)/1e6)
	dirSize, _ := dirsize.Bytes(env.index)
	var out []Result
	for _, s := range e.Settings {
		r := base
		r.Setting = s.Name
		fmt.Fprintf(env.log, "== %s: serve %d sweep points on CPU %d (load %.2f)\n", strings.TrimSpace(e.Name+" "+s.Name), len(s.Sweep), env.cpu, load1())
		sv, err := e.run.serve(ctx, e, s, env)
		if err != nil {
			r.Error = "serve: " + err.Error()
			fmt.Fprintf(env.log, "== %s: %s\n", r.Name(), r.Error)
			out = append(out, r)
			continue
		}
		r.LoadS, r.ServeRSS, r.ServePeakRSS, r.IndexBytes, r.ServeCPUs = sv.loadS, sv.rss, sv.peakRSS, sv.indexBytes, sv.cpus
		if r.IndexBytes == 0 {
			r.IndexBytes = dirSize
		}
		for _, p := range sv.points {
			pt := Point{Point: p.Point, Recall: recallOf(p.IDs, gt)}
			if p.Seconds > 0 {
				pt.QPS = float64(len(p.IDs)) / p.Seconds
			}
			if p.CPUS > 0 {
				pt.CPUQPS = float64(len(p.IDs)) / p.CPUS
			}
			r.Points = append(r.Points, pt)
			fmt.Fprintf(env.log, "   %-32s recall@10 %.4f  %8.0f QPS\n", pointText(p.Point), pt.Recall, pt.QPS)
		}
		if len(r.Points) != len(s.Sweep) {
			r.Error = fmt.Sprintf("serve: %d sweep points answered of %d", len(r.Points), len(s.Sweep))
		}
		out = append(out, r)
	}
	return out
}

// recallOf is recall@K of ids against gt: the share of the exact top K found (ids < 0, an
// engine's "no more results", count as misses).
func recallOf(ids [][]int64, gt [][]uint64) float64 {
	found, total := 0, 0
	for i, truth := range gt {
		total += len(truth)
		if i >= len(ids) {
			continue
		}
		for _, x := range ids[i] {
			if x >= 0 && slices.Contains(truth, uint64(x)) {
				found++
			}
		}
	}
	if total == 0 {
		return 0
	}
	return float64(found) / float64(total)
}

// load1 is the one-minute load average (0 where /proc/loadavg is missing): the machine is
// shared, and a figure is only comparable at a similar load.
func load1() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	var l float64
	fmt.Sscanf(string(b), "%f", &l)
	return l
}
