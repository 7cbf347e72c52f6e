package chat

import "testing"

// A text states every number it holds, in whatever form it holds it: the source a bullet, a
// draft or a revision repeats word for word is never short of a number.
func FuzzNumbersHeld(f *testing.F) {
	for _, s := range []string{
		"It cost $1.5 million in 1886.",
		"Three's company; twelve-tone music of the 1920s and the 19th century.",
		"version 1.2.3, 1,500,000 people, １８９９",
		"threeé TEN Eleven_ _three 3three",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		s = asciiDigits(s)
		if n := numbersOf(s).missing(s); n != "" {
			t.Errorf("%q does not state its own number %q", s, n)
		}
	})
}

// missing finds a number a text states in no form of its source, and nothing else.
func TestNumbersMissing(t *testing.T) {
	tests := []struct{ text, source, want string }{
		{"won three Nobel Prizes", "won two Nobel Prizes", "three"},
		{"won 2 Nobel Prizes", "won two Nobel Prizes", ""},
		{"wrote four papers", "wrote 4 papers", ""},
		{"three million people", "3,000,000 people", ""},
		{"in the 1920s", "in 1922", ""},
		{"in the 1930s", "in 1922", "1930"},
		{"in the 20th century", "in 1922", ""},
		{"in 1850", "in 1922", "1850"},
		{"version 1.2.3", "version 1.2", "1.2.3"},
		{"the two countries, one of them", "France and Germany", ""},
	}
	for _, tt := range tests {
		if got := numbersOf(tt.source).missing(tt.text); got != tt.want {
			t.Errorf("missing(%q) of %q = %q, want %q", tt.text, tt.source, got, tt.want)
		}
	}
}
