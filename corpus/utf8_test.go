package corpus

import (
	"strings"
	"testing"
	"unsafe"
)

// spaceCases are texts at the edges of collapsed and normalParagraphs.
var spaceCases = []string{
	"", " ", "a", " a", "a ", "a b", "a  b", "a\tb", "a\u00a0b", "a\u0085b", "a\u2003b", "a\u3000b",
	"\u00a0", "a\x1fb", "a\xffb", "\xff", "é è", "a\rb", "a\fb", "a\vb",
	"a\nb", "a\n\nb", "a\n\n\nb", "\na", "a\n", "\n\na", "a\n\n", "a \n\nb", "a\n\n b",
	"one two.\n\nthree four.\n\nfive", "one  two.\n\nthree", "x\n\ny\nz", "\n", "\n\n",
}

func checkSpace(t *testing.T, s string) {
	t.Helper()
	if got, want := collapseSpace(s), strings.Join(strings.Fields(s), " "); got != want {
		t.Fatalf("collapseSpace(%q) = %q, want %q", s, got, want)
	}
	for _, lb := range []bool{false, true} {
		if got, want := paragraphs(s, lb), joinParagraphs(s, lb); got != want {
			t.Fatalf("paragraphs(%q, %v) = %q, want %q", s, lb, got, want)
		}
	}
}

func TestCollapseSpace(t *testing.T) {
	for _, s := range spaceCases {
		checkSpace(t, s)
	}
	// the shortcut is taken: normal text comes back as the same string
	s := "one two.\n\nthree four."
	if got := paragraphs(s, false); unsafe.StringData(got) != unsafe.StringData(s) {
		t.Fatalf("normal text %q: a copy %q", s, got)
	}
}

func FuzzCollapseSpace(f *testing.F) {
	for _, s := range spaceCases {
		f.Add(s)
	}
	f.Fuzz(checkSpace)
}
