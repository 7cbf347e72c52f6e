package hnsw

import (
	"fmt"
	"slices"
	"sync"
)

// Exact is brute-force search over the same vectors and metric as Graph: every query scores every
// live vector. It is the reference HNSW recall is measured against, and the right choice for small
// collections. Safe for concurrent use.
type Exact struct {
	mu       sync.RWMutex
	dim      int
	metric   Metric
	vecs     []float32
	keys     []uint64
	deleted  []bool
	byKey    map[uint64]int
	nDeleted int
}

// NewExact returns an empty exact searcher. Under Cosine (the zero Metric) vectors and queries
// are L2-normalised, exactly as Graph does.
func NewExact(dim int, metric Metric) (*Exact, error) {
	if dim < 1 || dim > maxDim {
		return nil, fmt.Errorf("hnsw: dimension %d out of range 1..%d", dim, maxDim)
	}
	if metric != Cosine && metric != Dot {
		return nil, fmt.Errorf("hnsw: unknown metric %v", metric)
	}
	return &Exact{dim: dim, metric: metric, byKey: map[uint64]int{}}, nil
}

// Add appends vectors under keys, with the same validation as Graph.Add.
func (e *Exact) Add(keys []uint64, vecs [][]float32) error {
	if len(keys) != len(vecs) {
		return fmt.Errorf("hnsw: exact add: %d keys but %d vectors", len(keys), len(vecs))
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	seen := make(map[uint64]int, len(keys))
	for i, v := range vecs {
		if len(v) != e.dim {
			return fmt.Errorf("%w: exact add: vector %d (key %d) has %d, index has %d", ErrDim, i, keys[i], len(v), e.dim)
		}
		if _, ok := e.byKey[keys[i]]; ok {
			return fmt.Errorf("hnsw: exact add: vector %d: key %d already present (delete it first)", i, keys[i])
		}
		if j, ok := seen[keys[i]]; ok {
			return fmt.Errorf("hnsw: exact add: vectors %d and %d share key %d", j, i, keys[i])
		}
		seen[keys[i]] = i
	}
	e.vecs = slices.Grow(e.vecs, len(vecs)*e.dim)
	for i, v := range vecs {
		o := len(e.vecs)
		e.vecs = append(e.vecs, v...)
		if e.metric == Cosine {
			normalizeInto(e.vecs[o:], v)
		}
		e.byKey[keys[i]] = len(e.keys)
		e.keys = append(e.keys, keys[i])
		e.deleted = append(e.deleted, false)
	}
	return nil
}

// Delete removes key from results and reports whether it was live.
func (e *Exact) Delete(key uint64) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	i, ok := e.byKey[key]
	if !ok {
		return false
	}
	delete(e.byKey, key)
	e.deleted[i] = true
	e.nDeleted++
	return true
}

// Live is the number of vectors not deleted.
func (e *Exact) Live() int {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return len(e.keys) - e.nDeleted
}

// Search returns the k live keys with the highest scores, best first (ties by ascending key).
func (e *Exact) Search(q []float32, k int) ([]Result, error) {
	if len(q) != e.dim {
		return nil, fmt.Errorf("%w: query has %d, index has %d", ErrDim, len(q), e.dim)
	}
	if k <= 0 {
		return nil, nil
	}
	if e.metric == Cosine {
		nq := make([]float32, e.dim)
		normalizeInto(nq, q)
		q = nq
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	// Keep the k best in a min-heap on (score, then larger key is worse) so ties are stable.
	top := make([]Result, 0, k+1)
	for i, key := range e.keys {
		if e.deleted[i] {
			continue
		}
		s := dot(q, e.vecs[i*e.dim:(i+1)*e.dim])
		if len(top) == k && !better(Result{key, s}, top[0]) {
			continue
		}
		top = pushResult(top, Result{key, s})
		if len(top) > k {
			top = popResult(top)
		}
	}
	sortResults(top)
	return top, nil
}

// better reports whether a ranks before b.
func better(a, b Result) bool {
	return a.Score > b.Score || (a.Score == b.Score && a.Key < b.Key)
}

// pushResult and popResult keep h as a heap whose root is the worst result.
func pushResult(h []Result, r Result) []Result {
	h = append(h, r)
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !better(h[p], h[i]) {
			break
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
	return h
}

func popResult(h []Result) []Result {
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for i := 0; ; {
		l := 2*i + 1
		if l >= n {
			break
		}
		c := l
		if r := l + 1; r < n && better(h[l], h[r]) {
			c = r
		}
		if !better(h[i], h[c]) {
			break
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
	return h
}
