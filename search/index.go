package search

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer"
	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/internal/hnsw"
	"github.com/kairos-rag/kairos/internal/langanalysis"
)

// Options tune retrieval. The zero value gives the defaults.
type Options struct {
	// DocEvidence lets the other retrieved passages of a document lift a passage: its score
	// becomes s + DocEvidence * (sum of the scores of the other candidates from the same
	// document). Scientific abstracts and Wikipedia articles split into several passages, and a
	// document that matches in several places is more likely relevant. 0 means
	// DefaultDocEvidence; negative disables it.
	DocEvidence float64
	// Encoder embeds queries for dense and hybrid search; it must match the index's model.
	Encoder QueryEncoder
	// Fusion merges BM25 and dense rankings in hybrid search: FusionRRF (default) or
	// FusionConvex.
	Fusion Fusion
	// RRFK is the k of reciprocal rank fusion. 0 means DefaultRRFK.
	RRFK int
	// Alpha weighs dense against BM25 in convex fusion, in (0,1]. 0 means DefaultAlpha; use a
	// tiny positive value for almost-pure BM25.
	Alpha float64
	// EfSearch is the HNSW candidate list size (0: the index's ef_search). Raised to k.
	EfSearch int
	// Rescore is how many of an inverted file's best estimates a dense search rescores with
	// their int8 vectors (ivf.SearchOptions.Rescore; 0: the index's rule, at least 320 and
	// one for every 64 vectors scanned). Each is a random read, from the disk when the
	// vectors outgrow memory: fewer is faster there, and finds fewer true neighbours. Open
	// refuses it for an index whose vectors are not an inverted file.
	Rescore int
	// K1 and B are BM25's term-frequency saturation and length normalisation. 0 means
	// BM25K1 / BM25B (use a tiny positive value for none). bleve keeps them per process: every
	// index opened in a process must use the same values (Open fails otherwise), which is why
	// only tuning tools (kairos eval) set them.
	K1, B float64
	// Window is how many BM25 candidates are scored before the document evidence is applied
	// and the top K kept. 0 means DefaultWindow; it is never below K.
	Window int
	// VerifyFiles hashes every file of the generation against its manifest before opening it
	// (indexer.CheckFull; serve --verify). By default only the cheap check runs
	// (indexer.CheckCheap: all sizes, and hashes up to store.CheapHashBudget bytes).
	VerifyFiles bool
	// BinaryRescore is how a graph with binary codes rescores its walk's candidates
	// (hnsw.LoadOptions.BinaryRescore): "" or "int8", with the one-byte codes and then the
	// floats; "float", with the floats only, so that the codes never become resident.
	BinaryRescore string
}

// Defaults chosen on the SciFact train qrels (README, "BM25"): document evidence 0.1 helped at
// every k1/b tried; windows from 20 to 100 gave the same nDCG@10 at k = 10 (within 0.001), and
// 30 costs a quarter less than 100. A request for more than Window hits uses its k.
const (
	DefaultDocEvidence = 0.1
	DefaultWindow      = 30
)

// ErrNotFound is returned for an unknown passage id.
var ErrNotFound = errors.New("not found")

// Index answers queries against one opened generation of a Kairos index. It is safe for
// concurrent use. Close it when done; a reload opens a new Index and closes the old one.
type Index struct {
	gen      *indexer.Generation
	opts     Options
	analysis *langanalysis.Passages
	langs    []string // the index's languages, sorted

	// twoCalls makes hybrid queries ask the lexical and the vector engine apart even when
	// the generation offers both in one call (Generation.Hybrid): for the test that
	// the two ways rank alike.
	twoCalls bool

	idsOnce sync.Once
	ids     map[string]uint32 // passage id -> key, built on first Passage lookup
	idsErr  error
}

// SetDefaults fills the zero fields with the defaults a search applies: DocEvidence
// (DefaultDocEvidence), Window (DefaultWindow), K1 and B (BM25K1, BM25B), Fusion (FusionRRF),
// RRFK (DefaultRRFK) and Alpha (DefaultAlpha). EfSearch 0 stays the index's. Flags and
// TuningFlags call it on a copy to show them.
func (o *Options) SetDefaults() {
	if o.DocEvidence == 0 {
		o.DocEvidence = DefaultDocEvidence
	}
	if o.Window == 0 {
		o.Window = DefaultWindow
	}
	if o.K1 == 0 {
		o.K1 = BM25K1
	}
	if o.B == 0 {
		o.B = BM25B
	}
	if o.Fusion == "" {
		o.Fusion = FusionRRF
	}
	if o.RRFK == 0 {
		o.RRFK = DefaultRRFK
	}
	if o.Alpha == 0 {
		o.Alpha = DefaultAlpha
	}
}

// validate checks options whose defaults are set.
func (o *Options) validate() error {
	if o.Window < 0 {
		return fmt.Errorf("search options: negative window %d", o.Window)
	}
	if o.Rescore < 0 {
		return fmt.Errorf("search options: negative rescore %d (--rescore)", o.Rescore)
	}
	if err := (hnsw.LoadOptions{BinaryRescore: o.BinaryRescore}).Validate(); err != nil {
		return fmt.Errorf("search options: %w", err)
	}
	if o.K1 < 0 || o.B < 0 || o.B > 1 {
		return fmt.Errorf("search options: BM25 k1 %v must be >= 0 and b %v in [0,1]", o.K1, o.B)
	}
	if err := CheckFusion(o.Fusion, o.Alpha, o.RRFK); err != nil {
		return fmt.Errorf("search options: %w", err)
	}
	return nil
}

// Open opens the live generation of the index at loc (a directory or a Qdrant cluster:
// indexer.ParseLocation reads the --index form). ctx bounds the opening: an index on a
// cluster (Qdrant) dials it and reads its collections' metadata there.
func Open(ctx context.Context, loc indexer.Location, opts Options) (*Index, error) {
	opts.SetDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	level := indexer.CheckCheap
	if opts.VerifyFiles {
		level = indexer.CheckFull
	}
	ix, err := indexer.Open(ctx, loc)
	if err != nil {
		return nil, err
	}
	defer ix.Close()
	gen, err := ix.Reader(ctx, indexer.ReadOptions{
		Level: level, BM25: backend.BM25Params{K1: opts.K1, B: opts.B}, BinaryRescore: opts.BinaryRescore,
	})
	if err != nil {
		return nil, err
	}
	dir := loc.String()
	if opts.Encoder != nil {
		if gen.Manifest.Dense == nil {
			gen.Close()
			return nil, fmt.Errorf("%s: an encoder was given but the index has no dense vectors", dir)
		}
		if err := gen.Manifest.Dense.Model.Compatible(opts.Encoder.Identity()); err != nil {
			gen.Close()
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
	}
	if d := gen.Manifest.Dense; opts.Rescore > 0 && (d == nil || d.IndexKind() != indexer.VectorIndexIVF) {
		gen.Close()
		return nil, fmt.Errorf("%s: --rescore applies to an index whose vectors are an inverted file (kairos index --vector-index ivf)", dir)
	}
	if opts.EfSearch == 0 && gen.Manifest.Dense != nil {
		opts.EfSearch = gen.Manifest.Dense.HNSW.EfSearch
	}
	// Queries are analysed as the index's passages were, in the index's language (or each).
	an, err := gen.Manifest.PassageAnalysis()
	if err != nil {
		gen.Close()
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return &Index{gen: gen, opts: opts, analysis: an, langs: gen.Manifest.IndexLanguages()}, nil
}

// Close releases the index files.
func (ix *Index) Close() error { return ix.gen.Close() }

// Manifest returns the manifest of the opened generation.
func (ix *Index) Manifest() *indexer.Manifest { return ix.gen.Manifest }

// Passage returns the passage with the given id (e.g. "12#0"), or an error wrapping ErrNotFound.
func (ix *Index) Passage(ctx context.Context, id string) (corpus.Passage, error) {
	ix.idsOnce.Do(func() {
		ids := make(map[string]uint32, ix.gen.Passages.Len())
		// The map serves every later caller: the first caller's cancellation must not leave
		// it failed for good, so the walk keeps ctx's values but not its end.
		ix.idsErr = ix.gen.Passages.Each(context.WithoutCancel(ctx), func(key uint32, p corpus.Passage) error {
			ids[p.ID] = key
			return nil
		})
		ix.ids = ids
	})
	if ix.idsErr != nil {
		return corpus.Passage{}, ix.idsErr
	}
	key, ok := ix.ids[id]
	if !ok {
		return corpus.Passage{}, fmt.Errorf("passage %q: %w", id, ErrNotFound)
	}
	return ix.gen.Passages.Get(ctx, key)
}

// Stats describes the opened index.
func (ix *Index) Stats() Stats {
	m := ix.gen.Manifest
	var size int64
	for _, f := range m.Files {
		size += f.Size
	}
	var model string
	if d := m.Dense; d != nil {
		model = d.Model.Name
	}
	return Stats{
		Generation: m.Generation, Dense: ix.gen.Vectors != nil, Model: model,
		Documents: m.Counts.Documents, Passages: m.Counts.Passages, Deleted: m.Tombstones, Sources: m.Sources,
		DateFrom: m.DateFrom, DateTo: m.DateTo, Created: m.Created, Version: m.FormatVersion,
		SizeBytes: size, Language: m.Language(), Analyzer: m.Options.Analyzer, Languages: m.LanguageCounts(),
		Outdated: ix.gen.Outdated,
	}
}

// Search runs one request.
func (ix *Index) Search(ctx context.Context, req Request) ([]Hit, error) {
	if req.K < 1 {
		// A caller that means "the default" says so with DefaultK: turning 0 into 10 here
		// would hide a caller that forgot to set k (the request parser refuses it too).
		return nil, fmt.Errorf("search: k %d: want at least 1 hit", req.K)
	}
	if err := CheckFusion(req.Fusion, req.Alpha, req.RRFK); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	switch req.Mode {
	case "", ModeBM25:
		return ix.searchBM25(ctx, req)
	case ModeDense:
		return ix.searchDense(ctx, req)
	case ModeHybrid:
		return ix.searchHybrid(ctx, req)
	default:
		return nil, fmt.Errorf("unknown search mode %q", req.Mode)
	}
}
