package postings

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
)

// SearcherOptions configure a Searcher. The zero value is ready to use.
type SearcherOptions struct {
	// Workers bounds how many goroutines search one query at once. Default GOMAXPROCS; 1
	// searches the segments one after the other on the calling goroutine. Above 1 the
	// segments are cut into ordinal ranges of at least MinRange passages, about Workers in
	// all, searched in parallel: one query uses every core even on a single segment.
	Workers int
	// MinRange is the fewest passages a range is cut to (default DefaultMinRange): below it
	// the fixed cost of a range (a cursor per term, its own first K hits) outweighs the gain.
	MinRange int
}

// DefaultMinRange is SearcherOptions.MinRange's default.
const DefaultMinRange = 1 << 15

// Searcher searches a set of segments (the shards of one collection) as one index: document
// frequencies are summed over the segments, the collection statistics come from the caller,
// each segment is searched in parallel for its own top K, and the union is cut to the K
// best, so the hits equal those of a single segment holding every passage.
type Searcher struct {
	segs     []*Segment
	workers  int
	minRange int
	scratch  sync.Pool // *windowScratch: a range search's accumulators, kept between queries
	window   int       // ordinals per inner window: innerWindow, but in tests
}

// NewSearcher returns a Searcher over segs, which must hold disjoint passage keys. It does
// not take ownership: the caller closes the segments after the searches.
func NewSearcher(segs []*Segment, opts SearcherOptions) (*Searcher, error) {
	if opts.Workers < 0 || opts.MinRange < 0 {
		return nil, fmt.Errorf("postings searcher: negative workers %d or range %d", opts.Workers, opts.MinRange)
	}
	if opts.Workers == 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	if opts.MinRange == 0 {
		opts.MinRange = DefaultMinRange
	}
	return &Searcher{segs: slices.Clone(segs), workers: opts.Workers, minRange: opts.MinRange}, nil
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
	tasks, err := x.ranges(p)
	if err != nil {
		return nil, err
	}
	var shared threshold

	results := make([][]Hit, len(tasks))
	errs := make([]error, len(tasks))
	run := func(i int) {
		t := tasks[i]
		defer func() {
			if r := recover(); r != nil {
				errs[i] = fmt.Errorf("postings segment %s: search panicked: %v", t.sp.seg.path, r)
			}
		}()
		ws, _ := x.scratch.Get().(*windowScratch)
		if ws == nil {
			ws = &windowScratch{size: x.window}
		}
		results[i], errs[i] = searchSegment(ctx, t.sp, p, &q, t.lo, t.hi, &shared, ws)
		if errs[i] == nil {
			x.scratch.Put(ws) // a search stopped midway leaves accumulators set: not reused
		}
	}
	if x.workers == 1 || len(tasks) == 1 {
		for i := range tasks {
			run(i)
			if errs[i] != nil {
				return nil, errs[i]
			}
		}
	} else {
		sem := make(chan struct{}, x.workers)
		var wg sync.WaitGroup
		for i := range tasks {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer func() { <-sem; wg.Done() }()
				run(i)
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return nil, err
			}
		}
	}
	top := newTopK(q.K)
	for _, hs := range results {
		for _, h := range hs {
			top.offer(h)
		}
	}
	return top.sorted(), nil
}

// rangeTask is one range of ordinals [lo, hi) of a segment to search.
type rangeTask struct {
	sp     *segPlan
	lo, hi uint32
}

// ranges plans the query in every segment and cuts the segments into about x.workers ranges
// of at least x.minRange passages each, in proportion to their sizes (one range a segment
// with one worker). Segments where no query term occurs are left out.
func (x *Searcher) ranges(p *plan) ([]rangeTask, error) {
	total := 0
	for _, s := range x.segs {
		total += s.Len()
	}
	var tasks []rangeTask
	for _, s := range x.segs {
		sp, err := planSegment(s, p)
		if err != nil {
			return nil, err
		}
		if len(sp.terms) == 0 || s.Len() == 0 {
			continue
		}
		parts := 1
		if x.workers > 1 {
			parts = max(1, min((x.workers*s.Len()+total/2)/total, s.Len()/x.minRange))
		}
		for i := range parts {
			lo, hi := uint32(i*s.Len()/parts), uint32((i+1)*s.Len()/parts)
			if i == parts-1 {
				hi = exhausted // past every ordinal: the last range runs to the end
			}
			tasks = append(tasks, rangeTask{sp: sp, lo: lo, hi: hi})
		}
	}
	return tasks, nil
}
