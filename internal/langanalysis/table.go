package langanalysis

import (
	"fmt"
	"sort"
	"strings"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/standard"
	"github.com/blevesearch/bleve/v2/analysis/lang/ar"
	"github.com/blevesearch/bleve/v2/analysis/lang/bg"
	"github.com/blevesearch/bleve/v2/analysis/lang/ca"
	"github.com/blevesearch/bleve/v2/analysis/lang/cjk"
	"github.com/blevesearch/bleve/v2/analysis/lang/ckb"
	"github.com/blevesearch/bleve/v2/analysis/lang/cs"
	"github.com/blevesearch/bleve/v2/analysis/lang/da"
	"github.com/blevesearch/bleve/v2/analysis/lang/de"
	"github.com/blevesearch/bleve/v2/analysis/lang/el"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/lang/es"
	"github.com/blevesearch/bleve/v2/analysis/lang/eu"
	"github.com/blevesearch/bleve/v2/analysis/lang/fa"
	"github.com/blevesearch/bleve/v2/analysis/lang/fi"
	"github.com/blevesearch/bleve/v2/analysis/lang/fr"
	"github.com/blevesearch/bleve/v2/analysis/lang/ga"
	"github.com/blevesearch/bleve/v2/analysis/lang/gl"
	"github.com/blevesearch/bleve/v2/analysis/lang/hi"
	"github.com/blevesearch/bleve/v2/analysis/lang/hr"
	"github.com/blevesearch/bleve/v2/analysis/lang/hu"
	"github.com/blevesearch/bleve/v2/analysis/lang/hy"
	"github.com/blevesearch/bleve/v2/analysis/lang/id"
	"github.com/blevesearch/bleve/v2/analysis/lang/it"
	"github.com/blevesearch/bleve/v2/analysis/lang/nl"
	"github.com/blevesearch/bleve/v2/analysis/lang/no"
	"github.com/blevesearch/bleve/v2/analysis/lang/pl"
	"github.com/blevesearch/bleve/v2/analysis/lang/pt"
	"github.com/blevesearch/bleve/v2/analysis/lang/ro"
	"github.com/blevesearch/bleve/v2/analysis/lang/ru"
	"github.com/blevesearch/bleve/v2/analysis/lang/sv"
	"github.com/blevesearch/bleve/v2/analysis/lang/tr"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/token/porter"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/registry"
)

// Standard is the analyzer of languages without one of their own: bleve's standard analyzer
// (Unicode word segmentation, lower case, English stop words, no stemming).
const Standard = standard.Name

// English is the analyzer of indexes that record no language (manifests before languages
// were recorded, and inputs whose language cannot be detected).
const English = en.AnalyzerName

// spec says how to build the analyzer of one language.
type spec struct {
	analyzer string // bleve's registered analyzer, or the name of the chain below
	// A chain of bleve's Unicode tokenizer, an elision filter (when set), lower case and
	// the stop filter, for languages bleve ships only stop words for.
	stop, elision string
	stem          func([]rune) []rune // Kairos's own stemmer, after the chain (Bulgarian)
}

// lookup is the table of languages. Codes are Wikipedia's (ISO 639-1 where there is one).
// It is a switch rather than a package map so that nothing mutable is global.
func lookup(code string) (spec, bool) {
	switch code {
	case "ar":
		return spec{analyzer: ar.AnalyzerName}, true
	case "bg":
		return spec{analyzer: "bg", stop: bg.StopName, stem: stemBulgarian}, true
	case "ca":
		return spec{analyzer: "ca", stop: ca.StopName, elision: ca.ElisionName}, true
	case "zh", "ja", "ko":
		return spec{analyzer: cjk.AnalyzerName}, true
	case "ckb":
		return spec{analyzer: ckb.AnalyzerName}, true
	case "cs":
		return spec{analyzer: "cs", stop: cs.StopName}, true
	case "da":
		return spec{analyzer: da.AnalyzerName}, true
	case "de":
		return spec{analyzer: de.AnalyzerName}, true
	case "el":
		return spec{analyzer: "el", stop: el.StopName}, true
	case "en", "simple":
		return spec{analyzer: en.AnalyzerName}, true
	case "es":
		return spec{analyzer: es.AnalyzerName}, true
	case "eu":
		return spec{analyzer: "eu", stop: eu.StopName}, true
	case "fa":
		return spec{analyzer: fa.AnalyzerName}, true
	case "fi":
		return spec{analyzer: fi.AnalyzerName}, true
	case "fr":
		return spec{analyzer: fr.AnalyzerName}, true
	case "ga":
		return spec{analyzer: "ga", stop: ga.StopName, elision: ga.ElisionName}, true
	case "gl":
		return spec{analyzer: "gl", stop: gl.StopName}, true
	case "hi":
		return spec{analyzer: hi.AnalyzerName}, true
	case "hr":
		return spec{analyzer: hr.AnalyzerName}, true
	case "hu":
		return spec{analyzer: hu.AnalyzerName}, true
	case "hy":
		return spec{analyzer: "hy", stop: hy.StopName}, true
	case "id":
		return spec{analyzer: "id", stop: id.StopName}, true
	case "it":
		return spec{analyzer: it.AnalyzerName}, true
	case "nl":
		return spec{analyzer: nl.AnalyzerName}, true
	case "no", "nb":
		return spec{analyzer: no.AnalyzerName}, true
	case "pl":
		return spec{analyzer: pl.AnalyzerName}, true
	case "pt":
		return spec{analyzer: pt.AnalyzerName}, true
	case "ro":
		return spec{analyzer: ro.AnalyzerName}, true
	case "ru":
		return spec{analyzer: ru.AnalyzerName}, true
	case "sv":
		return spec{analyzer: sv.AnalyzerName}, true
	case "tr":
		return spec{analyzer: tr.AnalyzerName}, true
	}
	return spec{}, false
}

// languages lists every code lookup knows, for help texts and tests.
func languages() []string {
	return []string{"ar", "bg", "ca", "ckb", "cs", "da", "de", "el", "en", "es", "eu", "fa", "fi",
		"fr", "ga", "gl", "hi", "hr", "hu", "hy", "id", "it", "ja", "ko", "nb", "nl", "no", "pl",
		"pt", "ro", "ru", "simple", "sv", "tr", "zh"}
}

// Languages returns the language codes with an analyzer of their own, sorted.
func Languages() []string {
	l := languages()
	sort.Strings(l)
	return l
}

// Normalize lower-cases a language code and drops a region or script ("pt-BR" -> "pt",
// "zh_Hant" -> "zh"), which no analyzer depends on.
func Normalize(code string) string {
	code = strings.ToLower(strings.TrimSpace(code))
	if i := strings.IndexAny(code, "-_"); i > 0 {
		code = code[:i]
	}
	return code
}

// Choice is the analyzer chosen for a language.
type Choice struct {
	Language string `json:"language"` // normalized code; "" when none was known
	Analyzer string `json:"analyzer"` // the name New builds it from
	// Fallback is true when the language has no analyzer of its own and gets Standard.
	Fallback bool `json:"fallback,omitempty"`
}

// For returns the analyzer of a language code (see Normalize); unknown codes get Standard.
func For(language string) Choice {
	code := Normalize(language)
	if s, ok := lookup(code); ok {
		return Choice{Language: code, Analyzer: s.analyzer}
	}
	return Choice{Language: code, Analyzer: Standard, Fallback: true}
}

// chain returns the bleve custom-analyzer definition of a stop-words-only language, or nil
// when name is an analyzer bleve registers itself.
func chain(name string) (map[string]interface{}, *spec) {
	s, ok := lookup(name)
	if !ok || s.stop == "" {
		return nil, nil
	}
	filters := []interface{}{}
	if s.elision != "" {
		filters = append(filters, s.elision)
	}
	filters = append(filters, lowercase.Name, s.stop)
	return map[string]interface{}{"type": custom.Name, "tokenizer": unicode.Name, "token_filters": filters}, &s
}

// MappingDefinition returns the bleve custom-analyzer definition an index mapping needs to
// name analyzer name, or nil when bleve registers name itself. Kairos's Bulgarian stemmer
// cannot be named in a bleve mapping (only registered filters can, and Kairos registers
// nothing globally), so the mapping's "bg" stops before stemming; Kairos never lets bleve
// analyse text (it passes New's analyzer to each document and queries with term queries),
// so the mapping's copy is only a description.
func MappingDefinition(name string) map[string]interface{} {
	def, _ := chain(name)
	return def
}

// New builds the analyzer recorded under name (a Choice.Analyzer; "" means English, what
// indexes recorded before languages were). Each call builds its own; analyzers are safe
// for concurrent use.
func New(name string) (analysis.Analyzer, error) {
	if name == "" {
		name = English
	}
	cache := registry.NewCache()
	def, s := chain(name)
	var a analysis.Analyzer
	var err error
	if def == nil {
		a, err = cache.AnalyzerNamed(name)
	} else {
		a, err = cache.DefineAnalyzer(name, def)
	}
	if err != nil {
		return nil, fmt.Errorf("analyzer %q: %w", name, err)
	}
	d, ok := a.(*analysis.DefaultAnalyzer)
	if !ok {
		if s != nil && s.stem != nil {
			return nil, fmt.Errorf("analyzer %q: unexpected type %T", name, a)
		}
		return a, nil
	}
	c := *d
	if _, ok := c.Tokenizer.(*unicode.UnicodeTokenizer); ok {
		c.Tokenizer = newASCIITokenizer() // the same tokens, faster (asciitok.go)
	}
	if s != nil && s.stem != nil {
		c.TokenFilters = append(append([]analysis.TokenFilter(nil), d.TokenFilters...), stemFilter(s.stem))
	}
	if n := len(c.TokenFilters); n > 0 {
		// Last, so that no filter after it writes to the stems it shares (stemcache.go).
		if _, ok := c.TokenFilters[n-1].(*porter.PorterStemmer); ok {
			c.TokenFilters = append(c.TokenFilters[:n-1:n-1], &cachedPorter{})
		}
	}
	return &c, nil
}

// stemFilter applies a stemmer to every token.
type stemFilter func([]rune) []rune

func (f stemFilter) Filter(in analysis.TokenStream) analysis.TokenStream {
	for _, t := range in {
		if t.KeyWord {
			continue
		}
		t.Term = []byte(string(f([]rune(string(t.Term)))))
	}
	return in
}
