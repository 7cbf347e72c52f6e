// Package qdrant keeps Kairos generations on a Qdrant cluster: the lexical part (Kairos's own
// BM25, exactly as the local bleve engine scores it), the dense vectors and the passages, all
// in one collection per generation, reached over gRPC (github.com/qdrant/go-client).
//
// Layout. Generation gen of index NAME is the collection "NAME-<gen.Name>". Every passage is
// one point, id = passage key, with the named dense vector "dense", two named sparse vectors
// and the passage in the payload (every corpus.Passage field under its JSON name, plus "key",
// "len" and "gen"). Payload indexes on "date" (datetime), "source" (keyword) and "key"
// (integer) serve filters and ordered scans. The live generation is the alias "NAME";
// Promote moves it in one UpdateAliases request, which Qdrant applies atomically.
//
// BM25. Qdrant's built-in BM25 keeps statistics per shard and cannot reproduce a global
// ranking, so Kairos computes the weights itself. The sparse vector "bm25" holds, per term of
// a passage, the document side of bleve's BM25 (bm25.go): sqrt(tf)*k1 / (sqrt(tf) +
// k1*(1-b+b*len/avg)) with avg = ceil(total tokens / passages) of the final collection, known
// only at Commit; "tf" holds the raw term frequencies. The query side sends idf² per term
// (bleve squares idf through its query weight), so Qdrant's dot product is an upper bound of
// bleve's score, which also multiplies by coord (matched/total query terms). Search takes
// candidates by that bound, rescores them exactly from "tf" and "len" in float64, and pages on
// until no unseen passage can beat the n-th exact score: the ranking is bleve's, not an
// approximation. Document frequencies and the build's k1, b and statistics live on metadata
// points of the same collection (ids from 1<<40), so they are created, swapped and dropped
// with the generation they describe.
//
// Term ids. A term's sparse index is the 32-bit FNV-1a hash of the analysed term. The whole
// vocabulary is known at Commit: a term whose hash another term already took is moved to
// the hash of "term\x00n" (the first free n), and the reader learns every term's index from
// the stored vocabulary, so collisions never merge two terms, and a query term outside the
// vocabulary matches nothing.
//
// Dense search and hybrid. Qdrant searches a segment with its HNSW graph only once the
// segment outgrows the indexing threshold, and indexes in the background after the writes
// return: Options.HNSW sets the graph's parameters and thresholds, and IndexState tells how
// far it has got (the tests and benchmarks wait on it, to measure the graph and not scans).
// LexReader.SearchHybrid (backend.HybridSearcher, which search uses for hybrid queries)
// returns the BM25 and the dense ranking of one query for Kairos's own fusion, their first
// pages in one QueryBatch request.
package qdrant
