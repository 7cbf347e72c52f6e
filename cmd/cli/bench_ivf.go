package cli

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/kairos-rag/kairos/internal/ivf"
)

// cmdBenchIVF is `kairos bench ivf`: the inverted file (internal/ivf, kairos index
// --vector-index ivf) measured on the vectors kairos bench ann --dump wrote, so that its
// figures and the HNSW graph's (and the anchors', which read the same files) are on the same
// vectors: build time, recall@10 against the dump's exact neighbours and QPS on one thread for
// each probe, and, with --filter-share, the recall of a filter that keeps that share of the
// vectors against the exact neighbours among those it keeps. With --from-index it measures
// the inverted file of a built Kairos index instead, on queries embedded by --model, against
// exact neighbours found in one pass over the index's int8 vectors (ivf.Reader.ExactMany):
// an index too large for a dump of float vectors (40M x 256 is 41 GB) is measured as built.
func cmdBenchIVF(ctx context.Context, args []string, stdio IO) error {
	fs := newFlags("bench ivf", "--data DIR | --from-index DIR --queries FILE --model DIR [--probe LIST] [--rescore LIST] [--lists N] [--index DIR | --load DIR] [--filter-share S] [--repeat N] [--json]", stdio.Stderr)
	var (
		o           ivf.Options
		data, index string
		load        string
		fromIndex   string
		queryFile   string
		model       string
		probeList   string
		rescoreList string
		share       float64
		repeat      int
		asJSON      bool
	)
	fs.StringVar(&data, "data", "", "the `directory` kairos bench ann --dump wrote: base.f32, queries.f32, gt.i32, meta.json")
	fs.StringVar(&fromIndex, "from-index", "", "measure the inverted file of this kairos index `directory` (its live generation) instead of one built from --data")
	fs.StringVar(&queryFile, "queries", "", "with --from-index: a JSONL `file` of queries, a string or an object with \"text\" a line (bench scale's queries.jsonl, kairos search --batch's files)")
	fs.StringVar(&model, "model", "", "with --from-index: the model `folder` the index was built with, which embeds the queries")
	fs.StringVar(&probeList, "probe", "16,32,48,64,96,128,192", "comma-separated numbers of lists probed")
	fs.StringVar(&rescoreList, "rescore", "0", "comma-separated numbers of candidates rescored with their int8 vectors, each measured at every probe (0: ivf's default, one for every 64 vectors scanned and at least the index's rescore)")
	fs.IntVar(&o.Lists, "lists", 0, "lists (0: chosen from the number of vectors, as kairos index does)")
	fs.BoolVar(&o.NoRefine, "no-refine", false, "build without refinement codes, as kairos index --ivf-no-refine does")
	fs.StringVar(&index, "index", "", "build the index in this `directory` and keep it (default: a temporary one, removed)")
	fs.StringVar(&load, "load", "", "with --data: measure the index an earlier run built from the same --data into this `directory` (its --index) instead of building one")
	fs.Float64Var(&share, "filter-share", 0, "also measure a filter that keeps this share of the vectors (pseudo-random keys, one in round(1/S), as a language or date filter keeps passages unrelated to the query), at each probe")
	fs.IntVar(&repeat, "repeat", 3, "timed passes per probe; the best QPS is reported")
	fs.BoolVar(&asJSON, "json", false, `one JSON line per probe and rescore (0: the default): {"probe","rescore","recall_at_10","qps","build_seconds","n","dim","lists","filter_share"}`)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErr(fs, "unexpected argument %q", pos[0])
	}
	switch {
	case data == "" && fromIndex == "":
		return usageErr(fs, "--data (a directory kairos bench ann --dump wrote) or --from-index (a built index) is required")
	case data != "" && fromIndex != "":
		return usageErr(fs, "give --data or --from-index, not both")
	case fromIndex != "" && (queryFile == "" || model == ""):
		return usageErr(fs, "--from-index needs --queries and --model")
	case fromIndex == "" && (queryFile != "" || model != ""):
		return usageErr(fs, "--queries and --model go with --from-index")
	case fromIndex != "" && (index != "" || o.Lists != 0 || load != ""):
		return usageErr(fs, "--index, --lists and --load go with --data; --from-index measures one built")
	case load != "" && (index != "" || o.Lists != 0 || o.NoRefine):
		return usageErr(fs, "--load measures an index built earlier: drop --index, --lists and --no-refine")
	}
	probes, err := parseEfList(probeList)
	if err != nil {
		return usageErr(fs, "--probe: %v", err)
	}
	rescores, err := parseIntList(rescoreList, 0) // 0: the default
	if err != nil {
		return usageErr(fs, "--rescore: %v", err)
	}
	if share < 0 || share >= 1 {
		return usageErr(fs, "--filter-share %g: want a share between 0 and 1", share)
	}
	if repeat < 1 {
		return usageErr(fs, "--repeat %d: want at least 1", repeat)
	}
	var (
		dump  *ivfDump
		r     *ivf.Reader
		build float64
	)
	if fromIndex != "" {
		if r, dump, err = openBuiltIVF(ctx, fromIndex, queryFile, model, stdio.Stderr); err != nil {
			return fmt.Errorf("bench ivf: %w", err)
		}
		defer r.Close()
	} else {
		if dump, err = readIVFDump(data); err != nil {
			return fmt.Errorf("bench ivf: %w", err)
		}
	}
	if load != "" {
		if r, err = ivf.Open(load, ivf.OpenOptions{}); err != nil {
			return fmt.Errorf("bench ivf: --load: %w", err)
		}
		defer r.Close()
		if r.Len() != dump.n || r.Dim() != dump.dim {
			return fmt.Errorf("bench ivf: --load %s holds %d vectors of dimension %d, --data %s %d of %d: build it from this --data (--index)", load, r.Len(), r.Dim(), data, dump.n, dump.dim)
		}
		fmt.Fprintf(stdio.Stderr, "loaded %d vectors of dim %d: %d lists\n", r.Len(), r.Dim(), r.Options().Lists)
	} else if fromIndex == "" {
		if index == "" {
			tmp, err := os.MkdirTemp("", "kairos-bench-ivf-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(tmp)
			index = filepath.Join(tmp, "ivf")
		}
		start := time.Now()
		stopHeap := keepBuildHeap(ctx, stdio.Stderr)
		err := dump.build(ctx, index, o, stdio.Stderr)
		stopHeap()
		if err != nil {
			return fmt.Errorf("bench ivf: building: %w", err)
		}
		build = time.Since(start).Seconds()
		if r, err = ivf.Open(index, ivf.OpenOptions{}); err != nil {
			return fmt.Errorf("bench ivf: %w", err)
		}
		defer r.Close()
		fmt.Fprintf(stdio.Stderr, "built %d vectors of dim %d in %.1f s: %d lists\n", dump.n, dump.dim, build, r.Options().Lists)
	}
	type row struct {
		Probe        int     `json:"probe"`
		Rescore      int     `json:"rescore"`
		Recall       float64 `json:"recall_at_10"`
		QPS          float64 `json:"qps"`
		BuildSeconds float64 `json:"build_seconds,omitempty"` // none with --from-index
		N            int     `json:"n"`
		Dim          int     `json:"dim"`
		Lists        int     `json:"lists"`
		FilterShare  float64 `json:"filter_share,omitempty"`
	}
	measure := func(probe, rescore int, gt [][]uint32, keep func(uint32) bool) (recall, qps float64, err error) {
		so := ivf.SearchOptions{Probe: probe, Rescore: rescore}
		best := math.Inf(1)
		for range repeat {
			found := 0
			t := time.Now()
			for i, q := range dump.queries {
				res, err := r.Search(q, annK, so, keep)
				if err != nil {
					return 0, 0, err
				}
				for _, h := range res {
					if slices.Contains(gt[i], h.Key) {
						found++
					}
				}
			}
			best = min(best, time.Since(t).Seconds())
			recall = float64(found) / float64(annK*len(gt))
			if err := ctx.Err(); err != nil {
				return 0, 0, err
			}
		}
		return recall, float64(len(dump.queries)) / best, nil
	}
	opts := r.Options()
	var rows []row
	sweep := func(gt [][]uint32, keep func(uint32) bool, filterShare float64) error {
		for _, p := range probes {
			for _, rs := range rescores {
				recall, qps, err := measure(p, rs, gt, keep)
				if err != nil {
					return err
				}
				rows = append(rows, row{Probe: p, Rescore: rs, Recall: recall, QPS: qps, BuildSeconds: build, N: dump.n, Dim: dump.dim, Lists: opts.Lists, FilterShare: filterShare})
			}
		}
		return nil
	}
	if err := sweep(dump.gt, nil, 0); err != nil {
		return fmt.Errorf("bench ivf: %w", err)
	}
	if share > 0 {
		// Keys are kept pseudo-randomly, as a language or date filter keeps passages whose
		// topics have nothing to do with it.
		every := uint32(math.Round(1 / share))
		keep := func(k uint32) bool { return (k*0x9e3779b1)>>7%every == 0 }
		var gt [][]uint32
		if fromIndex != "" {
			gt, err = exactKeys(ctx, r, dump.queries, keep)
		} else {
			gt, err = dump.filteredTruth(data, keep)
		}
		if err != nil {
			return fmt.Errorf("bench ivf: %w", err)
		}
		if err := sweep(gt, keep, 1/float64(every)); err != nil {
			return fmt.Errorf("bench ivf: %w", err)
		}
	}
	w := stdio.Stdout
	if asJSON {
		enc := json.NewEncoder(w)
		for _, r := range rows {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	}
	built := fmt.Sprintf("build %.2f s", build)
	switch {
	case fromIndex != "":
		built = "built by kairos index"
	case load != "":
		built = "built earlier (--load)"
	}
	fmt.Fprintf(w, "n %d, dim %d, %d lists, %s\n%6s %8s %10s %10s %8s\n", dump.n, dump.dim, opts.Lists, built, "probe", "rescore", "recall@10", "QPS", "filter")
	for _, r := range rows {
		f := "-"
		if r.FilterShare > 0 {
			f = fmt.Sprintf("%g", r.FilterShare)
		}
		rs := "auto"
		if r.Rescore > 0 {
			rs = strconv.Itoa(r.Rescore)
		}
		if _, err := fmt.Fprintf(w, "%6d %8s %10.4f %10.0f %8s\n", r.Probe, rs, r.Recall, r.QPS, f); err != nil {
			return err
		}
	}
	return nil
}

// annK is the depth of the neighbours kairos bench ann --dump records.
const annK = 10

// ivfDump is what a bench ann dump holds, but the base vectors, which are streamed from
// base.f32 (at 10M x 256 they are 10 GB).
type ivfDump struct {
	n, dim  int
	queries [][]float32
	gt      [][]uint32
	base    string
}

// readIVFDump reads meta.json, the queries and their exact neighbours of the dump in dir.
func readIVFDump(dir string) (*ivfDump, error) {
	mb, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if err != nil {
		return nil, err
	}
	var meta struct{ N, Dim, Queries int }
	if err := json.Unmarshal(mb, &meta); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "meta.json"), err)
	}
	d := &ivfDump{n: meta.N, dim: meta.Dim, base: filepath.Join(dir, "base.f32")}
	st, err := os.Stat(d.base)
	if err != nil {
		return nil, err
	}
	qb, err := os.ReadFile(filepath.Join(dir, "queries.f32"))
	if err != nil {
		return nil, err
	}
	gb, err := os.ReadFile(filepath.Join(dir, "gt.i32"))
	if err != nil {
		return nil, err
	}
	if d.n < 1 || d.dim < 1 || meta.Queries < 1 || st.Size() != int64(d.n*d.dim*4) || len(qb) != meta.Queries*d.dim*4 || len(gb) != meta.Queries*annK*4 {
		return nil, fmt.Errorf("%s: base.f32 (%d bytes), queries.f32 (%d) or gt.i32 (%d) do not match meta.json (%d vectors, %d queries of dim %d)",
			dir, st.Size(), len(qb), len(gb), d.n, meta.Queries, d.dim)
	}
	d.queries = make([][]float32, meta.Queries)
	d.gt = make([][]uint32, meta.Queries)
	for i := range d.queries {
		d.queries[i] = floatsOf(qb[i*d.dim*4 : (i+1)*d.dim*4])
		d.gt[i] = make([]uint32, annK)
		for j := range d.gt[i] {
			d.gt[i][j] = binary.LittleEndian.Uint32(gb[(i*annK+j)*4:])
		}
	}
	return d, nil
}

func floatsOf(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// scan calls fn with batches of base vectors and the key (row) of the first.
func (d *ivfDump) scan(fn func(first int, vecs [][]float32) error) error {
	f, err := os.Open(d.base)
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	const batch = 8192
	buf := make([]byte, batch*d.dim*4)
	for first := 0; first < d.n; first += batch {
		m := min(batch, d.n-first)
		if _, err := io.ReadFull(br, buf[:m*d.dim*4]); err != nil {
			return fmt.Errorf("%s: row %d: %w", d.base, first, err)
		}
		vecs := make([][]float32, m)
		for i := range vecs {
			vecs[i] = floatsOf(buf[i*d.dim*4 : (i+1)*d.dim*4])
		}
		if err := fn(first, vecs); err != nil {
			return err
		}
	}
	return nil
}

// build writes the index of the base vectors (key = row) in dir, as kairos index does: the
// number of vectors known in advance, streamed in, committed once.
func (d *ivfDump) build(ctx context.Context, dir string, o ivf.Options, log io.Writer) error {
	w, err := ivf.Create(dir, d.dim, o, d.n)
	if err != nil {
		return err
	}
	keys := make([]uint32, 0, 8192)
	next := 1 << 18
	err = d.scan(func(first int, vecs [][]float32) error {
		keys = keys[:0]
		for i := range vecs {
			keys = append(keys, uint32(first+i))
		}
		if err := w.Add(ctx, keys, vecs); err != nil {
			return err
		}
		if first+len(vecs) >= next {
			fmt.Fprintf(log, "  added %d/%d vectors\n", first+len(vecs), d.n)
			next *= 2
		}
		return nil
	})
	if err == nil {
		_, err = w.Commit(ctx, true, nil)
	}
	if err != nil {
		w.Abort()
	}
	return err
}

// filteredTruth is the exact top annK (cosine) among the base vectors keep passes, for every
// query, by brute force over the dump.
func (d *ivfDump) filteredTruth(dir string, keep func(uint32) bool) ([][]uint32, error) {
	type hit struct {
		key   uint32
		score float32
	}
	qs := make([][]float32, len(d.queries))
	for i, q := range d.queries {
		qs[i] = unit(q)
	}
	top := make([][]hit, len(qs))
	err := d.scan(func(first int, vecs [][]float32) error {
		for i, v := range vecs {
			key := uint32(first + i)
			if !keep(key) {
				continue
			}
			u := unit(v)
			for j, q := range qs {
				var s float32
				for x := range q {
					s += q[x] * u[x]
				}
				t := top[j]
				if len(t) == annK && s <= t[annK-1].score {
					continue
				}
				at, _ := slices.BinarySearchFunc(t, s, func(h hit, s float32) int {
					if h.score > s {
						return -1
					}
					return 1
				})
				t = slices.Insert(t, at, hit{key, s})
				top[j] = t[:min(len(t), annK)]
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	gt := make([][]uint32, len(top))
	for i, t := range top {
		for _, h := range t {
			gt[i] = append(gt[i], h.key)
		}
	}
	return gt, nil
}

func unit(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	u := make([]float32, len(v))
	if n == 0 {
		return u
	}
	s := float32(1 / math.Sqrt(n))
	for i, x := range v {
		u[i] = x * s
	}
	return u
}
