package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kairos-rag/kairos/indexer"
)

// scaleConfig is what one `kairos bench scale` run measures.
type scaleConfig struct {
	Passages []int  // collection sizes to generate, in order (unused with Input)
	Input    string // a real corpus file instead of the generator
	Seed     uint64
	Queries  int // real queries, half SciFact and half SQuAD questions
	K        int
	Warmup   int    // untimed queries before each timed pass
	Shared   string // the shared data directory (learned statistics and queries)
	Work     string // where corpora and indexes go; a temporary directory when empty
	Keep     bool   // keep Work's contents
	Kairos   string // the kairos binary that builds (a child process, so its RSS is its own)
	Xapian   string // auto (run when python3-xapian is importable), off
	Python   string
	Lucene   string // auto (run when java, javac and the Lucene jars are found), off
	Java     string // the java whose JDK compiles and runs the Lucene anchor
	JarDir   string // where lucene-core and lucene-analyzers-common jars are
	CacheDir string // where the compiled Lucene anchor is kept
	Models   modelFlags
	Lexical  string // the lexical engine of the indexes built (indexer.LexicalPostings or LexicalBleve; "": kairos index's default)
}

func (c *scaleConfig) validate() error {
	switch {
	case c.Input == "" && len(c.Passages) == 0:
		return errors.New("need --passages or --input")
	case c.Input != "" && len(c.Passages) > 0:
		return errors.New("--passages and --input exclude each other")
	case c.Queries < 1:
		return fmt.Errorf("--queries %d: need at least 1", c.Queries)
	case c.K < 1:
		return fmt.Errorf("-k %d: need at least 1", c.K)
	case c.Warmup < 0:
		return fmt.Errorf("--warmup %d is negative", c.Warmup)
	case c.Xapian != "auto" && c.Xapian != "off":
		return fmt.Errorf("--xapian %q: want auto or off", c.Xapian)
	case c.Lucene != "auto" && c.Lucene != "off":
		return fmt.Errorf("--lucene %q: want auto or off", c.Lucene)
	}
	return nil
}

// cmdBenchScale is `kairos bench scale`: build and query cost as the collection grows.
func cmdBenchScale(ctx context.Context, args []string, stdio IO) error {
	// For each size N it generates N synthetic passages (real unigram statistics, seeded),
	// builds them with `kairos index` as a child process, and reports build rate, the build's
	// peak RSS, index size and single-thread query latency, beside Xapian's and Lucene's on the
	// same passages and queries.
	fs := newFlags("bench scale", "--passages N[,N...] | --input FILE [--model DIR] [--json] [flags]", stdio.Stderr)
	var (
		cfg      scaleConfig
		passages string
		asJSON   bool
	)
	fs.StringVar(&passages, "passages", "", "comma-separated collection sizes to generate and measure, e.g. 100000,300000 (k and m suffixes: 100k, 1m)")
	fs.StringVar(&cfg.Input, "input", "", "measure this real corpus `file` (any format kairos index reads) instead of generated passages")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "generator seed: the same seed and sizes give the same passages")
	fs.IntVar(&cfg.Queries, "queries", 1000, "timed queries per mode, alternately SciFact claims and SQuAD questions")
	fs.IntVar(&cfg.K, "k", 10, "hits per query")
	fs.IntVar(&cfg.Warmup, "warmup", 100, "untimed queries before each timed pass")
	fs.StringVar(&cfg.Shared, "shared", defaultShared(), "shared data `directory` (SciFact, SQuAD, the MediaWiki sample)")
	fs.StringVar(&cfg.Work, "work", "", "`directory` for corpora and indexes (default: a temporary directory, removed at the end)")
	fs.BoolVar(&cfg.Keep, "keep", false, "keep the corpora and indexes in --work")
	fs.StringVar(&cfg.Kairos, "kairos", "", "kairos `binary` that builds the indexes (default: this one)")
	fs.StringVar(&cfg.Xapian, "xapian", "auto", "Xapian anchor: auto (run when python3-xapian is importable) or off")
	fs.StringVar(&cfg.Python, "python", "/usr/bin/python3", "python with Debian's python3-xapian (a pyenv python lacks it)")
	fs.StringVar(&cfg.Lucene, "lucene", "auto", "Apache Lucene anchor: auto (run when java, javac and the Lucene jars are found) or off")
	fs.StringVar(&cfg.Java, "java", "java", "`java` of a JDK (its javac compiles the Lucene anchor once, into the user cache)")
	fs.StringVar(&cfg.JarDir, "lucene-jars", "/usr/share/java", "`directory` with Lucene's core and analyzers-common jars (Debian's liblucene8-java)")
	fs.BoolVar(&asJSON, "json", false, "one JSON object per size instead of the table")
	fs.StringVar(&cfg.Lexical, "lexical", "", "lexical engine of the indexes built: postings or bleve (kairos index --lexical; default "+indexer.DefaultLexical+")")
	cfg.Models.register(fs, false)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErr(fs, "unexpected argument %q", pos[0])
	}
	if passages != "" {
		if cfg.Passages, err = parseSizes(passages); err != nil {
			return usageErr(fs, "--passages: %v", err)
		}
	}
	if err := cfg.validate(); err != nil {
		return usageErr(fs, "%v", err)
	}
	if cfg.Kairos == "" {
		if cfg.Kairos, err = os.Executable(); err != nil {
			return fmt.Errorf("bench scale: finding this binary: %w", err)
		}
	}
	if cfg.CacheDir, err = os.UserCacheDir(); err == nil {
		cfg.CacheDir = filepath.Join(cfg.CacheDir, "kairos")
	} else {
		cfg.CacheDir = filepath.Join(os.TempDir(), "kairos-cache") // no $HOME: the anchor compiles each run
	}
	if cfg.Work == "" {
		if cfg.Work, err = os.MkdirTemp("", "kairos-bench-scale-"); err != nil {
			return fmt.Errorf("bench scale: %w", err)
		}
		if !cfg.Keep {
			defer os.RemoveAll(cfg.Work)
		}
	} else if err := os.MkdirAll(cfg.Work, 0o755); err != nil {
		return fmt.Errorf("bench scale: %w", err)
	}
	rows, err := runScale(ctx, cfg, stdio.Stderr)
	if err != nil {
		return fmt.Errorf("bench scale: %w", err)
	}
	return writeScaleRows(stdio.Stdout, rows, asJSON)
}

// parseSizes reads "100000,300k,1m": positive sizes, k = 1,000 and m = 1,000,000.
func parseSizes(s string) ([]int, error) {
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

// scaleDir is the work directory of one size.
func scaleDir(work string, n int) string { return filepath.Join(work, "n"+strconv.Itoa(n)) }

// defaultShared is $KAIROS_SHARED, else ../shared (the layout of the Makefile and CI).
func defaultShared() string {
	if d := os.Getenv("KAIROS_SHARED"); d != "" {
		return d
	}
	return "../shared"
}
