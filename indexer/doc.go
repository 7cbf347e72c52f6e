// Package indexer builds, updates, compacts, verifies and opens Kairos indexes.
//
// Open returns an Index, the index at one Location (a directory, or qdrant://HOST:PORT/NAME
// for an index on a Qdrant cluster; Location is the --index flag of every command). Its
// methods (Build, Resume, Update, Delete, Compact, Verify, Reader) run one driver over the
// index's store (indexer/store, with one implementation per kind of location:
// indexer/store/local, indexer/store/qdrant), which numbers, publishes and drops generations,
// keeps their records and connects the engines that write and read their parts
// (indexer/backend). Open's switch on the location is the one place that tells the kinds
// apart.
//
// An index holds immutable generations and names the live one. Every write prepares a new
// generation beside the live one and commits it through the store, under its writer lock, so
// a crash at any point leaves the previous generation serving. A generation holds its manifest
// (inputs, counts, BM25 statistics, checksums of every file; indexer/manifest), the passages,
// the document table (indexer/doctable), the lexical part (Kairos's postings by default, or
// bleve: the engine the manifest names) and, when a model was given, the dense vectors and
// their graph.
//
// Long builds commit checkpoint generations that Resume continues from. A build with an
// encoder commits its BM25 index first, live at once, and its vectors in the next generation
// (unless Options.EmbedInline). Verify re-reads every file or record of a generation against
// the checksums in its manifest.
package indexer
