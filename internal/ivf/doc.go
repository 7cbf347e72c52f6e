// Package ivf is Kairos's inverted-file vector index: the vector index whose memory is bounded
// by compact codes and whose build is linear in the number of vectors, for collections a graph
// in memory cannot hold (tens of millions of passages on one machine).
//
// Vectors are grouped into lists by their nearest centroid. The centroids are trained once, by
// spherical k-means on a sample (the first Options.Sample vectors added). A vector's list is
// that of its nearest centroid, found by comparing it with every centroid (nearest.go), or past
// 16,384 lists through a small HNSW graph over them (internal/hnsw), which also finds a query's
// lists past 8,192. Each vector is kept twice:
//
//   - in its list, as a RaBitQ code (Gao & Long, SIGMOD 2024): one bit per dimension of its
//     residual from the list's centre after a random rotation, with three floats from which a
//     query's inner product with the vector is estimated, with an error bound. These are what a
//     search scans, about 44 bytes a 256-d vector, memory-mapped. Beside it, a refinement code
//     (refine.go): a second bit a dimension, as extended RaBitQ places the residual on a grid
//     of two bits, and two floats, 40 bytes at 256 dimensions, from which the best candidates
//     are estimated again with half the error;
//   - in a vector chunk, in the order the vectors were added, as one signed byte per dimension
//     with its norm: the vector a search rescores its best candidates with, read from the
//     mapping a few hundred per query, and what Vector returns.
//
// A search finds the Probe lists nearest the query (comparing it with every centroid, or through
// the graph past 8,192 lists), estimates the score of every vector in them from its code,
// nearest list first, estimates the best of those again from their refinement codes, and
// rescores the best of those with their int8 vectors: a few dozen to a few hundred a query,
// each a read from the disk when the index is larger than memory. (An index an older version
// wrote has no refinement codes, and rescores the best one-bit estimates, several times as
// many for the same recall.) A
// filtered search (a keep function) probes more lists as the filter passes fewer vectors, asks
// the filter of the best estimates only, and scans every passing vector when the filter is
// narrow, so that a filter keeping 1% of the vectors keeps recall.
//
// Scores are cosine similarities of the int8 vectors with the query, which is what Exact
// computes by brute force: a vector's int8 form is its canonical form (Vector returns it, and
// adding it again gives the same codes), so an index rebuilt from its own vectors (compaction)
// scores exactly as the one it was built from.
//
// Files. One index is a directory of files this package owns, each in Kairos's checksummed
// envelope (internal/framing: a magic number of its own, a version, a CRC-32C), its columns
// aligned to 64 bytes so that a mapped file is read in place:
//
//	head.ivf               the index: options, training state, the files below (rewritten by every commit)
//	vectors-NNNNNN.ivfv    a chunk of int8 vectors and their keys, in the order added (immutable)
//	lists-NNNNNN.ivfl      a list segment: codes of a range of positions, grouped by list (immutable)
//	centroids-NNNNNN.ivfc  the rotation and the centroids (immutable)
//	centroids-NNNNNN.hnsw  the graph over the centroids (internal/hnsw's format)
//	deleted-NNNNNN.ivfd    the positions deleted (rewritten when deletions change)
//
// Immutable files are shared by hard link with the index a Writer derives from, so a new
// generation of a Kairos index costs what it changes: an update adds a vector chunk and a list
// segment (searched beside the others, merged into one when they grow) and a deletion rewrites
// the small deletions file.
//
// A build streams: vectors are written to their chunk and, once the centroids are trained,
// assigned to their lists as they are added. A checkpoint commit seals the chunk and writes the
// codes assigned since the last one as a list segment; the final commit merges the segments
// into one, list by list, a pass linear in the number of vectors. Everything the index holds is
// a function of the vectors in the order added, so a build that was interrupted and resumed
// from a checkpoint writes the same lists as one that was not.
//
// Long-lived arrays are flat slices of numbers (no pointers), mapped from the files.
package ivf
