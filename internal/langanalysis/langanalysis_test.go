package langanalysis

import (
	"slices"
	"testing"
)

func terms(t *testing.T, name, text string) []string {
	t.Helper()
	a, err := New(name)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tk := range a.Analyze([]byte(text)) {
		out = append(out, string(tk.Term))
	}
	return out
}

// TestInflectedFormsShareTerms: each language's analyzer maps two inflected forms of a word
// to one term, and English analysis does not (so the choice of analyzer matters).
func TestInflectedFormsShareTerms(t *testing.T) {
	for _, tc := range []struct {
		lang, a, b string
		englishToo bool // English analysis conflates them as well
	}{
		{"bg", "градът", "градовете", false},  // the city / the cities
		{"bg", "държавата", "държави", false}, // the state / states
		{"ru", "белка", "белки", false},       // squirrel / squirrels (genitive)
		{"de", "Eichhörnchen", "Eichhörnchens", true},
		{"fr", "écureuil", "écureuils", true},
	} {
		c := For(tc.lang)
		ta, tb := terms(t, c.Analyzer, tc.a), terms(t, c.Analyzer, tc.b)
		if len(ta) != 1 || !slices.Equal(ta, tb) {
			t.Errorf("%s: %q -> %q, %q -> %q: want one shared term", tc.lang, tc.a, ta, tc.b, tb)
		}
		if !tc.englishToo {
			if ea, eb := terms(t, English, tc.a), terms(t, English, tc.b); slices.Equal(ea, eb) {
				t.Errorf("%s: English analysis also conflates %q and %q (%q)", tc.lang, tc.a, tc.b, ea)
			}
		}
	}
}

func TestFor(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Choice
	}{
		{"bg", Choice{Language: "bg", Analyzer: "bg"}},
		{"pt-BR", Choice{Language: "pt", Analyzer: "pt"}},
		{" DE ", Choice{Language: "de", Analyzer: "de"}},
		{"zh_Hant", Choice{Language: "zh", Analyzer: "cjk"}},
		{"simple", Choice{Language: "simple", Analyzer: "en"}},
		{"sw", Choice{Language: "sw", Analyzer: Standard, Fallback: true}},
		{"", Choice{Language: "", Analyzer: Standard, Fallback: true}},
	} {
		if got := For(tc.in); got != tc.want {
			t.Errorf("For(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

// TestEveryLanguageBuilds: every analyzer of the table, and the fallback, can be built and
// can be named in a bleve mapping.
func TestEveryLanguageBuilds(t *testing.T) {
	for _, l := range append(Languages(), "xx") {
		c := For(l)
		if _, err := New(c.Analyzer); err != nil {
			t.Errorf("%s: %v", l, err)
		}
		if got := terms(t, c.Analyzer, "Kairos"); len(got) != 1 {
			t.Errorf("%s: %q -> %q", l, "Kairos", got)
		}
	}
	if _, err := New("nonexistent"); err == nil {
		t.Error("New(nonexistent) did not fail")
	}
}

func TestStemBulgarian(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"град", "град"}, {"градът", "град"}, {"градове", "град"}, {"градовете", "град"},
		{"момчета", "момч"}, {"ученици", "ученик"}, {"ученик", "ученик"},
		{"път", "път"}, // under four letters: unchanged
	} {
		if got := string(stemBulgarian([]rune(tc.in))); got != tc.want {
			t.Errorf("stemBulgarian(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func FuzzStemBulgarian(f *testing.F) {
	for _, s := range []string{"градовете", "ъъъъъ", "еви", "", "ища"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := []rune(s)
		out := stemBulgarian(append([]rune(nil), r...))
		if len(out) > len(r) {
			t.Fatalf("stem of %q grew to %q", s, string(out))
		}
	})
}
