package indexer

import (
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/kairos-rag/kairos/indexer/backend/qdrant"
	"github.com/kairos-rag/kairos/indexer/store"
	"github.com/kairos-rag/kairos/internal/hnsw"
	"github.com/kairos-rag/kairos/internal/memlimit"
)

// Flags registers the options of a build a command line sets, with the defaults SetDefaults
// applies: the build options, --skip-bad, --allow-empty, --checkpoint-every,
// --checkpoint-after, --bm25-first (EmbedInline, inverted), --ram-budget (MiB), the HNSW
// parameters (--hnsw-m, --hnsw-ef-construction, --hnsw-ef-search, --hnsw-seed, --vectors),
// the dense index's kind and the inverted file's (--vector-index, --ivf-lists, --ivf-probe,
// --ivf-rescore, --ivf-no-refine) and the collections' of a qdrant:// index (--qdrant-shards,
// --qdrant-replication).
// Inputs, the encoder and the outputs are the caller's. On the command line 0 turns
// checkpoints (or their least time) off, as a person would write it; the library's own 0
// means the default and a negative value off.
func (o *Options) Flags(fs *flag.FlagSet) {
	d := *o
	d.SetDefaults()
	o.Build.Flags(fs)
	fs.BoolVar(&o.SkipBad, "skip-bad", o.SkipBad, "skip malformed records (counted and listed) instead of failing")
	fs.BoolVar(&o.AllowEmpty, "allow-empty", o.AllowEmpty, "commit even when the inputs yield no passage (replacing the live index by an empty one), or let --delete-missing delete everything")
	o.CheckpointEvery, o.CheckpointAfter, o.RAMBudget = d.CheckpointEvery, d.CheckpointAfter, d.RAMBudget
	fs.Var(zeroOffInt{&o.CheckpointEvery}, "checkpoint-every", "commit a resumable checkpoint every this many passages (0: never), once --checkpoint-after has passed")
	fs.Var(notBool{&o.EmbedInline}, "bm25-first", "with --model: commit the BM25 index first (live and searchable at once), then embed its passages into the next generation; an interrupted embedding resumes (--resume) without reading the inputs again (--bm25-first=false: embed as passages are written, nothing live until the end)")
	fs.Var(zeroOffDuration{&o.CheckpointAfter}, "checkpoint-after", "least time between checkpoints (0: count passages only); with --model, a checkpoint every this long whatever the count")
	fs.Var(memlimit.Mebibytes{P: &o.RAMBudget}, "ram-budget", "MiB of memory a postings build (--lexical postings) holds before it writes a segment (in the background while the next fills: up to about twice this in all), merged with the others as it goes and at the end; the index and its scores do not depend on it")
	hnswFlags(fs, &o.HNSW)
	vectorIndexFlags(fs, o)
	o.Qdrant.Shards = d.Qdrant.Shards
	fs.Var(countFlag{&o.Qdrant.Shards}, "qdrant-shards", "shards of each collection of a qdrant:// index (the location's ?shards= wins)")
	fs.Var(countFlag{&o.Qdrant.Replication}, "qdrant-replication", "replication factor of each collection of a qdrant:// index; 0: the cluster's peers, at most 2 (the location's ?replication= wins)")
}

// QdrantOptions configure the collections of a new index on a Qdrant cluster
// (store.CollectionOptions): shards (Options.SetDefaults: qdrant.DefaultShards), replication
// (0: the engine's choice) and the BM25 parameters baked into their weights.
type QdrantOptions = store.CollectionOptions

// countFlag is a uint32 flag that takes 1..qdrant.MaxCount.
type countFlag struct{ p *uint32 }

func (f countFlag) String() string {
	if f.p == nil {
		return "0"
	}
	return strconv.FormatUint(uint64(*f.p), 10)
}

func (f countFlag) Set(s string) error {
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil || n == 0 || n > qdrant.MaxCount {
		return fmt.Errorf("want an integer in 1..%d", qdrant.MaxCount)
	}
	*f.p = uint32(n)
	return nil
}

// hnswFlags registers the graph parameters a build records, as --hnsw-*, with the defaults a
// build applies (hnsw's, and DefaultHNSWSeed).
func hnswFlags(fs *flag.FlagSet, h *hnsw.Options) {
	d := hnswDefaults(*h)
	fs.IntVar(&h.M, "hnsw-m", d.M, "HNSW: neighbours per node (M)")
	fs.IntVar(&h.EfConstruction, "hnsw-ef-construction", d.EfConstruction, "HNSW: candidate list size while building")
	fs.IntVar(&h.EfSearch, "hnsw-ef-search", d.EfSearch, "HNSW: default candidate list size of searches")
	fs.Int64Var(&h.Seed, "hnsw-seed", d.Seed, "HNSW: random seed (level draws)")
	fs.StringVar(&h.Codes, "vectors", d.Codes, "compact vectors a mapped search walks: int8 (1 byte a dimension; the default of a new index) or binary (1 bit, Hamming distance, candidates rescored with int8 then float); recorded, an update keeps the index's")
}

// vectorIndexFlags registers the choice of dense index (--vector-index) and the inverted
// file's parameters (--ivf-lists, --ivf-probe, --ivf-rescore, --ivf-no-refine), with ivf's
// defaults.
func vectorIndexFlags(fs *flag.FlagSet, o *Options) {
	fs.Var(vectorIndexFlag{&o.VectorIndex}, "vector-index", fmt.Sprintf("the dense index of a new index: hnsw (a graph in memory), ivf (an inverted file of one-bit codes, built in time linear in the passages, memory bounded by its codes) or auto (ivf from %d passages a --bm25-first build embeds, hnsw otherwise); recorded, an update keeps the index's", DefaultIVFFrom))
	d := o.IVF
	d.SetDefaults()
	o.IVF.Probe, o.IVF.Rescore = d.Probe, d.Rescore
	fs.IntVar(&o.IVF.Lists, "ivf-lists", o.IVF.Lists, "IVF: lists (centroids); 0: about 4*sqrt(passages), a power of two (4,096 at a million)")
	fs.IntVar(&o.IVF.Probe, "ivf-probe", o.IVF.Probe, "IVF: lists a search probes by default (a search's --ef overrides it)")
	fs.IntVar(&o.IVF.Rescore, "ivf-rescore", o.IVF.Rescore, "IVF: the fewest of the best one-bit estimates a search takes on (one for every 64 vectors scanned when more): it estimates them again from their refinement codes and rescores a twelfth of them, at least 64, with their int8 vectors")
	fs.BoolVar(&o.IVF.NoRefine, "ivf-no-refine", o.IVF.NoRefine, "IVF: write no refinement codes: lists of 44 bytes a 256-d vector instead of 84, and several times as many candidates rescored with their int8 vectors for the same recall (slower, most of all when the vectors are on disk); recorded, compaction and updates keep it")
}

// vectorIndexFlag is --vector-index: auto (the option's "") or a kind.
type vectorIndexFlag struct{ p *string }

func (f vectorIndexFlag) String() string {
	if f.p == nil || *f.p == "" {
		return "auto"
	}
	return *f.p
}

func (f vectorIndexFlag) Set(s string) error {
	switch s {
	case "auto":
		*f.p = ""
	case VectorIndexHNSW, VectorIndexIVF:
		*f.p = s
	default:
		return fmt.Errorf("%q: want auto, %s or %s", s, VectorIndexHNSW, VectorIndexIVF)
	}
	return nil
}

// hnswDefaults is h with the defaults a build applies: hnsw's (hnsw.Options.SetDefaults) and
// the seed DefaultHNSWSeed.
func hnswDefaults(h hnsw.Options) hnsw.Options {
	h.SetDefaults()
	if h.Seed == 0 {
		h.Seed = DefaultHNSWSeed
	}
	return h
}

// Flags registers the build's flags (Options.Flags) and the update's: --delete-missing and
// --compact-ratio, with the defaults SetDefaults applies.
func (o *UpdateOptions) Flags(fs *flag.FlagSet) {
	d := *o
	d.SetDefaults()
	o.Options.Flags(fs)
	fs.BoolVar(&o.DeleteMissing, "delete-missing", o.DeleteMissing, "with --update: delete documents absent from the inputs")
	fs.Float64Var(&o.CompactRatio, "compact-ratio", d.CompactRatio, "with --update: compact when tombstones exceed this share of passages (negative: never)")
}

// zeroOffInt is a count flag whose 0 turns the option off: it stores -1, the library's "off"
// (the library's 0 is its default).
type zeroOffInt struct{ p *int }

func (f zeroOffInt) String() string {
	if f.p == nil || *f.p < 0 {
		return "0"
	}
	return strconv.Itoa(*f.p)
}

func (f zeroOffInt) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return fmt.Errorf("%q: want a count (0: off)", s)
	}
	if n == 0 {
		n = -1
	}
	*f.p = n
	return nil
}

// zeroOffDuration is a duration flag whose 0 turns the option off: it stores -1ns, the
// library's "off" (the library's 0 is its default).
type zeroOffDuration struct{ p *time.Duration }

func (f zeroOffDuration) String() string {
	if f.p == nil || *f.p < 0 {
		return "0s"
	}
	return f.p.String()
}

func (f zeroOffDuration) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return fmt.Errorf("%q: want a duration (0: off)", s)
	}
	if d == 0 {
		d = -1
	}
	*f.p = d
	return nil
}

// notBool is a boolean flag that sets the negation of the option it holds: the option's zero
// value (false) is the recommended behaviour, which the flag names positively (--bm25-first
// for EmbedInline false).
type notBool struct{ p *bool }

func (f notBool) String() string   { return strconv.FormatBool(f.p != nil && !*f.p) }
func (f notBool) IsBoolFlag() bool { return true }

func (f notBool) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	*f.p = !b
	return nil
}
