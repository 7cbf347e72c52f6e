package langanalysis

import (
	"hash/maphash"
	"strings"
	"unsafe"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/token/elision"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/token/porter"
	"github.com/blevesearch/bleve/v2/analysis/token/stop"
)

// termer gives the terms of an analyzer's tokens (Passages.Terms). When every filter of the
// analyzer's chain turns one token into at most one, looking at that token alone (English,
// Standard and the stop-word chains), the terms of a token depend on its text and nothing
// else: they are computed once, through the same filters, and looked up by the token's text
// afterwards. Possessive, lower case, stop words and the cached Porter stemmer each read or
// build strings of their own (together 21% of a postings build's CPU on synthetic English, two
// fifths of that in the stem cache's map lookups); one lookup replaces them, and the tokens
// are never made.
type termer struct {
	a      analysis.Analyzer // the whole analysis, for analyzers outside the cache
	prefix string            // a multilingual index's language tag (Tag), or ""
	// tok and filters are the analyzer's, set only when every filter is token-local
	// (localFilters); nil filters send every text through a.
	tok     asciiTokenizer
	filters []analysis.TokenFilter
	// free holds the caches not in use; budget counts the caches of all the termers of a
	// Passages, which keep them for their lifetime. A text that finds no cache free and
	// none left to make goes through a.
	free   chan *termCache
	budget chan struct{}
}

// termCaches bounds the caches of a Passages (8 of 3 MB): one per goroutine analysing at
// once, up to that; beyond it, and for the languages of a multilingual index that come
// after it is spent, texts are analysed without one.
const termCaches = 8

// termCache maps a token's text to its term, or to none when a filter dropped it (a stop
// word). It is two-way set-associative: a token may sit in either slot of the pair its hash
// picks, and a new token takes the one used less recently. A slot holds its token's text
// itself, so that a hit reads one cache line and no string elsewhere: a map of the same
// entries with a bound spent more in its lookups than the cache saved. On 300,000 synthetic
// passages (24.4M tokens) a direct-mapped cache of these 65,536 slots missed 9.7% of the
// tokens, this one 6.2%, one of twice the slots 3.3%.
type termCache struct {
	seed    maphash.Seed
	slots   [termCacheSize]termSlot
	toks    []pendingToken // termsWith's scratch: its text's tokens (they alias the text)
	touched uint8          // readAhead's sum of what it read
	// analyseToken's scratch: the token, its stream and the terms it made
	text   []byte
	tok    analysis.Token
	stream [1]*analysis.Token
	out    []string
}

// pendingToken is a token of a text, read before any is looked up.
type pendingToken struct {
	term []byte
	typ  analysis.TokenType
	pair uint32 // the first slot of its pair, when the token fits a slot
}

// termSlot is one token's entry (48 bytes).
type termSlot struct {
	text  [termTextMax]byte // the token's text, its first n bytes
	n     uint8             // 0: an empty slot (no token is empty)
	drop  bool              // the filters dropped the token
	older bool              // the other slot of the pair was used since this one
	term  string
}

// termTextMax is the longest token text a slot holds; a longer token is analysed every time.
const termTextMax = 24

// termCacheSize is the slots of a cache (3 MB).
const termCacheSize = 1 << 16

// readAhead sets the pair of each pending token that fits a slot and reads the pairs ahead.
// A token's lookup waits on its pair, a miss in a cache larger than the core's own, and one
// lookup's miss waits on the one before it; in a short loop whose reads do not depend on one
// another the processor overlaps the misses, and the lookups then find the pairs in its cache
// (as the postings vocabulary reads ahead).
func (c *termCache) readAhead() {
	var touched uint8
	for i := range c.toks {
		p := &c.toks[i]
		if len(p.term) <= termTextMax {
			p.pair = uint32(maphash.Bytes(c.seed, p.term) & (termCacheSize - 2))
		}
	}
	for _, p := range c.toks {
		touched += c.slots[p.pair].n + c.slots[p.pair+1].n
	}
	c.touched = touched // so that the reads above are not dropped as unused
}

// lookupAt returns the slot of term, whose pair starts at slot i, and whether it holds term;
// when not, the slot is the pair's less recently used one, marked used.
func (c *termCache) lookupAt(i uint32, term []byte) (*termSlot, bool) {
	a, b := &c.slots[i], &c.slots[i+1]
	switch {
	case int(a.n) == len(term) && string(a.text[:len(term)]) == string(term):
	case int(b.n) == len(term) && string(b.text[:len(term)]) == string(term):
		a, b = b, a
	default:
		if !a.older {
			a, b = b, a
		}
		a.older, b.older = false, true
		return a, false
	}
	a.older, b.older = false, true
	return a, true
}

func newTermer(a analysis.Analyzer, prefix string, budget chan struct{}) *termer {
	t := &termer{a: a, prefix: prefix, free: make(chan *termCache, cap(budget)), budget: budget}
	d, ok := a.(*analysis.DefaultAnalyzer)
	if !ok || len(d.CharFilters) > 0 {
		return t
	}
	tok, ok := d.Tokenizer.(asciiTokenizer)
	if !ok {
		return t
	}
	if fs, ok := localFilters(d.TokenFilters); ok {
		t.tok, t.filters = tok, fs
	}
	return t
}

// localFilters returns filters when each is known to map a token to at most one token from
// that token alone (not its neighbours, position or type), the cached stemmer replaced by
// the plain one (the term cache makes its own cache redundant); false otherwise.
func localFilters(filters []analysis.TokenFilter) ([]analysis.TokenFilter, bool) {
	out := make([]analysis.TokenFilter, 0, len(filters))
	for _, f := range filters {
		switch f.(type) {
		case *cachedPorter:
			out = append(out, porter.NewPorterStemmer())
		case *en.PossessiveFilter, *elision.ElisionFilter, *lowercase.LowerCaseFilter,
			*stop.StopTokensFilter, *porter.PorterStemmer, stemFilter:
			out = append(out, f)
		default:
			return nil, false
		}
	}
	return out, true
}

// terms appends the terms of text's tokens to dst, tagged with prefix, through a cache taken
// for this text alone.
func (t *termer) terms(text string, dst []string) []string {
	var c *termCache
	if t.filters != nil {
		c = t.cache()
	}
	dst = t.termsWith(c, text, dst)
	if c != nil {
		t.free <- c // never blocks: the channel holds as many as the budget
	}
	return dst
}

// termsWith is terms through the cache c, which the caller holds; without one (nil: the
// analyzer is not cached, or the budget is spent) through the whole analysis.
func (t *termer) termsWith(c *termCache, text string, dst []string) []string {
	if c == nil {
		return t.analysed([]byte(text), dst) // a copy: filters write to their tokens' bytes
	}
	// Read in place: the tokenizers only slice their input, and analyseToken copies a
	// token before the filters see it.
	c.toks = c.toks[:0]
	t.tok.each(unsafe.Slice(unsafe.StringData(text), len(text)), func(term []byte, _, _ int, typ analysis.TokenType) {
		c.toks = append(c.toks, pendingToken{term: term, typ: typ})
	})
	c.readAhead()
	for _, p := range c.toks {
		if len(p.term) > termTextMax {
			dst = append(dst, t.analyseToken(c, p.term, p.typ)...)
			continue
		}
		s, ok := c.lookupAt(p.pair, p.term)
		if !ok {
			ts := t.analyseToken(c, p.term, p.typ)
			if len(ts) > 1 { // no filter localFilters lets through makes two: not cached
				dst = append(dst, ts...)
				continue
			}
			*s = termSlot{n: uint8(len(p.term)), drop: len(ts) == 0}
			copy(s.text[:], p.term)
			if len(ts) == 1 {
				s.term = ts[0]
			}
		}
		if !s.drop {
			dst = append(dst, s.term)
		}
	}
	return dst
}

// cache returns a cache free or a new one, nil when the budget is spent.
func (t *termer) cache() *termCache {
	select {
	case c := <-t.free:
		return c
	default:
	}
	select {
	case t.budget <- struct{}{}:
		return &termCache{seed: maphash.MakeSeed()}
	default:
		return nil
	}
}

// analyseToken runs the filters over a stream of the one token. The terms are c's until its
// next call.
func (t *termer) analyseToken(c *termCache, term []byte, typ analysis.TokenType) []string {
	c.text = append(c.text[:0], term...) // a filter may write to it (lower case does)
	c.tok = analysis.Token{Term: c.text, End: len(term), Position: 1, Type: typ}
	c.stream[0] = &c.tok
	s := analysis.TokenStream(c.stream[:])
	for _, f := range t.filters {
		s = f.Filter(s)
	}
	c.out = c.out[:0]
	for _, tok := range s {
		c.out = append(c.out, t.prefix+string(tok.Term))
	}
	return c.out
}

// analysed is terms through the whole analysis: the terms in one string, sliced (two
// allocations a text instead of one a token).
func (t *termer) analysed(text []byte, dst []string) []string {
	toks := t.a.Analyze(text)
	n := 0
	for _, tok := range toks {
		n += len(t.prefix) + len(tok.Term)
	}
	var all strings.Builder
	all.Grow(n)
	for _, tok := range toks {
		all.WriteString(t.prefix)
		all.Write(tok.Term)
	}
	s, off := all.String(), 0
	for _, tok := range toks {
		end := off + len(t.prefix) + len(tok.Term)
		dst = append(dst, s[off:end])
		off = end
	}
	return dst
}
