package langanalysis

import (
	"fmt"
	"testing"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/token/porter"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
)

// tricky are strings at the edges of the word-break rules the fast path implements.
var tricky = []string{
	"", " ", "a", "_", "__init__", "a_b", "_1", "1_", "1_2", "a1", "1a", "a1b2", "12ab34",
	"a.b", "a.b.", ".a", "a..b", "a.1", "1.a", "1.2.3", "3.14", "1,000", "1,000,000.5", "1,a",
	"a,b", "a;b", "1;2", "a:b", "1:2", "http://example.org/x?y=1&z=2", "don't", "'tis", "rock'n'roll",
	"1'000", "a'1", "O'Neil's", "U.S.A.", "e.g.", "i.e.,", "a_.b", "a._b", "x__.y", "a-b", "a/b",
	"a\"b", "C++", "C#", "$100", "100%", "-5", "+1", "(a)", "[1]", "{x}", "a\tb\nc\r\nd\ve\ff",
	"end.", "end,", "1.", ".5", "..", "a b  c   ", "\x00a\x01b", "~`!@#$%^&*()=+[]{}|\\<>?/",
	"naïve café", "Zürich's 1,5 km", "x\u00adco\u00adoperate", "a\u0301b", " \u0301a",
	"日本語のテキスト", "Hello,世界", "ﬁ ligature", "a’b", "1’000", "a·b", "€5", "a\u200bb",
}

func compareTokenizers(t testing.TB, text []byte) {
	t.Helper()
	want := unicode.NewUnicodeTokenizer().Tokenize(text)
	got := newASCIITokenizer().Tokenize(text)
	if len(got) != len(want) {
		t.Fatalf("%q: %d tokens, bleve %d:\n got %s\nwant %s", text, len(got), len(want), toks(got), toks(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if string(g.Term) != string(w.Term) || g.Start != w.Start || g.End != w.End || g.Position != w.Position || g.Type != w.Type {
			t.Fatalf("%q: token %d is %s, bleve %s", text, i, tok(g), tok(w))
		}
	}
}

func tok(t *analysis.Token) string {
	return fmt.Sprintf("%q[%d:%d]@%d/%d", t.Term, t.Start, t.End, t.Position, t.Type)
}

func toks(ts analysis.TokenStream) string {
	s := ""
	for _, t := range ts {
		s += tok(t) + " "
	}
	return s
}

func TestASCIITokenizerMatchesBleve(t *testing.T) {
	for _, s := range tricky {
		compareTokenizers(t, []byte(s))
	}
	// Real text: every SciFact and SQuAD passage, titles included.
	texts := realTexts(t)
	for _, s := range texts {
		compareTokenizers(t, s)
	}
	if len(texts) < 10000 {
		t.Fatalf("compared only %d texts", len(texts))
	}
}

func FuzzASCIITokenizer(f *testing.F) {
	for _, s := range tricky {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		compareTokenizers(t, []byte(s))
	})
}

// TestNewUsesFastTokenizer checks that analyzers built on bleve's Unicode tokenizer get the
// fast one, and still analyse as bleve's own chain does.
func TestNewUsesFastTokenizer(t *testing.T) {
	for _, name := range []string{English, "fr", "de"} {
		a, err := New(name)
		if err != nil {
			t.Fatal(err)
		}
		d, ok := a.(*analysis.DefaultAnalyzer)
		if !ok {
			t.Fatalf("%s: analyzer %T", name, a)
		}
		if _, ok := d.Tokenizer.(asciiTokenizer); !ok {
			t.Fatalf("%s: tokenizer %T, want the fast one", name, d.Tokenizer)
		}
		slow := *d
		slow.Tokenizer = unicode.NewUnicodeTokenizer()
		slow.TokenFilters = append([]analysis.TokenFilter(nil), d.TokenFilters...)
		if n := len(slow.TokenFilters); name == English {
			if _, ok := slow.TokenFilters[n-1].(*cachedPorter); !ok {
				t.Fatalf("%s: last filter %T, want the cached stemmer", name, slow.TokenFilters[n-1])
			}
			slow.TokenFilters[n-1] = porter.NewPorterStemmer()
		}
		// twice: the second pass meets the stems cached by the first
		texts := append(append([]string(nil), tricky...), "running runs ran runner's RUNNING", "running runs ran")
		for range 2 {
			for _, s := range texts {
				got, want := a.Analyze([]byte(s)), slow.Analyze([]byte(s))
				if toks(got) != toks(want) {
					t.Fatalf("%s %q: analysed to %s, bleve's chain %s", name, s, toks(got), toks(want))
				}
			}
		}
	}
}
