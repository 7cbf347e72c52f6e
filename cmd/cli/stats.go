package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/kairos-rag/kairos/internal/langanalysis"
	"github.com/kairos-rag/kairos/search"
)

func cmdStats(ctx context.Context, args []string, stdio IO) error {
	fs := newFlags("stats", "--index DIR [--json]", stdio.Stderr)
	dir := fs.String("index", "", "index `directory`")
	asJSON := fs.Bool("json", false, "print JSON")
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	if *dir == "" {
		return usageErr(fs, "need --index")
	}
	ix, err := search.Open(*dir, search.Options{})
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
			Generation int    `json:"generation"`
			Lexical    string `json:"lexical_engine"`
			Counts     any    `json:"counts"`
			Options    any    `json:"build_options"`
			Inputs     any    `json:"inputs"`
			Kairos     string `json:"kairos"`
		}{st, m.Generation, m.LexicalEngine(), m.Counts, m.Options, m.Inputs, m.Kairos})
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
	if b := m.BM25; b != nil && b.Legacy() {
		fmt.Fprintf(w, "bm25        average length unknown (format 2: vocabulary-based; kairos compact records it)\n")
	} else if b != nil {
		fmt.Fprintf(w, "bm25        average length %.2f tokens (%d tokens, %d passages)\n", b.AvgLength(), b.Tokens, b.Docs)
	}
	fmt.Fprintf(w, "lexical     %s\n", m.LexicalEngine())
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
			fmt.Fprintf(w, "            columns %v\n", in.Columns)
		}
	}
	fmt.Fprintf(w, "size        %.1f MB\n", float64(st.SizeBytes)/1e6)
	return nil
}
