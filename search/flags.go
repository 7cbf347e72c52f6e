package search

import "flag"

// Flags registers the query-time options every querying command shares: --ef (EfSearch; 0, the
// default, is the index's ef_search), --rescore (Rescore) and --binary-rescore
// (BinaryRescore), with the defaults SetDefaults applies.
func (o *Options) Flags(fs *flag.FlagSet) {
	d := *o
	d.SetDefaults()
	fs.IntVar(&o.EfSearch, "ef", d.EfSearch, "HNSW search list size, or lists an inverted file probes (--vector-index ivf) (0: the index's)")
	fs.IntVar(&o.Rescore, "rescore", d.Rescore, "an inverted file (--vector-index ivf): how many of its best estimates a dense search rescores with their vectors; fewer is faster where the vectors do not fit in memory, and finds fewer true neighbours (0: the index's rule: a twelfth of the candidates refined, at least 64; an index written before refinement codes, one for every 64 vectors scanned, at least 320)")
	fs.StringVar(&o.BinaryRescore, "binary-rescore", d.BinaryRescore, "an index with binary codes (--vectors binary): rescore the walk's candidates with the int8 codes, then floats (int8, the default), or with floats only (float: the codes stay out of resident memory); an index without binary codes is refused")
}

// TuningFlags registers the scoring parameters a tuning tool sets: --k1, --b and
// --doc-evidence, with the defaults SetDefaults applies (BM25K1, BM25B, DefaultDocEvidence).
func (o *Options) TuningFlags(fs *flag.FlagSet) {
	d := *o
	d.SetDefaults()
	fs.Float64Var(&o.K1, "k1", d.K1, "tuning: BM25 k1")
	fs.Float64Var(&o.B, "b", d.B, "tuning: BM25 b")
	fs.Float64Var(&o.DocEvidence, "doc-evidence", d.DocEvidence, "tuning: document evidence weight (negative: off)")
}

// VerifyFlag registers --verify (VerifyFiles).
func (o *Options) VerifyFlag(fs *flag.FlagSet) {
	fs.BoolVar(&o.VerifyFiles, "verify", o.VerifyFiles, "hash every index file against the manifest before serving it, at start and on each reload (default: sizes, and hashes of the first 64 MiB)")
}

// DefaultCutoff is the cut-off of nDCG and MRR when Metrics.K is 0: Metrics, its JSON names
// and --k all take it from here.
const DefaultCutoff = 10

// SetDefaults fills the zero cut-off with DefaultCutoff. Flags calls it on a copy.
func (m *Metrics) SetDefaults() {
	if m.K == 0 {
		m.K = DefaultCutoff
	}
}

// Flags registers --k, the cut-off of nDCG and MRR, with the default SetDefaults applies.
func (m *Metrics) Flags(fs *flag.FlagSet) {
	d := Metrics{K: m.K}
	d.SetDefaults()
	fs.IntVar(&m.K, "k", d.K, "cut-off of nDCG and MRR")
}
