package ivf

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// exactBlock is how many records ExactMany scores against every query before it moves on:
// 32 records of a 256-d index are 8 KiB, which stay in the first-level cache while each
// query's floats are read once for all of them.
const exactBlock = 32

// exactRange is how many positions one of ExactMany's tasks covers.
const exactRange = 1 << 16

// ExactMany is Exact for several queries in one pass over the vectors, shared by workers
// goroutines (0: GOMAXPROCS): each record is read once for all the queries instead of once
// a query. At 40M vectors Exact reads the whole of the int8 vectors (10 GB) for each query,
// about 8 s on one core, so the exact neighbours of 500 queries took over an hour; this is
// what a ground truth at that size needs. The results are Exact's, query by query, ties
// included. The first error or a cancelled ctx stops every worker.
func (r *Reader) ExactMany(ctx context.Context, qs [][]float32, k int, keep func(key uint32) bool, workers int) ([][]Result, error) {
	if r.closed {
		return nil, errClosed
	}
	for i, q := range qs {
		if len(q) != r.dim {
			return nil, fmt.Errorf("ivf: query %d of dimension %d, index %d", i, len(q), r.dim)
		}
	}
	out := make([][]Result, len(qs))
	if k <= 0 || len(qs) == 0 {
		return out, nil
	}
	qn := make([][]float32, len(qs))
	for i, q := range qs {
		qn[i] = make([]float32, r.dim)
		normalize(qn[i], q)
	}
	type task struct{ c, lo, hi int } // records [lo, hi) of chunk c
	var tasks []task
	for ci, c := range r.chunks {
		for lo := 0; lo < c.count; lo += exactRange {
			tasks = append(tasks, task{ci, lo, min(c.count, lo+exactRange)})
		}
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, len(tasks)))
	tops := make([][][]scored, workers) // per worker, per query: a heap of the k best
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
		stop     atomic.Bool
	)
	fail := func(err error) { errOnce.Do(func() { firstErr = err; stop.Store(true) }) }
	for w := range workers {
		tops[w] = make([][]scored, len(qs))
		wg.Add(1)
		go func(top [][]scored) {
			defer wg.Done()
			defer func() {
				if p := recover(); p != nil {
					fail(fmt.Errorf("ivf: exact search panicked: %v", p))
				}
			}()
			var (
				pos  [exactBlock]uint32
				inv  [exactBlock]float32
				code [exactBlock][]byte
			)
			for {
				i := int(next.Add(1) - 1)
				if i >= len(tasks) || stop.Load() {
					return
				}
				if err := ctx.Err(); err != nil {
					fail(err)
					return
				}
				t := tasks[i]
				c := r.chunks[t.c]
				// The chunks are mapped for random reads (a fault reads one page): the task's
				// records are asked for as a whole, read from the disk in large requests where
				// they are not in memory (at 40M in a 4 GB memory cgroup, the pass did not end
				// in 11 minutes one page fault at a time).
				adviseWillNeed(c.recs[t.lo*recSize(c.dim) : t.hi*recSize(c.dim)])
				for lo := t.lo; lo < t.hi; lo += exactBlock {
					n := 0
					for j := lo; j < min(t.hi, lo+exactBlock); j++ {
						p := uint32(c.first + j)
						if r.isDead(p) || (keep != nil && !keep(c.keys[j])) {
							continue
						}
						pos[n] = p
						inv[n], code[n] = c.rec(j)
						n++
					}
					for qi, q := range qn {
						h := top[qi]
						for j := range n {
							h = r.pushResult(h, scored{pos: pos[j], score: dotI8(q, code[j]) * inv[j]}, k)
						}
						top[qi] = h
					}
				}
			}
		}(tops[w])
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	for qi := range qs {
		h := tops[0][qi]
		for _, t := range tops[1:] {
			for _, x := range t[qi] {
				h = r.pushResult(h, x, k)
			}
		}
		out[qi] = r.sortedResults(h)
	}
	return out, nil
}
