package langanalysis

import (
	"bytes"
	"sync"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/go-porterstemmer"
)

// cachedPorter is bleve's Porter stemmer filter (token/porter) with a cache of the stems it
// made: words follow Zipf's law, so most tokens of a passage were stemmed a moment ago, and
// stemming (with its rune conversions) was 17% of a postings build's CPU. The result is the
// filter's, by construction: a stem is a function of the term alone.
type cachedPorter struct {
	caches sync.Pool // of *stemCache, one per goroutine at a time
}

var _ analysis.TokenFilter = (*cachedPorter)(nil)

type stemCache map[string][]byte

// stemCacheSize bounds a cache (a few megabytes); a full cache is emptied and refilled.
const stemCacheSize = 1 << 15

func (f *cachedPorter) Filter(input analysis.TokenStream) analysis.TokenStream {
	c, _ := f.caches.Get().(*stemCache)
	if c == nil {
		m := make(stemCache, 1024)
		c = &m
	}
	for _, t := range input {
		if t.KeyWord {
			continue
		}
		if s, ok := (*c)[string(t.Term)]; ok {
			t.Term = s // shared: the stem is never written to downstream
			continue
		}
		key := string(t.Term)
		t.Term = analysis.BuildTermFromRunes(porterstemmer.StemWithoutLowerCasing(bytes.Runes(t.Term)))
		if len(*c) >= stemCacheSize {
			clear(*c)
		}
		(*c)[key] = t.Term
	}
	f.caches.Put(c)
	return input
}
