// Package blevebm25 is Kairos's local lexical engine: a bleve (scorch) index per generation,
// scored with BM25 from the manifest's collection statistics rather than bleve's own.
//
// Why the statistics are injected: bleve 2.5 computes BM25's average field length as
// ceil(C / N), where N is the document count and C the "field cardinality", which bleve takes
// as the sum over the index's segments of each segment's term-dictionary size
// (search/searcher/search_term.go, bm25ScoreMetrics). That is a vocabulary size, not a length,
// and it depends on how passages fell into segments. The indexer records the true total
// length, and Reader.Search hands it to bleve as C, so scores depend only on the live passages
// and every build of the same passages ranks them the same.
//
// bleve keeps k1 and b in package variables read at query time, so one process can score with
// one pair only: the first Open installs it, and an Open asking for another fails rather than
// silently changing the scores of the readers already open.
package blevebm25
