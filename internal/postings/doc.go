// Package postings is Kairos's own inverted index for BM25: segments of postings over uint32
// passage keys, written by the indexer and searched by search with dynamic pruning
// (block-max MaxScore), so that a query does not score every posting of every query term as
// bleve does.
//
// A segment is one file (format.go): per term, the passages that contain it as ordinal deltas
// and term frequencies in varint blocks of BlockSize postings, with each block's largest term
// frequency and smallest passage length; per term, the Pareto frontier of (term frequency,
// passage length) pairs, from which the exact largest BM25 contribution of the term follows
// for any k1, b and collection statistics; per passage, its key and its length in tokens. It
// is memory-mapped, so opening reads only the trailer (and, unless told not to, streams the
// file once through the checksum).
//
// Scores are bleve 2.5.7's BM25 as Kairos runs it (score.go): the same idf, the same float32
// field norm, the same query norm and coordination factor, summed in the same order, so that
// a search here returns the scores and the ranking of search.Index in mode bm25.
//
// A Searcher runs a query on its caller's goroutine and, when the Searcher's other queries
// leave cores idle (its budget: SearcherOptions.Workers goroutines, GOMAXPROCS by default,
// taken without waiting) and the query is large enough to gain, on idle ones too: its
// segments are cut into ordinal ranges, one per goroutine it got, searched in parallel, so
// one query uses every idle core even on one segment, and a loaded server pays nothing for
// ranges. The ranges share one top-k threshold: the best k-th score any of them has found, a
// lower bound of the query's, prunes in all of them, and a range searched after another
// starts with it. However a query was cut, its hits are the same, to the bit.
//
// Building (Builder) holds one buffer of at most BuilderOptions.MaxBufferedPostings postings
// and the vocabulary in memory, spilling sorted runs to temporary files and merging them at
// Finish. Neither holds a pointer (the vocabulary is a byte slab, offsets and an
// open-addressing table of integer slots), so the garbage collector has nothing to scan in
// them. The vocabulary still grows with the passages (Heaps' law), so Full reports when
// the in-memory part reaches BuilderOptions.RAMBudget, or the segment holds
// BuilderOptions.MaxPostings (which bounds the time Finish takes): the caller finishes the
// segment there and starts another, and MergeSegments streams the segments of consecutive
// key ranges into one, as Lucene flushes its RAM buffer and merges segments.
package postings
