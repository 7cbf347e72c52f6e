package hnsw

import "fmt"

// Reserve makes room for n more nodes, so that a build that knows its size allocates the
// arrays that grow with it once. Grown batch by batch, an array is copied each time it
// outgrows its capacity (by about a quarter, for large slices), and the old copy stays until
// the collector frees it: the largest array, the int8 codes of a graph built from codes
// (2.56 GB at 10M 256-d nodes), is then held about twice over at its last copy. Reserve
// allocates the codes (or the float vectors), the level-0 lists and the per-node arrays at
// exactly their final size and the upper-level lists at their expected size. A mapped graph
// is first read into the form Add changes, as Add would, into arrays of the final size.
func (g *Graph) Reserve(n int) error {
	if n <= 0 {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return ErrClosed
	}
	if n > maxNodes-len(g.keys) {
		return fmt.Errorf("hnsw: reserve: %d more nodes would exceed the limit of %d", n, maxNodes)
	}
	if err := g.writable(n); err != nil {
		return fmt.Errorf("hnsw: reserve: %w", err)
	}
	if g.spill != nil {
		g.bcodes = reserve(g.bcodes, n*g.dim)
		g.brange = reserve(g.brange, 2*n)
	} else {
		g.vecs = reserve(g.vecs, n*g.dim)
	}
	g.level0 = reserve(g.level0, n*g.stride)
	g.keys = reserve(g.keys, n)
	g.levels = reserve(g.levels, n)
	g.upperOff = reserve(g.upperOff, n)
	// A node is on level l >= 1 with probability M^-l (randomLevel), so n nodes hold n/(M-1)
	// upper lists of m+1 slots on average; a few percent more covers the draws' spread.
	lists := n / (g.m - 1) // Options.Validate: M >= 2
	g.upper = reserve(g.upper, (lists+lists/16+64)*(g.m+1))
	g.deleted = reserve(g.deleted, max(0, (len(g.keys)+n+63)/64-len(g.deleted)))
	return nil
}

// cloneWithRoom returns a copy of s (a mapped section read into memory) with room for n more
// elements and no more.
func cloneWithRoom[T any](s []T, n int) []T {
	return append(make([]T, 0, len(s)+n), s...)
}

// reserve returns s with room for n more elements and no more: slices.Grow rounds the new
// capacity up by append's rule, which on a non-empty slice can be a quarter more than asked.
func reserve[T any](s []T, n int) []T {
	if cap(s)-len(s) >= n {
		return s
	}
	t := make([]T, len(s), len(s)+n)
	copy(t, s)
	return t
}
