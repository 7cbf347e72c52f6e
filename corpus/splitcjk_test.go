package corpus

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestSplitCJK: Chinese and Japanese text, written without spaces, is cut into passages of
// about 2 x MaxWords characters, after its sentence ends where it has them, and the passages
// give back the text exactly. Before, a paragraph was one "word" to the budget, and a whole
// section became one passage.
func TestSplitCJK(t *testing.T) {
	zhSentences := []string{
		"北京是中华人民共和国的首都，也是全国的政治、文化和国际交往中心。",
		"北京有三千多年的建城史，曾是元、明、清等朝代的都城。",
		"故宫位于北京中轴线的中心，是明清两代的皇家宫殿。",
		"二零零八年，北京举办了第二十九届夏季奥林匹克运动会。",
	}
	var zh strings.Builder
	for range 12 {
		for _, s := range zhSentences {
			zh.WriteString(s)
		}
	}
	ja := strings.Repeat("「東京は日本の首都である。」と彼は言った。東京タワーは一九五八年に完成した。", 20)
	noStop := strings.Repeat("漢字", 400) // 800 characters and no sentence end
	tests := []struct {
		name, text string
		maxWords   int
	}{
		{"chinese", zh.String(), 120},
		{"japanese with closers", ja, 60},
		{"one sentence without an end", noStop, 120},
		{"mixed with latin words", "Kairos 是一个检索引擎。" + zh.String() + " It indexes Wikipedia.", 40},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sp, err := NewSplitter(SplitOptions{MaxWords: tc.maxWords})
			if err != nil {
				t.Fatal(err)
			}
			doc := Document{ID: "d", Title: "北京", Sections: []Section{{Text: tc.text}}}
			ps := sp.Split(doc)
			checkPassages(t, sp, doc, ps)
			chars := utf8.RuneCountInString(tc.text)
			if min := chars / (2 * tc.maxWords); len(ps) < min {
				t.Fatalf("%d passages for %d characters, want at least %d", len(ps), chars, min)
			}
			var body strings.Builder
			for i, p := range ps {
				b := strings.TrimPrefix(p.Text, "北京 | ")
				if n := utf8.RuneCountInString(b); n > 2*tc.maxWords+20 {
					t.Errorf("passage %d has %d characters, want about %d at most", i, n, 2*tc.maxWords)
				}
				if i < len(ps)-1 && strings.ContainsAny(tc.text, "。") && !strings.HasSuffix(strings.TrimRight(b, cjkClosers), "。") && !strings.HasSuffix(b, ".") {
					t.Errorf("passage %d does not end at a sentence end: …%s", i, string([]rune(b)[max(0, utf8.RuneCountInString(b)-8):]))
				}
				body.WriteString(b)
				if i < len(ps)-1 && !isCJKEnd(b) {
					body.WriteByte(' ')
				}
			}
			if got := body.String(); got != strings.Join(strings.Fields(tc.text), " ") {
				t.Errorf("the passages do not give back the text:\n got %.200q\nwant %.200q", got, tc.text)
			}
		})
	}
}

// isCJKEnd reports whether s ends in a Han or kana character or CJK punctuation, after which
// the next passage continues the same word.
func isCJKEnd(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return isCJK(r) || strings.ContainsRune(cjkSentenceEnds+cjkClosers+"，、", r)
}

// TestSplitParagraphOverBudget: a paragraph whose last sentence is over the budget weighs
// all of it, so that the paragraph starts a passage of its own rather than fill the one
// before. The weighed splitter had counted only the sentence's last piece and moved the
// boundaries of plain English passages: [60] [120] [30] for [50] [10] [120] [30].
func TestSplitParagraphOverBudget(t *testing.T) {
	words := func(prefix string, n int) string {
		ws := make([]string, n)
		for i := range ws {
			ws[i] = fmt.Sprintf("%s%d", prefix, i)
		}
		return strings.Join(ws, " ")
	}
	text := words("a", 49) + " end.\n\nShort " + words("s", 8) + " end. Long " + words("l", 149)
	sp, _ := NewSplitter(SplitOptions{})
	var got []int
	for _, p := range sp.Split(Document{ID: "d", Sections: []Section{{Text: text}}}) {
		got = append(got, len(strings.Fields(p.Text)))
	}
	if want := []int{50, 10, 120, 30}; !slices.Equal(got, want) {
		t.Errorf("passage sizes %v, want %v", got, want)
	}
}

// TestSplitFullwidthDecimal: a fullwidth full stop between digits is a decimal point, not a
// sentence end: ３．１４ stays whole.
func TestSplitFullwidthDecimal(t *testing.T) {
	text := strings.Repeat("字", 200) + "円周率は３．１４です。" + strings.Repeat("字", 100)
	sp, _ := NewSplitter(SplitOptions{})
	for _, p := range sp.Split(Document{ID: "d", Sections: []Section{{Text: text}}}) {
		if strings.HasSuffix(p.Text, "３．") {
			t.Errorf("passage %s ends inside a number: …%s", p.ID, string([]rune(p.Text)[utf8.RuneCountInString(p.Text)-6:]))
		}
	}
}

func TestWordWeight(t *testing.T) {
	tests := []struct {
		w    string
		want int
	}{
		{"word", 1}, {"naïve", 1}, {"Ελλάδα", 1}, {"北", 1}, {"北京", 1}, {"北京市", 2},
		{"2008年", 1}, {"東京タワー", 3}, {"서울특별시", 1}, {"。", 1},
	}
	for _, tc := range tests {
		if got := WordWeight(tc.w); got != tc.want {
			t.Errorf("WordWeight(%q) = %d, want %d", tc.w, got, tc.want)
		}
	}
}
