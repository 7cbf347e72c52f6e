package langanalysis

import (
	"fmt"
	"sync"

	"github.com/blevesearch/bleve/v2/analysis"
)

// Multilingual is the analyzer name an index records when its passages are in several
// languages: each passage is analysed with the analyzer of its own language (For), and its
// terms are tagged with that language (Tag), so that "die" in German and "die" in English are
// two terms with their own document frequencies, as two single-language indexes would have
// them. Queries are analysed once per language searched, each analysis tagged alike.
const Multilingual = "multilingual"

// tagSep separates a language from a term in a tagged term. Language codes never contain it,
// so "fr:de:x" (a French token "de:x", which UAX #29 keeps whole) cannot be read as German.
const tagSep = ":"

// Passages analyses passages as an index of the given analyzer name does: with that analyzer
// for a single-language index (the language of a passage is then ignored, and terms are not
// tagged, so a single-language index is unchanged), or, for Multilingual, with the analyzer
// of each passage's language, its terms tagged (Tag). Safe for concurrent use.
type Passages struct {
	single *termer // nil when multilingual
	mu     sync.Mutex
	byLang map[string]*termer // multilingual: by normalized language code, terms tagged
	caches chan struct{}      // the term caches of all the analyses (termCaches)
}

// NewPassages returns the passage analysis of the analyzer name a manifest records.
func NewPassages(name string) (*Passages, error) {
	if name == Multilingual {
		return &Passages{byLang: map[string]*termer{}, caches: make(chan struct{}, termCaches)}, nil
	}
	a, err := New(name)
	if err != nil {
		return nil, err
	}
	return &Passages{single: newTermer(a, "", make(chan struct{}, termCaches))}, nil
}

// Multilingual reports whether terms are tagged with their language.
func (p *Passages) Multilingual() bool { return p.single == nil }

// analyzer returns the analysis of language (normalized), built on first use.
func (p *Passages) analyzer(language string) (*termer, error) {
	if language == "" {
		return nil, fmt.Errorf("a multilingual index needs the language of every passage")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if a, ok := p.byLang[language]; ok {
		return a, nil
	}
	a, err := New(For(language).Analyzer)
	if err != nil {
		return nil, err
	}
	t := newTermer(a, language+tagSep, p.caches)
	p.byLang[language] = t
	return t, nil
}

// Analyze returns the tokens of text in language, terms tagged when multilingual. The
// tokens' Term bytes are the caller's.
func (p *Passages) Analyze(language string, text []byte) (analysis.TokenStream, error) {
	if p.single != nil {
		return p.single.a.Analyze(text), nil
	}
	a, err := p.analyzer(Normalize(language))
	if err != nil {
		return nil, err
	}
	toks := a.a.Analyze(text)
	for _, t := range toks {
		t.Term = append([]byte(a.prefix), t.Term...)
	}
	return toks, nil
}

// Terms appends to dst the terms of text in language and returns it: the Term of each token
// Analyze returns, in order, as strings, tagged when multilingual. It is Analyze for callers
// that need the terms alone (postings and their counts), faster: for the analyzers whose
// filters each look at one token (English and Standard among them) it looks each token's
// terms up in a cache by the token's text, and makes no tokens and no copy of text. The
// strings may be shared with other calls' results.
func (p *Passages) Terms(language, text string, dst []string) ([]string, error) {
	t, err := p.termer(language)
	if err != nil {
		return nil, err
	}
	return t.terms(text, dst), nil
}

// termer returns the analysis of passages in language: the single one, or the language's.
func (p *Passages) termer(language string) (*termer, error) {
	if p.single != nil {
		return p.single, nil
	}
	return p.analyzer(Normalize(language))
}

// For returns an analysis.Analyzer of the passages of one language (for engines that hand an
// analyzer to their index, bleve): the single analyzer, or the language's, tagging its terms.
func (p *Passages) For(language string) (analysis.Analyzer, error) {
	if p.single != nil {
		return p.single.a, nil
	}
	a, err := p.analyzer(Normalize(language))
	if err != nil {
		return nil, err
	}
	return tagging{a: a.a, prefix: []byte(a.prefix)}, nil
}

// tagging is an analyzer whose terms are tagged with a language.
type tagging struct {
	a      analysis.Analyzer
	prefix []byte
}

func (t tagging) Analyze(text []byte) analysis.TokenStream {
	toks := t.a.Analyze(text)
	for _, tok := range toks {
		tok.Term = append(append(make([]byte, 0, len(t.prefix)+len(tok.Term)), t.prefix...), tok.Term...)
	}
	return toks
}

// QueryTerms analyses a query for each of languages (ignored by a single-language index) and
// returns the distinct terms, tagged when multilingual: one clause set per language, so that
// each passage is matched by its own language's analysis of the query and scored with the
// exact statistics of its own terms.
func (p *Passages) QueryTerms(text string, languages []string) ([]string, error) {
	var out []string
	seen := map[string]struct{}{}
	add := func(toks analysis.TokenStream) {
		for _, t := range toks {
			s := string(t.Term)
			if _, ok := seen[s]; ok {
				continue
			}
			seen[s] = struct{}{}
			out = append(out, s)
		}
	}
	if p.single != nil {
		add(p.single.a.Analyze([]byte(text)))
		return out, nil
	}
	for _, l := range languages {
		toks, err := p.Analyze(l, []byte(text))
		if err != nil {
			return nil, err
		}
		add(toks)
	}
	return out, nil
}

// Analyst is one goroutine's use of a Passages' Terms: it keeps each term cache it takes
// until Close, where Passages.Terms takes one for each text and puts it back. A cache is a
// few megabytes read at random; kept by one goroutine, it stays in the memory cache of the
// core that runs it, instead of passing from core to core with every text. Not safe for
// concurrent use; Close it when done, or its caches are lost to the Passages' budget.
type Analyst struct {
	p    *Passages
	held map[*termer]*termCache
}

// Analyst returns an analyst of p.
func (p *Passages) Analyst() *Analyst {
	return &Analyst{p: p, held: map[*termer]*termCache{}}
}

// Terms is Passages.Terms, through the analyst's caches.
func (a *Analyst) Terms(language, text string, dst []string) ([]string, error) {
	t, err := a.p.termer(language)
	if err != nil {
		return nil, err
	}
	c, ok := a.held[t]
	if !ok && t.filters != nil {
		c = t.cache() // nil when the budget is spent
		a.held[t] = c
	}
	return t.termsWith(c, text, dst), nil
}

// Close gives the analyst's caches back to the Passages.
func (a *Analyst) Close() {
	for t, c := range a.held {
		if c != nil {
			t.free <- c
		}
	}
	clear(a.held)
}
