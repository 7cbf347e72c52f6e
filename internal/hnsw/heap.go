package hnsw

// item is a node id with its similarity to the query.
type item struct {
	score float32
	id    uint32
}

// minHeap pops the lowest score first (the result set, whose top is the worst kept result).
// maxHeap pops the highest score first (the candidate queue); it is the same heap over negated
// scores, which is exact for floats and keeps one sift implementation. Both are hand-written
// over a concrete slice: container/heap would box every element in an interface and cost an
// indirect call per comparison.
type maxHeap []item

func (h *maxHeap) push(it item) {
	it.score = -it.score
	(*minHeap)(h).push(it)
}

func (h *maxHeap) pop() item {
	it := (*minHeap)(h).pop()
	it.score = -it.score
	return it
}

type minHeap []item

func (h *minHeap) push(it item) {
	s := append(*h, it)
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s[p].score <= s[i].score {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
	*h = s
}

func (h *minHeap) pop() item {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		c := l
		if r := l + 1; r < n && s[r].score < s[l].score {
			c = r
		}
		if s[i].score <= s[c].score {
			break
		}
		s[i], s[c] = s[c], s[i]
		i = c
	}
	*h = s
	return top
}
