package scalebench

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/indexer"
	"github.com/kairos-rag/kairos/internal/sharedtest"
)

// TestBenchScaleEndToEnd generates 2,000 passages, builds them with a real kairos binary (the
// build is a child process) and checks every reported field against what it must be.
func TestBenchScaleEndToEnd(t *testing.T) {
	bin := buildKairos(t)
	var stdout, stderr bytes.Buffer
	err := runArgs(t, []string{
		"--passages", "2000", "--queries", "200", "--warmup", "20", "--json",
		"--kairos", bin, "--shared", sharedtest.Dir(), "--work", t.TempDir(),
	}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("bench scale: %v\n%s", err, stderr.String())
	}
	var r Row
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("output %q: %v", stdout.String(), err)
	}
	checks := []struct {
		name string
		ok   bool
	}{
		{"passages 2000", r.Passages == 2000},
		{"corpus bytes: about 120 words of 6 bytes a passage at most", r.CorpusBytes > 2000*50 && r.CorpusBytes < 2000*2000},
		{"build time positive", r.BuildS > 0},
		{"rate is passages / build time", r.BuildPerS > 0 && math.Abs(r.BuildPerS*r.BuildS-2000) < 1},
		{"peak RSS of a Go process with an index open: 20 MB to 4 GB", r.BuildPeakRSS > 20e6 && r.BuildPeakRSS < 4e9},
		{"index holds at least the passage text", r.IndexBytes > r.CorpusBytes/2},
		{"200 bm25 queries timed", r.BM25.Queries == 200},
		{"p50 positive, p99 >= p50, mean between", r.BM25.P50MS > 0 && r.BM25.P99MS >= r.BM25.P50MS && r.BM25.MeanMS > 0},
		{"real queries match synthetic passages", r.BM25.Empty < 20},
		{"the exact top k timed too (k 10 < the window)", r.BM25TopK != nil && r.BM25TopK.Queries == 200 && r.BM25TopK.P50MS > 0},
		{"no dense without --model", !r.Dense && r.DenseLatency == nil && r.HybridLatency == nil},
		{"k 10", r.K == 10},
		{"no --lexical: kairos index's default engine", r.Lexical == indexer.DefaultLexical},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: no; row %+v", c.name, r)
		}
	}
	// The anchor runs where python3-xapian is installed, and says why not elsewhere.
	if note := xapianAvailable(context.Background(), "/usr/bin/python3"); note == "" {
		if x := r.Xapian; x == nil || x.Passages != 2000 || x.Queries != 200 || x.P50MS <= 0 || x.P99MS < x.P50MS || x.BuildS <= 0 {
			t.Errorf("xapian anchor: %+v (not run: %q)", r.Xapian, r.XapianNotRun)
		}
	} else if r.Xapian != nil || !strings.Contains(r.XapianNotRun, "xapian") {
		t.Errorf("xapian unavailable (%s), but the row says %+v / %q", note, r.Xapian, r.XapianNotRun)
	}
	// Lucene likewise (liblucene8-java and a JDK): the same passages, every query answered, a
	// segment per indexing thread at most (2,000 passages fit the RAM buffer), as many threads as
	// the bench's cores, the queries timed again on one merged segment, and its child's own RSS
	// (a JVM: over 30 MB).
	if _, err := prepareLucene(context.Background(), "java", "/usr/share/java", t.TempDir()); err == nil {
		if x := r.Lucene; x == nil || x.Passages != 2000 || x.Queries != 200 || x.P50MS <= 0 || x.P99MS < x.P50MS ||
			x.BuildS <= 0 || x.Threads != r.GOMAXPROCS || x.Segments < 1 || x.Segments > x.Threads || x.MergedSegments != 1 ||
			x.MergedP50MS <= 0 || x.PeakRSS < 30e6 || x.IndexBytes <= 0 || x.Empty >= 20 || !strings.HasPrefix(x.Version, "8.") {
			t.Errorf("lucene anchor: %+v (not run: %q)", r.Lucene, r.LuceneNotRun)
		}
	} else if r.Lucene != nil || !strings.Contains(r.LuceneNotRun, "liblucene8-java") {
		t.Errorf("lucene unavailable (%v), but the row says %+v / %q", err, r.Lucene, r.LuceneNotRun)
	}
	if !strings.Contains(stderr.String(), "generating: 2000/2000 passages") || !strings.Contains(stderr.String(), "querying bm25: 200/200") {
		t.Errorf("progress lines lack the true final counts:\n%s", stderr.String())
	}
}

func TestParseSizes(t *testing.T) {
	tests := []struct {
		in   string
		want []int
	}{
		{"100000", []int{100000}},
		{"100000,300000", []int{100000, 300000}},
		{"100k, 300K,1m", []int{100000, 300000, 1000000}},
		{"", nil},
		{"0", nil},
		{"-5", nil},
		{"1x", nil},
		{"10,,20", nil},
		{"k", nil},
	}
	for _, tc := range tests {
		got, err := ParseSizes(tc.in)
		if (err != nil) != (tc.want == nil) || !reflect.DeepEqual(got, tc.want) && tc.want != nil {
			t.Errorf("ParseSizes(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func FuzzParseSizes(f *testing.F) {
	for _, s := range []string{"100000,300000", "1m", "5k,", "9999999999999m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sizes, err := ParseSizes(s)
		if err != nil {
			return
		}
		for _, n := range sizes {
			if n < 1 {
				t.Fatalf("ParseSizes(%q) accepted %d", s, n)
			}
		}
	})
}

func TestSummaryPassages(t *testing.T) {
	tests := []struct {
		in   string
		want int
		ok   bool
	}{
		{"index       x (generation 1)\ndocuments   5\npassages    12\n", 12, true},
		{"passages 0\n", 0, true},
		{"documents 5\n", 0, false},
		{"passages    twelve\n", 0, false},
		{"passages    -3\n", 0, false},
	}
	for _, tc := range tests {
		got, err := summaryPassages(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("summaryPassages(%q) = %d, %v; want %d ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func FuzzSummaryPassages(f *testing.F) {
	f.Add("passages    12\n")
	f.Add("documents 1\npassages 99999999999999999999\n")
	f.Fuzz(func(t *testing.T, s string) {
		if n, err := summaryPassages(s); err == nil && n < 0 {
			t.Fatalf("summaryPassages(%q) = %d", s, n)
		}
	})
}

// TestBenchScaleRealInput measures a real dump (--input) and checks that the index holds the
// passages kairos passages cuts from it.
func TestBenchScaleRealInput(t *testing.T) {
	bin := buildKairos(t)
	input := sharedtest.Join("data/mediawiki-xml-gensim/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2")
	out, err := exec.Command(bin, "passages", "--input", input).Output()
	if err != nil {
		t.Fatalf("kairos passages: %v", err)
	}
	want := bytes.Count(out, []byte("\n"))
	var stdout, stderr bytes.Buffer
	err = runArgs(t, []string{
		"--input", input, "--queries", "50", "--warmup", "5", "--json", "--xapian", "off", "--lucene", "off", "--lexical", "bleve",
		"--kairos", bin, "--shared", sharedtest.Dir(), "--work", t.TempDir(),
	}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("bench scale: %v\n%s", err, stderr.String())
	}
	var r Row
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("output %q: %v", stdout.String(), err)
	}
	if r.Passages != want || r.Corpus != input || r.GenerateS != 0 || r.BM25.Queries != 50 || r.XapianNotRun != "--xapian off" || r.Xapian != nil || r.LuceneNotRun != "--lucene off" || r.Lucene != nil || r.Lexical != indexer.LexicalBleve {
		t.Errorf("row %+v; want %d passages of %s, 50 queries, no generation, no anchor, bleve", r, want, input)
	}
}

// runArgs runs bench scale as the subcommand does: the flags Options.Flags registers, then Run.
func runArgs(t *testing.T, args []string, stdout, stderr io.Writer) error {
	t.Helper()
	var o Options
	fs := flag.NewFlagSet("bench scale", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o.Flags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	o.Log = stderr
	return Run(context.Background(), o, stdout)
}

// TestFlagsDefaultsAreSetDefaults: each flag's default is what SetDefaults sets, and Flags
// leaves the options as SetDefaults would (CacheDir, which has no flag, aside).
func TestFlagsDefaultsAreSetDefaults(t *testing.T) {
	var o, want Options
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	o.Flags(fs)
	want.SetDefaults()
	for name, v := range map[string]string{
		"seed": fmt.Sprint(want.Seed), "queries": fmt.Sprint(want.Queries), "k": fmt.Sprint(want.K),
		"warmup": fmt.Sprint(want.Warmup), "shared": want.Shared, "xapian": want.Xapian, "python": want.Python,
		"lucene": want.Lucene, "java": want.Java, "lucene-jars": want.JarDir, "passages": "", "input": "",
		"work": "", "kairos": "", "lexical": "", "model": "", "keep": "false", "json": "false", "dense-engines": "",
	} {
		if f := fs.Lookup(name); f == nil || f.DefValue != v {
			t.Errorf("flag %s: %+v, want default %q", name, f, v)
		}
	}
	if o.Seed != DefaultSeed || o.Queries != DefaultQueries || o.K != DefaultK || o.Warmup != DefaultWarmup || o.Xapian != AnchorAuto || o.JarDir != DefaultJarDir {
		t.Errorf("after Flags: %+v, want SetDefaults's values", o)
	}
	// A flag's value is kept as given, including a zero SetDefaults would replace.
	if err := fs.Parse([]string{"--warmup", "0", "--passages", "2k,1m"}); err != nil {
		t.Fatal(err)
	}
	if o.Warmup != 0 || !reflect.DeepEqual(o.Passages, []int{2000, 1000000}) {
		t.Errorf("parsed --warmup 0 --passages 2k,1m: warmup %d, passages %v", o.Warmup, o.Passages)
	}
}

func TestValidate(t *testing.T) {
	ok := func() Options {
		var o Options
		o.SetDefaults()
		o.Passages = []int{10}
		return o
	}
	tests := []struct {
		name string
		edit func(*Options)
		want string // in the error; "" for none
	}{
		{"valid", func(*Options) {}, ""},
		{"warmup 0 is valid", func(o *Options) { o.Warmup = 0 }, ""},
		{"input instead of passages", func(o *Options) { o.Passages, o.Input = nil, "x.jsonl" }, ""},
		{"nothing to measure", func(o *Options) { o.Passages = nil }, "need --passages or --input"},
		{"both sources", func(o *Options) { o.Input = "x.jsonl" }, "exclude each other"},
		{"zero size", func(o *Options) { o.Passages = []int{10, 0} }, "size 0 is not positive"},
		{"no queries", func(o *Options) { o.Queries = 0 }, "--queries 0"},
		{"k 0", func(o *Options) { o.K = 0 }, "-k 0"},
		{"negative warmup", func(o *Options) { o.Warmup = -1 }, "--warmup -1"},
		{"bad xapian", func(o *Options) { o.Xapian = "maybe" }, `--xapian "maybe"`},
		{"bad lucene", func(o *Options) { o.Lucene = "yes" }, `--lucene "yes"`},
		{"zero options", func(o *Options) { *o = Options{Passages: []int{10}} }, "--queries 0"},
		{"dense engines without a model", func(o *Options) { o.DenseEngines = []string{"kairos"} }, "--dense-engines needs --model"},
		{"unknown dense engine", func(o *Options) { o.Model, o.DenseEngines = "m", []string{"milvus"} }, `no engine "milvus"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := ok()
			tc.edit(&o)
			err := o.Validate()
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("Validate() = %v, want %q", err, tc.want)
			}
			// Run refuses what Validate refuses, before it touches anything.
			if tc.want != "" {
				o.Work = filepath.Join(t.TempDir(), "never")
				if err := Run(context.Background(), o, io.Discard); err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("Run = %v, want %q", err, tc.want)
				}
				if _, err := os.Stat(o.Work); !os.IsNotExist(err) {
					t.Errorf("Run made %s for invalid options", o.Work)
				}
			}
		})
	}
}

// TestIndexArgs: the build child gets the lexical engine and every embedding setting that
// decides the vectors, and no model flag without a model.
func TestIndexArgs(t *testing.T) {
	var o Options
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	o.Flags(fs)
	base := []string{"--force", "--input", "in.jsonl", "--index", "idx"}
	if got := indexArgs(o, "in.jsonl", "", "idx"); !reflect.DeepEqual(got, base) {
		t.Errorf("no model, no lexical: %q, want %q", got, base)
	}
	if err := fs.Parse([]string{"--lexical", "bleve", "--model", "m", "--dim", "256", "--precision", "int8",
		"--embed-batch", "32", "--ort-lib", "/x/libonnxruntime.so"}); err != nil {
		t.Fatal(err)
	}
	want := append(slices.Clone(base), "--format", "jsonl", "--lexical", "bleve", "--model", "m", "--embed-batch", "32",
		"--device", "cpu", "--backend", "auto", "--precision", "int8", "--ort-lib", "/x/libonnxruntime.so", "--dim", "256")
	if got := indexArgs(o, "in.jsonl", "jsonl", "idx"); !reflect.DeepEqual(got, want) {
		t.Errorf("model settings: %q\nwant %q", got, want)
	}
}

// TestSummaryPassagesWithStages: the stage table kairos index prints under its summary
// (whose lines also name passages) does not confuse the count bench scale reads.
func TestSummaryPassagesWithStages(t *testing.T) {
	summary := "index       x (generation 1)\npassages    500\nstages      busy seconds summed over goroutines, rate per busy second, busy/wall (cores)\n  split           0.10 s  5000 passages/s           0.24\n"
	if n, err := summaryPassages(summary); err != nil || n != 500 {
		t.Errorf("summaryPassages = %d, %v; want 500", n, err)
	}
}
