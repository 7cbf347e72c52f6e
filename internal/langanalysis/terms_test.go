package langanalysis

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/kairos-rag/kairos/internal/sharedtest"
)

// termsCases are the analyses Terms is held to Analyze over: local says whether their terms
// come from the term cache (every filter token-local) or through the whole analysis.
var termsCases = []struct {
	analyzer, language string
	local              bool
}{
	{English, "", true},
	{Standard, "", true},
	{"ca", "", true}, // elision, lower case, stop words
	{"bg", "", true}, // Kairos's own stemmer after the chain
	{"fr", "", false},
	{"de", "", false},
	{Multilingual, "en", true},
	{Multilingual, "fr", false},
	{Multilingual, "pt-BR", false},
	{Multilingual, "xx", true}, // no analyzer of its own: Standard
}

// compareTerms checks that Terms gives the terms of Analyze's tokens, in order.
func compareTerms(t testing.TB, p *Passages, language string, text []byte) {
	t.Helper()
	if err := termsDiffer(p, language, text); err != nil {
		t.Fatal(err)
	}
}

// termsDiffer is compareTerms's check, as an error.
func termsDiffer(p *Passages, language string, text []byte) error {
	return termsOfDiffer(p, p.Terms, language, text)
}

// termsOfDiffer checks that terms (Passages.Terms or an Analyst's) gives the terms of
// Analyze's tokens, in order.
func termsOfDiffer(p *Passages, terms func(language, text string, dst []string) ([]string, error), language string, text []byte) error {
	toks, err := p.Analyze(language, slices.Clone(text))
	if err != nil {
		return err
	}
	want := make([]string, len(toks))
	for i, tok := range toks {
		want[i] = string(tok.Term)
	}
	got, err := terms(language, string(text), []string{"kept"})
	if err != nil {
		return err
	}
	if len(got) == 0 || got[0] != "kept" {
		return fmt.Errorf("%q: Terms did not append to dst: %q", text, got)
	}
	if !slices.Equal(got[1:], want) {
		return fmt.Errorf("%s %q: Terms %q, Analyze's terms %q", language, text, got[1:], want)
	}
	return nil
}

// realTexts returns every string field of SciFact's corpus and queries and SQuAD's passages.
func realTexts(t testing.TB) [][]byte {
	var out [][]byte
	for _, rel := range []string{"data/beir-scifact/corpus.jsonl", "data/squad-v1.1-dev/v1.1-passages.jsonl", "data/beir-scifact/queries.jsonl"} {
		f, err := os.Open(sharedtest.Path(t, rel))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var rec map[string]any
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				t.Fatalf("%s: %v", rel, err)
			}
			for _, v := range rec {
				if s, ok := v.(string); ok {
					out = append(out, []byte(s))
				}
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestTermsMatchAnalyze(t *testing.T) {
	texts := realTexts(t)
	if len(texts) < 10000 {
		t.Fatalf("only %d texts", len(texts))
	}
	for _, s := range append(tricky, "running runs ran runner's RUNNING The THE the", "l'amour d’une ЧАСТИ частите", "\xe7 0 a\xffb") {
		texts = append(texts, []byte(s))
	}
	for _, tc := range termsCases {
		t.Run(tc.analyzer+"/"+tc.language, func(t *testing.T) {
			p, err := NewPassages(tc.analyzer)
			if err != nil {
				t.Fatal(err)
			}
			tm := p.single
			if tm == nil {
				if tm, err = p.analyzer(Normalize(tc.language)); err != nil {
					t.Fatal(err)
				}
			}
			if local := tm.filters != nil; local != tc.local {
				t.Fatalf("from the term cache: %v, want %v", local, tc.local)
			}
			texts := texts
			if !tc.local {
				texts = texts[len(texts)-len(tricky)-3:] // Analyze itself, only sliced and tagged
			}
			// twice: the second pass meets the terms cached by the first; through Terms and
			// through an analyst, which keeps its caches from text to text
			an := p.Analyst()
			defer an.Close()
			for range 2 {
				for _, text := range texts {
					compareTerms(t, p, tc.language, text)
					if err := termsOfDiffer(p, an.Terms, tc.language, text); err != nil {
						t.Fatalf("analyst: %v", err)
					}
				}
			}
		})
	}
}

// TestTermsCacheEvicts: more distinct tokens than a cache has slots evict each other, and
// the terms stay the same.
func TestTermsCacheEvicts(t *testing.T) {
	p, err := NewPassages(English)
	if err != nil {
		t.Fatal(err)
	}
	var text []byte
	for i := range termCacheSize + 100 {
		text = append(text, "w"...)
		for n := i; ; n /= 26 {
			text = append(text, byte('a'+n%26))
			if n < 26 {
				break
			}
		}
		text = append(text, " the Running "...)
	}
	compareTerms(t, p, "", text)
	compareTerms(t, p, "", text)
}

func FuzzTerms(f *testing.F) {
	for _, s := range tricky {
		f.Add(s)
	}
	var all []*Passages
	for _, tc := range termsCases {
		p, err := NewPassages(tc.analyzer)
		if err != nil {
			f.Fatal(err)
		}
		all = append(all, p)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for i, tc := range termsCases {
			compareTerms(t, all[i], tc.language, []byte(s))
		}
	})
}

// BenchmarkTerms: the terms of SciFact's and SQuAD's texts, English, through Terms and
// through Analyze with the terms copied out as strings (what Terms replaced in the postings
// build).
func BenchmarkTerms(b *testing.B) {
	texts := realTexts(b)
	p, err := NewPassages(English)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("terms", func(b *testing.B) {
		for i := range b.N {
			if _, err := p.Terms("", string(texts[i%len(texts)]), nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("analyze", func(b *testing.B) {
		for i := range b.N {
			toks, err := p.Analyze("", slices.Clone(texts[i%len(texts)]))
			if err != nil {
				b.Fatal(err)
			}
			out := make([]string, len(toks))
			for j, tok := range toks {
				out[j] = string(tok.Term)
			}
		}
	})
}

// TestTermsConcurrent: more goroutines than there are caches get the same terms, those
// beyond the budget without a cache, and the caches made stay within it, all of them free
// once the analysts that held some are closed.
func TestTermsConcurrent(t *testing.T) {
	p, err := NewPassages(English)
	if err != nil {
		t.Fatal(err)
	}
	texts := realTexts(t)[:2000]
	var g errgroup.Group
	for w := range 4 * termCaches {
		g.Go(func() error {
			terms := p.Terms
			if w%2 == 1 { // an analyst, which holds its cache, if it got one, until Close
				an := p.Analyst()
				defer an.Close()
				terms = an.Terms
			}
			for i := w; i < len(texts); i += 3 {
				if err := termsOfDiffer(p, terms, "", texts[i]); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	if n := len(p.single.budget); n < 1 || n > termCaches || len(p.single.free) != n {
		t.Fatalf("%d caches made, %d free; want 1 to %d, all free", n, len(p.single.free), termCaches)
	}
}
