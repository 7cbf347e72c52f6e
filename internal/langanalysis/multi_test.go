package langanalysis

import (
	"slices"
	"testing"
)

// TestPassages: a single-language analysis is the language's analyzer, untagged, whatever a
// passage's language; a multilingual one analyses each passage in its language and tags its
// terms, and a query once per language asked for.
func TestPassages(t *testing.T) {
	terms := func(p *Passages, lang, text string) []string {
		t.Helper()
		toks, err := p.Analyze(lang, []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tok := range toks {
			out = append(out, string(tok.Term))
		}
		return out
	}
	de, err := NewPassages("de")
	if err != nil {
		t.Fatal(err)
	}
	if de.Multilingual() {
		t.Error("de is multilingual")
	}
	deAlone, _ := New("de")
	var want []string
	for _, tok := range deAlone.Analyze([]byte("Die Häuser")) {
		want = append(want, string(tok.Term))
	}
	if got := terms(de, "fr", "Die Häuser"); !slices.Equal(got, want) {
		t.Errorf("single-language de: %v, want the de analyzer's %v", got, want)
	}
	multi, err := NewPassages(Multilingual)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		lang, text string
		want       []string
	}{
		{"de", "Die Häuser", []string{"de:haus"}},
		{"fr", "Les chevaux", []string{"fr:cheval"}},
		{"fr-CA", "Les chevaux", []string{"fr:cheval"}},
		{"en", "the houses", []string{"en:hous"}},
		// UAX #29 keeps "de:x" whole: tagged, it cannot pass for a German "x".
		{"sv", "de:x", []string{"sv:de:x"}},
	} {
		if got := terms(multi, tc.lang, tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("multilingual %s %q: %v, want %v", tc.lang, tc.text, got, tc.want)
		}
		a, err := multi.For(tc.lang)
		if err != nil {
			t.Fatal(err)
		}
		var viaFor []string
		for _, tok := range a.Analyze([]byte(tc.text)) {
			viaFor = append(viaFor, string(tok.Term))
		}
		if !slices.Equal(viaFor, tc.want) {
			t.Errorf("For(%s) %q: %v, want %v", tc.lang, tc.text, viaFor, tc.want)
		}
	}
	if _, err := multi.Analyze("", []byte("x")); err == nil {
		t.Error("a multilingual passage without a language was analysed")
	}
	q, err := multi.QueryTerms("Häuser Paris", []string{"de", "fr"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"de:haus", "de:paris", "fr:häus", "fr:pari"}; !slices.Equal(q, want) {
		t.Errorf("query terms %v, want %v", q, want)
	}
	if q, _ := de.QueryTerms("Häuser Häuser", []string{"fr", "en"}); !slices.Equal(q, []string{"haus"}) {
		t.Errorf("single-language query terms %v, want [haus]", q)
	}
}
