package postings

import (
	"context"
	"math/rand"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// zipfCorpus is a seeded synthetic collection: words drawn from a Zipf distribution over a
// vocabulary, passages of 3 to 120 tokens, keys with gaps that cross decimal digit counts,
// and some exact duplicates so that scores tie and the key order decides.
type zipfCorpus struct {
	keys []uint32
	docs [][]string
	tfs  []map[string]uint32 // per passage, each word's frequency: made once, for exhaustive
}

func zipfWord(rank uint64) string { return "w" + strconv.FormatUint(rank, 36) }

func newZipfCorpus(seed int64, n, vocab int) *zipfCorpus {
	r := rand.New(rand.NewSource(seed))
	z := rand.NewZipf(r, 1.07, 2, uint64(vocab-1))
	c := &zipfCorpus{}
	key := uint32(0)
	for i := 0; i < n; i++ {
		key += uint32(1 + r.Intn(3))
		c.keys = append(c.keys, key)
		if i > 0 && r.Intn(20) == 0 {
			c.docs = append(c.docs, slices.Clone(c.docs[r.Intn(i)]))
			continue
		}
		doc := make([]string, 3+r.Intn(118))
		for j := range doc {
			doc[j] = zipfWord(z.Uint64())
		}
		c.docs = append(c.docs, doc)
	}
	return c
}

// queries draws distinct-term queries of 1 to maxTerms words, mixing frequent and rare ones,
// plus one word absent from the collection now and then.
func (c *zipfCorpus) queries(seed int64, count, maxTerms, vocab int) [][]string {
	r := rand.New(rand.NewSource(seed))
	z := rand.NewZipf(r, 1.07, 2, uint64(vocab-1))
	var out [][]string
	for len(out) < count {
		n := 1 + r.Intn(maxTerms)
		seen := map[string]bool{}
		var q []string
		for len(q) < n {
			var w string
			switch r.Intn(10) {
			case 0:
				w = "absent" + strconv.Itoa(r.Intn(5))
			case 1, 2, 3:
				w = zipfWord(uint64(r.Intn(vocab)))
			default:
				w = zipfWord(z.Uint64())
			}
			if !seen[w] {
				seen[w] = true
				q = append(q, w)
			}
		}
		out = append(out, q)
	}
	return out
}

func (c *zipfCorpus) scoring() Scoring {
	var tokens int64
	for _, d := range c.docs {
		tokens += int64(len(d))
	}
	return Scoring{K1: 1.2, B: 0.4, Docs: int64(len(c.docs)), Tokens: tokens}
}

// build writes the passages with index i where pick(i) into a segment file under dir.
func (c *zipfCorpus) build(tb testing.TB, path string, opts BuilderOptions, pick func(i int) bool) *Segment {
	tb.Helper()
	b, err := NewBuilder(path, opts)
	if err != nil {
		tb.Fatal(err)
	}
	for i, k := range c.keys {
		if pick != nil && !pick(i) {
			continue
		}
		if err := b.Add(k, c.docs[i]); err != nil {
			tb.Fatal(err)
		}
	}
	if _, err := b.Finish(context.Background()); err != nil {
		tb.Fatal(err)
	}
	s, err := Open(path, OpenOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// exhaustive scores every passage that matches a term, the way bleve does: the reference
// the pruned search must equal.
func (c *zipfCorpus) exhaustive(q Query, sc Scoring) []Hit {
	if c.tfs == nil {
		c.tfs = make([]map[string]uint32, len(c.docs))
		for i, d := range c.docs {
			c.tfs[i] = map[string]uint32{}
			for _, w := range d {
				c.tfs[i][w]++
			}
		}
	}
	df := make([]uint64, len(q.Terms))
	for i, t := range q.Terms {
		for _, tf := range c.tfs {
			if tf[t] > 0 {
				df[i]++
			}
		}
	}
	s := &scorer{plan: newPlan(sc, q.Terms, df)}
	top := newTopK(q.K)
	contrib := make([]float64, len(q.Terms))
	matched := make([]bool, len(q.Terms))
	for di, d := range c.docs {
		key := c.keys[di]
		if (q.Allow != nil && !q.Allow(key)) || (q.Deleted != nil && q.Deleted.Has(key)) {
			continue
		}
		count := 0
		for i, t := range q.Terms {
			f := c.tfs[di][t]
			contrib[i], matched[i] = 0, f > 0
			if f > 0 {
				contrib[i] = s.contribution(i, f, uint32(len(d)))
				count++
			}
		}
		if count > 0 {
			top.offer(Hit{Key: key, Score: s.total(contrib, matched, count)})
		}
	}
	return top.sorted()
}

func tempPath(tb testing.TB, name string) string { return filepath.Join(tb.TempDir(), name) }
