package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/kairos-rag/kairos/indexer"
	"github.com/kairos-rag/kairos/internal/langanalysis"
	"github.com/kairos-rag/kairos/search"
)

func cmdStats(ctx context.Context, args []string, stdio IO) error {
	fs := newFlags("stats", "--index LOCATION [--json]", stdio.Stderr)
	var loc indexer.Location
	loc.Flag(fs, "")
	asJSON := fs.Bool("json", false, "print JSON")
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	if loc.IsZero() {
		return usageErr(fs, "need --index")
	}
	ix, err := search.Open(ctx, loc, search.Options{})
	if err != nil {
		return fmt.Errorf("stats: %w", err)
	}
	defer ix.Close()
	st := ix.Stats()
	m := ix.Manifest()
	if *asJSON {
		enc := json.NewEncoder(stdio.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			search.Stats
			Encoder    any    `json:"encoder,omitempty"` // the dense part: model identity, HNSW, vectors
			Generation int    `json:"generation"`
			Lexical    string `json:"lexical_engine"`
			Counts     any    `json:"counts"`
			Options    any    `json:"build_options"`
			Inputs     any    `json:"inputs"`
			Kairos     string `json:"kairos"`
		}{st, denseJSON(m.Dense), m.Generation, m.LexicalEngine(), m.Counts, m.Options, m.Inputs, m.Kairos})
	}
	w := stdio.Stdout
	fmt.Fprintf(w, "documents   %d\n", st.Documents)
	fmt.Fprintf(w, "passages    %d\n", st.Passages)
	if st.Deleted > 0 {
		fmt.Fprintf(w, "deleted     %d passages (kairos compact drops them)\n", st.Deleted)
	}
	srcs := make([]string, 0, len(st.Sources))
	for s := range st.Sources {
		srcs = append(srcs, s)
	}
	sort.Strings(srcs)
	for _, s := range srcs {
		fmt.Fprintf(w, "source      %s: %d passages\n", s, st.Sources[s])
	}
	if !st.DateFrom.IsZero() {
		fmt.Fprintf(w, "dates       %s .. %s\n", st.DateFrom.Format("2006-01-02"), st.DateTo.Format("2006-01-02"))
	}
	for r, n := range m.Counts.Skipped {
		fmt.Fprintf(w, "skipped     %d %s\n", n, r)
	}
	fmt.Fprintf(w, "built       %s by kairos %s (format %d, generation %d)\n", st.Created.Format("2006-01-02 15:04:05Z"), m.Kairos, st.Version, m.Generation)
	if b := m.BM25; b != nil {
		fmt.Fprintf(w, "bm25        average length %.2f tokens (%d tokens, %d passages)\n", b.AvgLength(), b.Tokens, b.Docs)
	}
	fmt.Fprintf(w, "lexical     %s\n", m.LexicalEngine())
	printDense(w, m.Dense)
	if st.Outdated != "" {
		fmt.Fprintf(w, "outdated    %s (kairos compact --index %s writes it again as this version does, without embedding)\n", st.Outdated, loc)
	}
	if m.Multilingual() {
		fmt.Fprintf(w, "language    multilingual: each passage analysed in its own language\n")
	} else {
		fmt.Fprintf(w, "language    %s (analyzer %s)\n", m.Language(), m.Options.Analyzer)
	}
	for _, l := range m.IndexLanguages() {
		fmt.Fprintf(w, "            %s: %d passages (analyzer %s)\n", l, m.LanguageCounts()[l], langanalysis.For(l).Analyzer)
	}
	fmt.Fprintf(w, "options     max_words=%d analyzer=%s batch=%d\n", m.Options.MaxWords, m.Options.Analyzer, m.Options.BatchSize)
	for _, in := range m.Inputs {
		fmt.Fprintf(w, "input       %s (%s, %d bytes, sha256 %.12s)\n", in.Path, in.Format, in.Size, in.SHA256)
		if len(in.Columns) > 0 {
			roles := slices.Sorted(maps.Keys(in.Columns))
			cols := make([]string, len(roles))
			for i, r := range roles {
				cols[i] = r + "=" + in.Columns[r]
			}
			fmt.Fprintf(w, "            columns %s (role=column)\n", strings.Join(cols, " "))
		}
	}
	fmt.Fprintf(w, "size        %.1f MB\n", float64(st.SizeBytes)/1e6)
	return nil
}

// denseJSON is the dense part of stats --json: nil (left out) for a BM25-only index.
func denseJSON(d *indexer.DenseInfo) any {
	if d == nil {
		return nil
	}
	return d
}

// printDense says whether the index is dense and, if so, which encoder its vectors need:
// what search and serve compare a --model with, and where they look without one.
func printDense(w io.Writer, d *indexer.DenseInfo) {
	if d == nil {
		fmt.Fprintf(w, "dense       no: BM25 only (kairos index --model DIR builds vectors)\n")
		return
	}
	id := d.Model
	kind := id.Kind
	if kind == "" {
		kind = "onnx"
	}
	if v := d.IVF; v != nil {
		refine := ""
		if v.NoRefine {
			refine = " no-refine"
		}
		fmt.Fprintf(w, "dense       yes: %d vectors, IVF lists=%d probe=%d rescore=%d%s\n", d.Vectors, v.Lists, v.Probe, v.Rescore, refine)
	} else {
		fmt.Fprintf(w, "dense       yes: %d vectors, HNSW M=%d ef_construction=%d ef_search=%d\n", d.Vectors, d.HNSW.M, d.HNSW.EfConstruction, d.HNSW.EfSearch)
	}
	dim := fmt.Sprint(id.Dim)
	if id.FullDim != 0 {
		dim = fmt.Sprintf("%d of %d (--dim %d)", id.Dim, id.FullDim, id.Dim)
	}
	fmt.Fprintf(w, "encoder     %s (%s), dim %s, %s pooling, normalize %v\n", id.Name, kind, dim, id.Pooling, id.Normalize)
	file := id.ONNXFile
	if id.Precision != "" {
		file += " " + id.Precision
	}
	fmt.Fprintf(w, "            file %s, sha256 %.12s\n", file, id.ONNXSHA256)
	switch {
	case id.Dir == "":
		fmt.Fprintf(w, "            folder not recorded (built before kairos recorded it): search needs --model\n")
	case isFile(filepath.Join(id.Dir, filepath.FromSlash(id.ONNXFile))):
		fmt.Fprintf(w, "            folder %s (search and serve use it without --model)\n", id.Dir)
	default:
		fmt.Fprintf(w, "            folder %s is gone (search and serve look in the models cache, else need --model)\n", id.Dir)
	}
}
