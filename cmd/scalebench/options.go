package scalebench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kairos-rag/kairos/embed"
	"github.com/kairos-rag/kairos/indexer"
	"github.com/kairos-rag/kairos/internal/atomicfile"
)

// Options is what one run measures. The zero value is not ready: call SetDefaults, or Flags
// (which registers SetDefaults's values as the flags' defaults), then set Passages or Input.
type Options struct {
	// Passages are the collection sizes to generate, in order; Input, a real corpus file (any
	// format kairos index reads) measured instead. Exactly one of the two is set.
	Passages []int
	Input    string
	Seed     uint64 // generator seed: the same seed and sizes give the same passages
	Queries  int    // timed queries per mode, alternately SciFact claims and SQuAD questions
	K        int    // hits per query
	// Warmup is the untimed queries before each timed pass. SetDefaults turns 0 into
	// DefaultWarmup: a caller that wants none sets 0 after it (Run never calls SetDefaults).
	Warmup int
	Shared string // the shared data directory (learned statistics and queries)
	// Work is where corpora and indexes go; "" is a temporary directory, removed at the end
	// unless Keep. Keep also keeps each size's directory under Work.
	Work string
	Keep bool
	// Kairos is the kairos binary that builds: a child process, so that its peak RSS is the
	// build's own. "": the running executable (the kairos binary that runs bench scale).
	Kairos string
	Xapian string // XapianAuto (run when python3-xapian is importable) or AnchorOff
	Python string // the python with Debian's python3-xapian
	Lucene string // LuceneAuto (run when java, javac and the Lucene jars are found) or AnchorOff
	Java   string // the java of a JDK, whose javac compiles the Lucene anchor
	JarDir string // where the lucene-core and lucene-analyzers-common jars are
	// CacheDir is where the compiled Lucene anchor is kept: the user cache's kairos folder, or
	// a temporary one without $HOME (the anchor then compiles on each run).
	CacheDir string
	// Model is the sentence encoder folder: with it, the indexes are dense too and dense and
	// hybrid latency are measured; Embed runs it (the build's child gets the same backend,
	// batch, device and ONNX Runtime libraries).
	Model string
	Embed embed.Options
	// DenseEngines, with Model, compare the vector index with these engines (annbench's names
	// and groups: kairos, anchors, hnswlib, faiss-ivfpq, ...) on the vectors of each index
	// built, with the queries embedded: build time, peak RSS, resident memory while serving
	// and recall@10 against exact search over a QPS sweep on one CPU (kairos bench ann
	// --engines). Empty: none.
	DenseEngines []string
	// Lexical is the lexical engine of the indexes built (indexer.LexicalPostings or
	// LexicalBleve); "": kairos index's default.
	Lexical string
	JSON    bool      // Run writes one JSON object per size instead of the table
	Plot    string    // Run also draws the rows as an SVG file here (WritePlot); "": none
	Log     io.Writer // progress lines and notes; nil: none
}

// Anchor modes of Options.Xapian and Options.Lucene.
const (
	AnchorAuto = "auto"
	AnchorOff  = "off"
)

// Defaults.
const (
	DefaultSeed    = 1
	DefaultQueries = 1000
	DefaultK       = 10
	DefaultWarmup  = 100
	DefaultPython  = "/usr/bin/python3" // Debian's, which python3-xapian serves (a pyenv python lacks it)
	DefaultJava    = "java"
	DefaultJarDir  = "/usr/share/java" // Debian's liblucene8-java
)

// SetDefaults fills the unset fields with their defaults. Passages, Input, Work, Kairos, Model
// and Lexical stay as they are: their empty value is a choice (see each field).
func (o *Options) SetDefaults() {
	if o.Seed == 0 {
		o.Seed = DefaultSeed
	}
	if o.Queries == 0 {
		o.Queries = DefaultQueries
	}
	if o.K == 0 {
		o.K = DefaultK
	}
	if o.Warmup == 0 {
		o.Warmup = DefaultWarmup
	}
	if o.Shared == "" {
		o.Shared = DefaultShared()
	}
	if o.Xapian == "" {
		o.Xapian = AnchorAuto
	}
	if o.Python == "" {
		o.Python = DefaultPython
	}
	if o.Lucene == "" {
		o.Lucene = AnchorAuto
	}
	if o.Java == "" {
		o.Java = DefaultJava
	}
	if o.JarDir == "" {
		o.JarDir = DefaultJarDir
	}
	if o.CacheDir == "" {
		o.CacheDir = defaultCacheDir()
	}
}

func defaultCacheDir() string {
	if dir, err := os.UserCacheDir(); err == nil {
		return filepath.Join(dir, "kairos")
	}
	return filepath.Join(os.TempDir(), "kairos-cache") // no $HOME: the anchor compiles each run
}

// DefaultShared is $KAIROS_SHARED, else ../shared (the layout of the Makefile and CI).
func DefaultShared() string {
	if d := os.Getenv("KAIROS_SHARED"); d != "" {
		return d
	}
	return "../shared"
}

// Flags registers o's flags on fs, with SetDefaults's values (taken on a copy of o) as their
// defaults, so no default is typed twice. What a flag sets is kept as given (--warmup 0 is
// no warm-up): Validate judges it.
func (o *Options) Flags(fs *flag.FlagSet) {
	d := *o
	d.SetDefaults()
	fs.Func("passages", "comma-separated collection `sizes` to generate and measure, e.g. 100000,300000 (k and m suffixes: 100k, 1m)", func(s string) error {
		sizes, err := ParseSizes(s)
		if err != nil {
			return err
		}
		o.Passages = sizes
		return nil
	})
	fs.StringVar(&o.Input, "input", d.Input, "measure this real corpus `file` (any format kairos index reads) instead of generated passages")
	fs.Uint64Var(&o.Seed, "seed", d.Seed, "generator seed: the same seed and sizes give the same passages")
	fs.IntVar(&o.Queries, "queries", d.Queries, "timed queries per mode, alternately SciFact claims and SQuAD questions")
	fs.IntVar(&o.K, "k", d.K, "hits per query")
	fs.IntVar(&o.Warmup, "warmup", d.Warmup, "untimed queries before each timed pass")
	fs.StringVar(&o.Shared, "shared", d.Shared, "shared data `directory` (SciFact, SQuAD, the MediaWiki sample)")
	fs.StringVar(&o.Work, "work", d.Work, "`directory` for corpora and indexes (default: a temporary directory, removed at the end)")
	fs.BoolVar(&o.Keep, "keep", d.Keep, "keep the corpora and indexes in --work")
	fs.StringVar(&o.Kairos, "kairos", d.Kairos, "kairos `binary` that builds the indexes (default: this one)")
	fs.StringVar(&o.Xapian, "xapian", d.Xapian, "Xapian anchor: auto (run when python3-xapian is importable) or off")
	fs.StringVar(&o.Python, "python", d.Python, "python with Debian's python3-xapian, and python3-faiss and python3-hnswlib for --dense-engines (a pyenv python lacks them)")
	fs.StringVar(&o.Lucene, "lucene", d.Lucene, "Apache Lucene anchor: auto (run when java, javac and the Lucene jars are found) or off")
	fs.StringVar(&o.Java, "java", d.Java, "`java` of a JDK (its javac compiles the Lucene anchor once, into the user cache)")
	fs.StringVar(&o.JarDir, "lucene-jars", d.JarDir, "`directory` with Lucene's core and analyzers-common jars (Debian's liblucene8-java)")
	fs.BoolVar(&o.JSON, "json", d.JSON, "one JSON object per size instead of the table")
	fs.StringVar(&o.Plot, "plot", d.Plot, "also draw the run as an SVG `file`: each build's indexing rate over time, and query latency beside each anchor")
	fs.StringVar(&o.Lexical, "lexical", d.Lexical, "lexical engine of the indexes built: postings or bleve (kairos index --lexical; default "+indexer.DefaultLexical+")")
	fs.StringVar(&o.Model, "model", d.Model, "sentence encoder `folder` (dense and hybrid search; see kairos models)")
	fs.Func("dense-engines", "with --model: compare the vector index with these engines on each index's vectors, as kairos bench ann --engines does (names or groups: kairos, anchors, all, hnswlib, faiss-ivfpq, ...)", func(s string) error {
		o.DenseEngines = nil
		for _, f := range strings.Split(s, ",") {
			if f = strings.TrimSpace(f); f != "" {
				o.DenseEngines = append(o.DenseEngines, f)
			}
		}
		return nil
	})
	o.Embed.Flags(fs)
	o.Embed.BatchFlag(fs, "embed-batch")
}

// Validate reports the first setting that cannot run, naming its flag.
func (o *Options) Validate() error {
	switch {
	case o.Input == "" && len(o.Passages) == 0:
		return errors.New("need --passages or --input")
	case o.Input != "" && len(o.Passages) > 0:
		return errors.New("--passages and --input exclude each other")
	case o.Queries < 1:
		return fmt.Errorf("--queries %d: need at least 1", o.Queries)
	case o.K < 1:
		return fmt.Errorf("-k %d: need at least 1", o.K)
	case o.Warmup < 0:
		return fmt.Errorf("--warmup %d is negative", o.Warmup)
	case o.Xapian != AnchorAuto && o.Xapian != AnchorOff:
		return fmt.Errorf("--xapian %q: want auto or off", o.Xapian)
	case o.Lucene != AnchorAuto && o.Lucene != AnchorOff:
		return fmt.Errorf("--lucene %q: want auto or off", o.Lucene)
	case len(o.DenseEngines) > 0 && o.Model == "":
		return errors.New("--dense-engines needs --model (the vectors to compare on)")
	}
	if len(o.DenseEngines) > 0 {
		co := o.denseOptions()
		co.SetDefaults()
		if err := co.Validate(); err != nil {
			return fmt.Errorf("--dense-engines: %w", err)
		}
	}
	for _, n := range o.Passages {
		if n < 1 {
			return fmt.Errorf("--passages: size %d is not positive", n)
		}
	}
	return nil
}

// Run measures every size of o (or o.Input) and writes the table, or one JSON object per
// size as each is measured, to w; the sizes measured before an error are written with it (see
// Measure). o is taken as given (see SetDefaults and Flags); invalid options fail before
// anything runs, with Validate's error.
func Run(ctx context.Context, o Options, w io.Writer) error {
	if err := o.Validate(); err != nil {
		return err
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.CacheDir == "" {
		o.CacheDir = defaultCacheDir()
	}
	var err error
	if o.Kairos == "" {
		if o.Kairos, err = os.Executable(); err != nil {
			return fmt.Errorf("finding this binary: %w", err)
		}
	}
	if o.Work == "" {
		if o.Work, err = os.MkdirTemp("", "kairos-bench-scale-"); err != nil {
			return err
		}
		if !o.Keep {
			defer os.RemoveAll(o.Work)
		}
	} else if err := os.MkdirAll(o.Work, 0o755); err != nil {
		return err
	}
	// JSON lines go out as each size is measured (a run killed at 10M keeps its 1M line); the
	// table needs every row for its widths, so it is written at the end, failed or not.
	var rows []Row
	err = Measure(ctx, o, func(r Row) error {
		rows = append(rows, r)
		if o.JSON {
			return WriteRows(w, []Row{r}, true)
		}
		return nil
	})
	if !o.JSON {
		if werr := WriteRows(w, rows, false); werr != nil {
			return errors.Join(err, werr)
		}
	}
	if o.Plot != "" && len(rows) > 0 {
		if perr := atomicfile.Write(o.Plot, atomicfile.Options{}, func(pw io.Writer) error { return WritePlot(pw, rows) }); perr != nil {
			return errors.Join(err, fmt.Errorf("--plot: %w", perr))
		}
	}
	return err
}

// ParseSizes reads "100000,300k,1m": positive sizes, k = 1,000 and m = 1,000,000.
func ParseSizes(s string) ([]int, error) {
	var out []int
	for i, f := range strings.Split(s, ",") {
		f = strings.ToLower(strings.TrimSpace(f))
		mult := 1
		switch {
		case strings.HasSuffix(f, "k"):
			mult, f = 1000, strings.TrimSuffix(f, "k")
		case strings.HasSuffix(f, "m"):
			mult, f = 1000000, strings.TrimSuffix(f, "m")
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > 1<<40/mult {
			return nil, fmt.Errorf("size %d (%q): want a positive count such as 100000, 300k or 1m", i+1, strings.Split(s, ",")[i])
		}
		out = append(out, n*mult)
	}
	return out, nil
}

// sizeDir is the work directory of one size.
func sizeDir(work string, n int) string { return filepath.Join(work, "n"+strconv.Itoa(n)) }
