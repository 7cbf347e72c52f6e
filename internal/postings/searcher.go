package postings

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// SearcherOptions configure a Searcher. The zero value is ready to use.
type SearcherOptions struct {
	// Workers is how many goroutines the Searcher's queries use at most, all together: a
	// query always runs on its caller's goroutine, and takes up to Workers-1 more, but only
	// those no other query of the Searcher is using at that moment, without waiting for
	// them. On an otherwise idle server one query uses every core; on a loaded one (as many
	// queries in flight as Workers, or more) each runs on its own goroutine alone, as it
	// would with Workers 1, and pays nothing for ranges it could not run in parallel.
	// Default GOMAXPROCS; 1 never splits a query (one range a segment, in turn).
	Workers int
	// MinRange is the fewest passages a range is cut to (default DefaultMinRange): below it
	// the fixed cost of a range (a cursor per term, its own first K hits) outweighs the gain.
	MinRange int
	// MinSplitPostings is the fewest postings (the document frequencies of the query's
	// terms, summed over the segments) a query must read for it to take more goroutines
	// (default DefaultMinSplitPostings): below it a query takes about as long as starting
	// them and cutting its segments into ranges. It is an upper bound of the postings read
	// (pruning skips many), so it errs toward not splitting.
	MinSplitPostings int
}

// DefaultMinRange is SearcherOptions.MinRange's default.
const DefaultMinRange = 1 << 15

// DefaultMinSplitPostings is SearcherOptions.MinSplitPostings's default.
const DefaultMinSplitPostings = 1 << 16

// SetDefaults fills the zero fields of o with the defaults a Searcher applies.
func (o *SearcherOptions) SetDefaults() {
	if o.Workers == 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.MinRange == 0 {
		o.MinRange = DefaultMinRange
	}
	if o.MinSplitPostings == 0 {
		o.MinSplitPostings = DefaultMinSplitPostings
	}
}

// SearcherStats count a Searcher's queries since it was made.
type SearcherStats struct {
	Queries uint64 // searches that got as far as their segments (a query with terms)
	Split   uint64 // of these, the ones searched on more than one goroutine
	Helpers uint64 // goroutines the split queries took beside their callers', in all
}

// Searcher searches a set of segments (the shards of one collection) as one index: document
// frequencies are summed over the segments, the collection statistics come from the caller,
// each segment (or range of one) is searched for its own top K, and the union is cut to the
// K best, so the hits equal those of a single segment holding every passage, however the
// query was split.
type Searcher struct {
	segs             []*Segment
	workers          int
	minRange         int
	minSplitPostings int
	// busy counts the goroutines searching for the Searcher's queries now: the callers'
	// and the helpers they took. A query takes helpers only while busy stays within
	// workers, so the budget is this Searcher's own, not the process's.
	busy    atomic.Int64
	queries atomic.Uint64
	split   atomic.Uint64
	helpers atomic.Uint64
	scratch sync.Pool // *windowScratch: a range search's accumulators, kept between queries
	window  int       // ordinals per inner window: innerWindow, but in tests
}

// NewSearcher returns a Searcher over segs, which must hold disjoint passage keys. It does
// not take ownership: the caller closes the segments after the searches.
func NewSearcher(segs []*Segment, opts SearcherOptions) (*Searcher, error) {
	if opts.Workers < 0 || opts.MinRange < 0 || opts.MinSplitPostings < 0 {
		return nil, fmt.Errorf("postings searcher: negative Workers %d, MinRange %d or MinSplitPostings %d",
			opts.Workers, opts.MinRange, opts.MinSplitPostings)
	}
	opts.SetDefaults()
	return &Searcher{segs: slices.Clone(segs), workers: opts.Workers, minRange: opts.MinRange,
		minSplitPostings: opts.MinSplitPostings}, nil
}

// Stats returns the Searcher's counts so far.
func (x *Searcher) Stats() SearcherStats {
	return SearcherStats{Queries: x.queries.Load(), Split: x.split.Load(), Helpers: x.helpers.Load()}
}

// DocFreq returns the number of passages of all segments that contain term.
func (x *Searcher) DocFreq(term string) (int, error) {
	n := 0
	for _, s := range x.segs {
		df, err := s.DocFreq(term)
		if err != nil {
			return 0, err
		}
		n += df
	}
	return n, nil
}

// Search returns the q.K best passages by BM25 under sc, best first, ties by passage key
// (as decimal strings, as Kairos orders them).
func (x *Searcher) Search(ctx context.Context, q Query, sc Scoring) ([]Hit, error) {
	if err := checkQuery(&q); err != nil {
		return nil, err
	}
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	if len(q.Terms) == 0 {
		return nil, nil
	}
	df := make([]uint64, len(q.Terms))
	for i, t := range q.Terms {
		n, err := x.DocFreq(t)
		if err != nil {
			return nil, err
		}
		if q.DeletedDocFreq != nil {
			d := q.DeletedDocFreq(t)
			if d < 0 || d > n {
				return nil, fmt.Errorf("postings search: term %q: %d deleted passages hold it, the segments only %d (deleted term counts of another index?)", t, d, n)
			}
			n -= d
		}
		df[i] = uint64(n)
	}
	p := newPlan(sc, q.Terms, df)
	sps, reads, err := x.plan(p)
	if err != nil {
		return nil, err
	}
	x.queries.Add(1)
	x.busy.Add(1)
	helpers := 0
	if reads >= int64(x.minSplitPostings) {
		helpers = x.take(x.workers - 1)
	}
	defer func() { x.busy.Add(-int64(1 + helpers)) }()
	tasks := x.cut(sps, 1+helpers)
	if usable := max(len(tasks)-1, 0); helpers > usable {
		// fewer ranges than goroutines (segments too small to cut): give the rest back
		x.busy.Add(-int64(helpers - usable))
		helpers = usable
	}
	if helpers > 0 {
		x.split.Add(1)
		x.helpers.Add(uint64(helpers))
	}
	results, err := x.run(ctx, tasks, p, &q, helpers)
	if err != nil {
		return nil, err
	}
	top := newTopK(q.K)
	for _, hs := range results {
		for _, h := range hs {
			top.offer(h)
		}
	}
	return top.sorted(), nil
}

// take reserves up to n helper goroutines of the budget, as many as are free now, without
// waiting, and returns how many it took (the caller gives them back to busy).
func (x *Searcher) take(n int) int {
	for n > 0 {
		b := x.busy.Load()
		free := int64(x.workers) - b
		if free <= 0 {
			return 0
		}
		got := min(int64(n), free)
		if x.busy.CompareAndSwap(b, b+got) {
			return int(got)
		}
	}
	return 0
}

// run searches the tasks on the calling goroutine and helpers more, each taking the next
// task not yet taken, all under one shared threshold. The first error stops the others: no
// task starts after it, and the running ones see their context cancelled. A panic in a
// task is reported as its error.
func (x *Searcher) run(ctx context.Context, tasks []rangeTask, p *plan, q *Query, helpers int) ([][]Hit, error) {
	var shared threshold
	results := make([][]Hit, len(tasks))
	one := func(ctx context.Context, i int) (err error) {
		t := tasks[i]
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("postings segment %s: search panicked: %v", t.sp.seg.path, r)
			}
		}()
		ws, _ := x.scratch.Get().(*windowScratch)
		if ws == nil {
			ws = &windowScratch{size: x.window}
		}
		results[i], err = searchSegment(ctx, t.sp, p, q, t.lo, t.hi, &shared, ws)
		if err == nil {
			x.scratch.Put(ws) // a search stopped midway leaves accumulators set: not reused
		}
		return err
	}
	if helpers == 0 {
		for i := range tasks {
			if err := one(ctx, i); err != nil {
				return nil, err
			}
		}
		return results, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	work := func() {
		for {
			i := int(next.Add(1) - 1)
			if i >= len(tasks) || ctx.Err() != nil {
				return
			}
			if err := one(ctx, i); err != nil {
				errOnce.Do(func() { firstErr = err; cancel() })
				return
			}
		}
	}
	for range helpers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work()
		}()
	}
	work()
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil { // cancelled by the caller between two tasks
		return nil, err
	}
	return results, nil
}

// rangeTask is one range of ordinals [lo, hi) of a segment to search.
type rangeTask struct {
	sp     *segPlan
	lo, hi uint32
}

// plan plans the query in every segment where a query term occurs, and sums the postings
// of its terms there.
func (x *Searcher) plan(p *plan) ([]*segPlan, int64, error) {
	var sps []*segPlan
	var postings int64
	for _, s := range x.segs {
		sp, err := planSegment(s, p)
		if err != nil {
			return nil, 0, err
		}
		if len(sp.terms) == 0 || s.Len() == 0 {
			continue
		}
		for _, t := range sp.terms {
			postings += int64(t.info.df)
		}
		sps = append(sps, sp)
	}
	return sps, postings, nil
}

// cut cuts the planned segments into about parts ranges of at least x.minRange passages
// each, in proportion to their sizes, and at least one range a segment.
func (x *Searcher) cut(sps []*segPlan, parts int) []rangeTask {
	total := 0
	for _, sp := range sps {
		total += sp.seg.Len()
	}
	var tasks []rangeTask
	for _, sp := range sps {
		n := sp.seg.Len()
		k := 1
		if parts > 1 {
			k = max(1, min((parts*n+total/2)/total, n/x.minRange))
		}
		for i := range k {
			lo, hi := uint32(i*n/k), uint32((i+1)*n/k)
			if i == k-1 {
				hi = exhausted // past every ordinal: the last range runs to the end
			}
			tasks = append(tasks, rangeTask{sp: sp, lo: lo, hi: hi})
		}
	}
	return tasks
}
