package indexer

import (
	"flag"
	"time"

	"github.com/kairos-rag/kairos/internal/hnsw"
	"github.com/kairos-rag/kairos/internal/memlimit"
	"github.com/kairos-rag/kairos/internal/postings"
)

// DefaultCheckpointEvery is the checkpoint interval, in passages, that command lines offer by
// default (Options.CheckpointEvery's own zero value means no checkpoints): frequent enough that
// a crash costs minutes, not hours, rare enough that the checkpoints' graph saves stay cheap.
const DefaultCheckpointEvery = 50000

// DefaultCheckpointAfter is the least time between checkpoints that command lines offer by
// default: a crash loses at most about this much work, and a build at 10,000 passages a second
// makes a checkpoint (and a lexical segment) per 3 million passages, not per 50,000.
const DefaultCheckpointAfter = 5 * time.Minute

// DefaultLexicalFirst is what command lines offer for Options.LexicalFirst (whose zero
// value embeds inline): a dense build's BM25 index is searchable minutes or hours before its
// vectors are, and an interrupted embedding does not cost the BM25 work.
const DefaultLexicalFirst = true

// Flags registers the options of a build a command line sets, with their defaults: the build
// options, --skip-bad, --allow-empty, --checkpoint-every (default DefaultCheckpointEvery),
// --checkpoint-after (default DefaultCheckpointAfter), --ram-budget (MiB, default
// postings.DefaultRAMBudget), the HNSW parameters (--hnsw-m,
// --hnsw-ef-construction, --hnsw-ef-search, --hnsw-seed, --vectors) and the collections' of a qdrant://
// index (--qdrant-shards, --qdrant-replication).
// Inputs, the encoder and the outputs are the caller's.
func (o *Options) Flags(fs *flag.FlagSet) {
	o.Build.Flags(fs)
	if o.CheckpointEvery == 0 {
		o.CheckpointEvery = DefaultCheckpointEvery
	}
	fs.BoolVar(&o.SkipBad, "skip-bad", o.SkipBad, "skip malformed records (counted and listed) instead of failing")
	fs.BoolVar(&o.AllowEmpty, "allow-empty", o.AllowEmpty, "commit even when the inputs yield no passage (replacing the live index by an empty one), or let --delete-missing delete everything")
	if o.CheckpointAfter == 0 {
		o.CheckpointAfter = DefaultCheckpointAfter
	}
	fs.IntVar(&o.CheckpointEvery, "checkpoint-every", o.CheckpointEvery, "commit a resumable checkpoint every this many passages (0: never), once --checkpoint-after has passed")
	if !o.LexicalFirst {
		o.LexicalFirst = DefaultLexicalFirst
	}
	fs.BoolVar(&o.LexicalFirst, "bm25-first", o.LexicalFirst, "with --model: commit the BM25 index first (live and searchable at once), then embed its passages into the next generation; an interrupted embedding resumes (--resume) without reading the inputs again (--bm25-first=false: embed as passages are written, nothing live until the end)")
	fs.DurationVar(&o.CheckpointAfter, "checkpoint-after", o.CheckpointAfter, "least time between checkpoints (0: count passages only); with --model, a checkpoint every this long whatever the count")
	if o.RAMBudget == 0 {
		o.RAMBudget = postings.DefaultRAMBudget
	}
	fs.Var(memlimit.Mebibytes{P: &o.RAMBudget}, "ram-budget", "MiB of memory a postings build (--lexical postings) holds before it writes a segment (in the background while the next fills: up to about twice this in all), merged with the others as it goes and at the end; the index and its scores do not depend on it")
	HNSWFlags(fs, &o.HNSW)
	o.Qdrant.Flags(fs)
}

// HNSWFlags registers the graph parameters a build records, as --hnsw-*, with the defaults a
// build applies (hnsw's, and DefaultHNSWSeed).
func HNSWFlags(fs *flag.FlagSet, h *hnsw.Options) {
	d := hnswDefaults(*h)
	fs.IntVar(&h.M, "hnsw-m", d.M, "HNSW: neighbours per node (M)")
	fs.IntVar(&h.EfConstruction, "hnsw-ef-construction", d.EfConstruction, "HNSW: candidate list size while building")
	fs.IntVar(&h.EfSearch, "hnsw-ef-search", d.EfSearch, "HNSW: default candidate list size of searches")
	fs.Int64Var(&h.Seed, "hnsw-seed", d.Seed, "HNSW: random seed (level draws)")
	fs.StringVar(&h.Codes, "vectors", d.Codes, "compact vectors a mapped search walks: int8 (1 byte a dimension; the default of a new index) or binary (1 bit, Hamming distance, candidates rescored with int8 then float); recorded, an update keeps the index's")
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
// --compact-ratio (default DefaultCompactRatio).
func (o *UpdateOptions) Flags(fs *flag.FlagSet) {
	o.Options.Flags(fs)
	d := *o
	d.SetDefaults()
	fs.BoolVar(&o.DeleteMissing, "delete-missing", o.DeleteMissing, "with --update: delete documents absent from the inputs")
	fs.Float64Var(&o.CompactRatio, "compact-ratio", d.CompactRatio, "with --update: compact when tombstones exceed this share of passages (negative: never)")
}
