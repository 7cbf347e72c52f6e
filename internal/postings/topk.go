package postings

import (
	"container/heap"
	"slices"
	"strconv"
)

// keyLess reports whether key a ranks before key b among equal scores. Kairos breaks ties
// by passage key compared as decimal strings ("10" before "9"), as bleve sorts its _id
// (search/ties.go); the same order here keeps rankings identical.
func keyLess(a, b uint32) bool {
	var ba, bb [10]byte
	return string(strconv.AppendUint(ba[:0], uint64(a), 10)) < string(strconv.AppendUint(bb[:0], uint64(b), 10))
}

// better reports whether a ranks before b: higher score, then keyLess.
func better(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return keyLess(a.Key, b.Key)
}

// topK keeps the k best hits; its heap has the worst at the root.
type topK struct {
	k int
	h []Hit
}

func newTopK(k int) *topK { return &topK{k: k, h: make([]Hit, 0, min(k, 1<<16))} }

func (t *topK) Len() int           { return len(t.h) }
func (t *topK) Less(i, j int) bool { return better(t.h[j], t.h[i]) }
func (t *topK) Swap(i, j int)      { t.h[i], t.h[j] = t.h[j], t.h[i] }
func (t *topK) Push(x any)         { t.h = append(t.h, x.(Hit)) }
func (t *topK) Pop() any {
	x := t.h[len(t.h)-1]
	t.h = t.h[:len(t.h)-1]
	return x
}

func (t *topK) full() bool { return len(t.h) >= t.k }
func (t *topK) worst() Hit { return t.h[0] }

// offer adds h if it ranks among the k best so far, and reports whether it did.
func (t *topK) offer(h Hit) bool {
	if !t.full() {
		heap.Push(t, h)
		return true
	}
	if !better(h, t.h[0]) {
		return false
	}
	t.h[0] = h
	heap.Fix(t, 0)
	return true
}

// sorted returns the hits best first.
func (t *topK) sorted() []Hit {
	out := slices.Clone(t.h)
	slices.SortFunc(out, func(a, b Hit) int {
		if better(a, b) {
			return -1
		}
		if better(b, a) {
			return 1
		}
		return 0
	})
	return out
}
