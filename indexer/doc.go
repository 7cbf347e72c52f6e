// Package indexer builds, updates, compacts, verifies and opens Kairos index directories.
//
// An index directory holds immutable generations and a CURRENT pointer to the live one
// (generation.go; the CURRENT, CHECKPOINT and manifest formats belong to indexer/manifest).
// Every write (Build, Resume, an update, a delete, Compact) prepares a new
// generation beside the live one and commits it by renaming CURRENT, under a writer lock, so a
// crash at any point leaves the previous generation serving. A generation holds its manifest
// (inputs, counts, BM25 statistics, checksums of every file), the passage store (kpst), the
// document table (indexer/doctable), the lexical part (Kairos's postings by default, or
// bleve: the engine the manifest names, engines.go) and, when a model was given, the dense
// vectors and their HNSW graph. The engines sit behind the interfaces of indexer/backend.
//
// Long builds write checkpoint generations that Resume continues from. Verify re-reads every
// file of a generation against the checksums in its manifest.
//
// Where an index lives is a Store (store.go), opened from a Location by openStore, the one
// place that tells the kinds apart: a local directory (dirstore.go), or a Qdrant cluster
// (ParseLocation: qdrant://HOST:PORT/NAME), whose store is qdrant.Store (indexer/backend/qdrant)
// behind remoteStore (remotestore.go): it keeps each generation as a collection with its
// manifest and document table on metadata points and moves an alias to commit. The values
// that cross that seam are indexer/genstore's. Every operation runs the same driver through
// its store.
package indexer
