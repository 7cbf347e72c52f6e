package chat

import (
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/search"
)

// citeCases: a reply written against 3 numbered sources, as the citer rewrites it, and the
// source numbers it cites in reply order.
var citeCases = []struct {
	name, in, want string
	order          []int
}{
	{"in order", "Frozen came out in 2013 [1]. It won two Oscars [2].", "Frozen came out in 2013 [1]. It won two Oscars [2].", []int{1, 2}},
	{"renumbered by appearance", "It won two Oscars [3]. It came out in 2013 [1]. Again [3].", "It won two Oscars [1]. It came out in 2013 [2]. Again [1].", []int{3, 1}},
	{"invented removed with its space", "It came out in 2013 [7]. Disney made it [2].", "It came out in 2013. Disney made it [1].", []int{2}},
	{"zero and huge removed", "A [0]. B [999]. C[2].", "A. B. C[1].", []int{2}},
	{"list keeps the bound", "Both [1, 9, 2] and [ 9 ].", "Both [1, 2] and.", []int{1, 2}},
	{"list repeats once", "Twice [2, 2].", "Twice [1].", []int{2}},
	{"adjacent markers", "Fact [2][1][8].", "Fact [1][2].", []int{2, 1}},
	{"not markers", "An array a[x] and [citation needed] and [1a] and [12345].", "An array a[x] and [citation needed] and [1a] and [12345].", nil},
	{"newline before a marker kept", "Line one\n[1] starts line two.", "Line one\n[1] starts line two.", []int{1}},
	{"no markers", "Just a reply.", "Just a reply.", nil},
	{"invented first", "[8] Opens with one.", " Opens with one.", nil},
	// The brackets and digits of CJK text are markers too: bound as [n], or removed.
	{"lenticular brackets", "Frozen came out in 2013【1】. It won two Oscars 【7】.", "Frozen came out in 2013[1]. It won two Oscars.", []int{1}},
	{"fullwidth brackets, digits and commas", "冰雪奇缘于2013年上映［２，3］。它获得了奥斯卡奖［1、9］。", "冰雪奇缘于2013年上映[1, 2]。它获得了奥斯卡奖[3]。", []int{2, 3, 1}},
	{"lenticular not a marker", "【注】 and 【12345】 stay.", "【注】 and 【12345】 stay.", nil},
}

func TestCiterRewrite(t *testing.T) {
	for _, tt := range citeCases {
		t.Run(tt.name, func(t *testing.T) {
			c := newCiter(3)
			if got := c.rewrite(tt.in); got != tt.want || !slices.Equal(c.order, tt.order) {
				t.Errorf("rewrite(%q) = %q citing %v, want %q citing %v", tt.in, got, c.order, tt.want, tt.order)
			}
		})
	}
}

// The streamed rewrite equals the whole one however the text is cut into pieces.
func TestMarkerStreamMatchesRewrite(t *testing.T) {
	for _, tt := range citeCases {
		for size := 1; size <= 7; size++ {
			var b strings.Builder
			m := &markerStream{c: newCiter(3), emit: func(s string) { b.WriteString(s) }}
			for i := 0; i < len(tt.in); i += size {
				m.write(tt.in[i:min(i+size, len(tt.in))])
			}
			m.flush()
			// A streamed reply starts at its first visible character, as the whole one
			// does once trimmed.
			if want := strings.TrimLeft(tt.want, " "); b.String() != want || !slices.Equal(m.c.order, tt.order) {
				t.Errorf("%s, pieces of %d: streamed %q citing %v, want %q citing %v", tt.name, size, b.String(), m.c.order, tt.want, tt.order)
			}
		}
	}
}

func FuzzMarkerStream(f *testing.F) {
	for _, tt := range citeCases {
		f.Add(tt.in, uint8(3))
	}
	f.Fuzz(func(t *testing.T, s string, size uint8) {
		whole := newCiter(4)
		want := strings.TrimFunc(whole.rewrite(s), unicode.IsSpace)
		var b strings.Builder
		m := &markerStream{c: newCiter(4), emit: func(p string) { b.WriteString(p) }}
		n := int(size%16) + 1
		for i := 0; i < len(s); i += n {
			m.write(s[i:min(i+n, len(s))])
		}
		m.flush()
		if strings.TrimFunc(b.String(), unicode.IsSpace) != want || !slices.Equal(m.c.order, whole.order) {
			t.Errorf("streamed %q citing %v, whole %q citing %v", b.String(), m.c.order, want, whole.order)
		}
		for _, n := range whole.order {
			if n < 1 || n > 4 {
				t.Errorf("bound source %d of 4", n)
			}
		}
	})
}

func hit(id, title string) rerank.Hit {
	return rerank.Hit{Hit: search.Hit{Passage: corpus.Passage{ID: id, Title: title, Section: "Plot", URL: "https://en.wikipedia.org/wiki/" + title}}}
}

// Facts are numbered by the passage they came from; a passage's facts share its number, and
// markers copied into a fact (a passage's footnotes) are dropped.
func TestNumberFacts(t *testing.T) {
	a, b := hit("a#0", "A"), hit("b#0", "B")
	from := []citeSource{{hit: a}, {hit: b}, {hit: a}, {}}
	lines, srcs := numberFacts([]string{"A one [4].", "B one.", "A two.", "Loose fact."}, from)
	want := []string{"A one. [1]", "B one. [2]", "A two. [1]", "Loose fact."}
	if !slices.Equal(lines, want) {
		t.Errorf("lines %q, want %q", lines, want)
	}
	if len(srcs) != 2 || srcs[0].hit.ID != "a#0" || !slices.Equal(srcs[0].facts, []string{"A one.", "A two."}) || srcs[1].hit.ID != "b#0" {
		t.Errorf("sources %+v", srcs)
	}
}
