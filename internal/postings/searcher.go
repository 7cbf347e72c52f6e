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
	// Workers bounds how many segments are searched at once. Default GOMAXPROCS; 1 searches
	// them one after the other on the calling goroutine.
	Workers int
}

// Searcher searches a set of segments (the shards of one collection) as one index: document
// frequencies are summed over the segments, the collection statistics come from the caller,
// each segment is searched in parallel for its own top K, and the union is cut to the K
// best, so the hits equal those of a single segment holding every passage.
type Searcher struct {
	segs    []*Segment
	workers int
}

// NewSearcher returns a Searcher over segs, which must hold disjoint passage keys. It does
// not take ownership: the caller closes the segments after the searches.
func NewSearcher(segs []*Segment, opts SearcherOptions) (*Searcher, error) {
	if opts.Workers < 0 {
		return nil, fmt.Errorf("postings searcher: negative workers %d", opts.Workers)
	}
	if opts.Workers == 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	return &Searcher{segs: slices.Clone(segs), workers: opts.Workers}, nil
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
	results := make([][]Hit, len(x.segs))
	errs := make([]error, len(x.segs))
	run := func(i int) {
		defer func() {
			if r := recover(); r != nil {
				errs[i] = fmt.Errorf("postings segment %s: search panicked: %v", x.segs[i].path, r)
			}
		}()
		results[i], errs[i] = searchSegment(ctx, x.segs[i], p, &q)
	}
	if x.workers == 1 || len(x.segs) == 1 {
		for i := range x.segs {
			run(i)
			if errs[i] != nil {
				return nil, errs[i]
			}
		}
	} else {
		sem := make(chan struct{}, x.workers)
		var wg sync.WaitGroup
		for i := range x.segs {
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
