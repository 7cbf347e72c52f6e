// Package hnsw is Kairos's Hierarchical Navigable Small World index (Malkov & Yashunin, 2016) over
// float32 vectors under uint64 keys, and an exact brute-force searcher (Exact) that serves as its
// reference.
//
// Scores are similarities: the dot product of the (by default L2-normalised) vectors, higher is
// better. Results are sorted best first, ties broken by ascending key.
//
// Layout: all vectors live in one flat []float32, the level-0 neighbour lists in one flat []uint32
// with a fixed stride (count + M0 slots), and the rarer upper-level lists in a second flat []uint32
// addressed by a per-node offset. This keeps search cache-friendly and lets the on-disk format be
// read with a handful of bulk reads and no per-vector allocations.
//
// Construction follows the paper and hnswlib: level multiplier 1/ln(M), M links per node on upper
// levels and 2*M on level 0, neighbours chosen by the paper's heuristic (algorithm 4). Two
// additions: a node's neighbours are found top-down but linked bottom-up, so that parallel
// insertion never routes through a half-linked node, and after every Add a repair pass re-links
// any node that pruning left unreachable from the entry point or unfindable by its own vector.
//
// Mapped form: Save also stores every vector as one byte per dimension (per-dimension ranges, see
// quant.go), in a page-aligned file. LoadWith(LoadOptions{Mapped: true}) maps the level-0 lists
// and the codes instead of reading the file into memory: searches walk the graph over the codes
// and rescore the best candidates with float vectors read from the file, so scores are exact
// and resident memory is about a third of the file. Add turns a mapped graph back into the
// in-memory form first. With Options.Codes binary the file also holds one bit per dimension
// and the mapped walk uses Hamming distance over those (binary.go), rescoring with the codes
// and the floats.
//
// Building from codes: with Options.Build codes the graph is built on one byte per dimension
// (a range per vector, buildcodes.go) instead of float32 vectors, and the floats are written to
// an unlinked file as they arrive, read back by Save, exact search and rescoring; a build then
// holds dim+8 bytes a vector in memory for the vectors instead of 4*dim.
//
// Concurrency: Search and Exact.Search are safe for concurrent use with each other and with Add and
// Delete; Add and Delete take an exclusive lock, so searches wait while a batch is inserted. Within
// one Add call, insertion runs on Options.Workers goroutines, the neighbour lists guarded by
// striped locks.
package hnsw
