package search

import (
	"cmp"
	"flag"
	"fmt"
)

// Flags registers the query-time options every querying command shares: --ef (EfSearch; 0, the
// default, is the index's ef_search) and --binary-rescore (BinaryRescore).
func (o *Options) Flags(fs *flag.FlagSet) {
	fs.IntVar(&o.EfSearch, "ef", o.EfSearch, "HNSW search list size (0: the index's)")
	fs.StringVar(&o.BinaryRescore, "binary-rescore", o.BinaryRescore, "an index with binary codes (--vectors binary): rescore the walk's candidates with the int8 codes, then floats (int8, the default), or with floats only (float: the codes stay out of resident memory); an index without binary codes is refused")
}

// TuningFlags registers the scoring parameters a tuning tool sets: --k1, --b and
// --doc-evidence. Their zero values mean the defaults (BM25K1, BM25B, DefaultDocEvidence), as
// in Options, so an untouched flag leaves the library's choice alone.
func (o *Options) TuningFlags(fs *flag.FlagSet) {
	fs.Float64Var(&o.K1, "k1", o.K1, fmt.Sprintf("tuning: BM25 k1 (0: the default, %v)", BM25K1))
	fs.Float64Var(&o.B, "b", o.B, fmt.Sprintf("tuning: BM25 b (0: the default, %v)", BM25B))
	fs.Float64Var(&o.DocEvidence, "doc-evidence", o.DocEvidence, fmt.Sprintf("tuning: document evidence weight (0: the default, %v; negative: off)", DefaultDocEvidence))
}

// VerifyFlag registers --verify (VerifyFiles).
func (o *Options) VerifyFlag(fs *flag.FlagSet) {
	fs.BoolVar(&o.VerifyFiles, "verify", o.VerifyFiles, "hash every index file against the manifest before serving it, at start and on each reload (default: sizes, and hashes of the first 64 MiB)")
}

// DefaultCutoff is the cut-off of nDCG and MRR when Metrics.K is 0: Metrics, its JSON names
// and --k all take it from here.
const DefaultCutoff = 10

// Flags registers --k, the cut-off of nDCG and MRR, default DefaultCutoff.
func (m *Metrics) Flags(fs *flag.FlagSet) {
	fs.IntVar(&m.K, "k", cmp.Or(m.K, DefaultCutoff), "cut-off of nDCG and MRR")
}
