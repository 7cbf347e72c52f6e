package corpus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// numberedWords returns n numbered words "w1 w2 ... wn" with a sentence end every perSentence words
// (0: none).
func numberedWords(n, perSentence int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteByte(' ')
		}
		if perSentence > 0 && (i-1)%perSentence == 0 {
			fmt.Fprintf(&b, "W%d", i) // capitalised: a sentence start
		} else {
			fmt.Fprintf(&b, "w%d", i)
		}
		if perSentence > 0 && i%perSentence == 0 {
			b.WriteByte('.')
		}
	}
	return b.String()
}

func bodyLens(ps []Passage) []int {
	var out []int
	for _, p := range ps {
		_, body, _ := strings.Cut(p.Text, "| ")
		out = append(out, len(strings.Fields(body)))
	}
	return out
}

func TestSplitTable(t *testing.T) {
	tests := []struct {
		name     string
		maxWords int
		doc      Document
		texts    []string // exact passage texts, when given
		lens     []int    // body word counts, when given
	}{
		{
			name:  "lead and section prefixes",
			doc:   Document{ID: "7", Title: "Ada Lovelace", Sections: []Section{{Text: "She wrote notes."}, {Name: "Legacy", Text: "A language is named after her."}}},
			texts: []string{"Ada Lovelace | She wrote notes.", "Ada Lovelace > Legacy | A language is named after her."},
		},
		{
			name:  "no title: section prefix only, lead bare",
			doc:   Document{ID: "x", Sections: []Section{{Text: "Bare text."}, {Name: "S", Text: "More."}}},
			texts: []string{"Bare text.", "S | More."},
		},
		{
			name:  "whitespace normalised, empty sections skipped",
			doc:   Document{ID: "1", Title: "T", Sections: []Section{{Text: "  \n\n "}, {Name: "A", Text: "one\ttwo\n\nthree"}, {Name: "B"}}},
			texts: []string{"T > A | one two three"},
		},
		{
			// budget 20-2 = 18 body words; five sentences of 6 words pack three per passage
			// at most; the tail of 2 sentences is not tiny, so no rebalancing.
			name:     "packs whole sentences",
			maxWords: 20,
			doc:      Document{ID: "d", Title: "T", Sections: []Section{{Text: numberedWords(30, 6)}}},
			lens:     []int{18, 12},
		},
		{
			// A 50-word sentence with budget 18 is cut at word boundaries: 18, 18, then 14.
			name:     "long sentence cut at word boundaries",
			maxWords: 20,
			doc:      Document{ID: "d", Title: "T", Sections: []Section{{Text: numberedWords(50, 0)}}},
			lens:     []int{18, 18, 14},
		},
		{
			// 17 words then a 2-word sentence: the 2-word tail is under a quarter of 18,
			// but the only unit that could move (17 words) does not fit beside it.
			name:     "tiny tail kept when nothing can move",
			maxWords: 20,
			doc:      Document{ID: "d", Title: "T", Sections: []Section{{Text: numberedWords(17, 17) + " " + "Xa xb."}}},
			lens:     []int{17, 2},
		},
		{
			// Sentences of 3 words: greedy gives 18 + 3; rebalancing the 3-word tail moves
			// two sentences over: 12 + 9.
			name:     "tiny tail rebalanced",
			maxWords: 20,
			doc:      Document{ID: "d", Title: "T", Sections: []Section{{Text: numberedWords(21, 3)}}},
			lens:     []int{12, 9},
		},
		{
			// First paragraph 8 words (>= a third of 18); the second (15 words) does not fit
			// beside it, so it starts a new passage instead of being split.
			name:     "paragraph starts a new passage",
			maxWords: 20,
			doc:      Document{ID: "d", Title: "T", Sections: []Section{{Text: numberedWords(8, 4) + "\n\n" + numberedWords(15, 5)}}},
			lens:     []int{8, 15},
		},
		{
			// First paragraph 4 words (< a third of 18): the next paragraph fills up the
			// passage sentence by sentence.
			name:     "small paragraph packed with the next",
			maxWords: 20,
			doc:      Document{ID: "d", Title: "T", Sections: []Section{{Text: numberedWords(4, 4) + "\n\n" + numberedWords(20, 5)}}},
			lens:     []int{14, 10},
		},
		{
			name:     "long section name shortened to half the budget",
			maxWords: 20,
			doc:      Document{ID: "d", Title: "Big Title", Sections: []Section{{Name: "one two three four five six seven eight", Text: "Body."}}},
			texts:    []string{"Big Title > one two three four five six… | Body."},
		},
		{
			name:     "long title shortened after the section",
			maxWords: 20,
			doc:      Document{ID: "d", Title: "a b c d e f g h i j k l", Sections: []Section{{Name: "Sec tion", Text: "Body."}}},
			texts:    []string{"a b c d e f g… > Sec… | Body."},
		},
		{
			name:  "abbreviations and initials do not end sentences",
			doc:   Document{ID: "d", Title: "T", Sections: []Section{{Text: "Dr. Smith met J. R. Tolkien in the U.S. Army, e.g. Fig. 3 shows it."}}},
			texts: []string{"T | Dr. Smith met J. R. Tolkien in the U.S. Army, e.g. Fig. 3 shows it."},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sp, err := NewSplitter(SplitOptions{MaxWords: tc.maxWords})
			if err != nil {
				t.Fatal(err)
			}
			ps := sp.Split(tc.doc)
			if tc.texts != nil {
				var got []string
				for _, p := range ps {
					got = append(got, p.Text)
				}
				if !slices.Equal(got, tc.texts) {
					t.Errorf("texts:\n got %q\nwant %q", got, tc.texts)
				}
			}
			if tc.lens != nil {
				if got := bodyLens(ps); !slices.Equal(got, tc.lens) {
					t.Errorf("body lengths: got %v, want %v", got, tc.lens)
				}
			}
			checkPassages(t, sp, tc.doc, ps)
		})
	}
}

func TestSplitCopiesFields(t *testing.T) {
	date := time.Date(2023, 8, 24, 1, 14, 42, 0, time.UTC)
	doc := Document{ID: "28492", Title: "Squirrel", URL: "https://en.wikipedia.org/wiki/Squirrel", Date: date, Source: "articles",
		Sections: []Section{{Text: "Lead."}, {Name: "Etymology", Text: "Word."}}}
	sp, _ := NewSplitter(SplitOptions{})
	got := sp.Split(doc)
	want := []Passage{
		{ID: "28492#0", DocID: "28492", Title: "Squirrel", Text: "Squirrel | Lead.", URL: doc.URL, Date: date, Source: "articles", Ordinal: 0},
		{ID: "28492#1", DocID: "28492", Title: "Squirrel", Section: "Etymology", Text: "Squirrel > Etymology | Word.", URL: doc.URL + "#Etymology", Date: date, Source: "articles", Ordinal: 1},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

// TestSectionURL: a passage of a named section links to it as Wikipedia's anchors do.
func TestSectionURL(t *testing.T) {
	const page = "https://en.wikipedia.org/wiki/LLaMA"
	for _, tt := range []struct{ url, section, want string }{
		{page, "Llama 3", page + "#Llama_3"},
		// A subsection's anchor is its own heading, not its path (which had given
		// "#Models_%3E_Llama_3", an anchor no page has).
		{page, "Models > Llama 3", page + "#Llama_3"},
		{page, "History > Early life > Childhood", page + "#Childhood"},
		{page, "", page},
		{page, "  Model \t architecture  ", page + "#Model_architecture"},
		{page, "Études & «critiques»", page + "#%C3%89tudes_&_%C2%ABcritiques%C2%BB"},
		{page, `100% "open"?`, page + "#100%25_%22open%22?"},
		{page + "#History", "Llama 3", page + "#History"}, // the document's own fragment wins
		{"", "Llama 3", ""},
		{"https://de.wikipedia.org/wiki/M%C3%BCnchen", "Geschichte", "https://de.wikipedia.org/wiki/M%C3%BCnchen#Geschichte"},
	} {
		got := (sectionAnchors{}).url(tt.url, tt.section)
		if got != tt.want {
			t.Errorf("url(%q, %q) = %q, want %q", tt.url, tt.section, got, tt.want)
		}
		if got != "" {
			if _, err := url.Parse(got); err != nil {
				t.Errorf("%q does not parse as a URL: %v", got, err)
			}
		}
	}
}

// TestSectionURLRepeatedHeading: the second subsection named "Reception" is anchored
// "#Reception_2", as Wikipedia numbers a repeated heading; a table cut out of a section keeps
// its section's anchor.
func TestSectionURLRepeatedHeading(t *testing.T) {
	const page = "https://en.wikipedia.org/wiki/Frozen"
	sp, _ := NewSplitter(SplitOptions{})
	doc := Document{ID: "d", Title: "Frozen", URL: page, Sections: []Section{
		{Name: "Film > Reception", Text: "Critics liked it."},
		{Name: "Film > Reception", Text: "Box office | 1.28 billion", Block: BlockTable},
		{Name: "Soundtrack > Reception", Text: "The songs sold well."},
		{Name: "Musical > Reception", Text: "It ran on Broadway."},
	}}
	var got []string
	for _, p := range sp.Split(doc) {
		got = append(got, strings.TrimPrefix(p.URL, page))
	}
	if want := []string{"#Reception", "#Reception", "#Reception_2", "#Reception_3"}; !slices.Equal(got, want) {
		t.Errorf("anchors %q, want %q", got, want)
	}
}

func TestSplitOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		max     int
		wantErr bool
	}{{0, false}, {120, false}, {16, false}, {15, true}, {-1, true}} {
		_, err := NewSplitter(SplitOptions{MaxWords: tc.max})
		if (err != nil) != tc.wantErr {
			t.Errorf("MaxWords %d: err = %v, want error %v", tc.max, err, tc.wantErr)
		}
	}
}

func TestSentenceEnd(t *testing.T) {
	tests := []struct {
		w, next string
		want    bool
	}{
		{"end.", "Next", true},
		{"end.", "next", false},
		{"end.)", "The", true},
		{`"end."`, "The", true},
		{"end?", "¿Qué", true},
		{"end!", "“Quote", true},
		{"1998.", "In", true},
		{"in 5.", "Then", true},
		{"Dr.", "Smith", false},
		{"J.", "Smith", false},
		{"e.g.", "Smith", false},
		{"U.S.", "Army", false},
		{"al.", "Smith", false},
		{"end", "The", false},
		{"end,", "The", false},
		{"终。", "x", true},
		{"end.", "2020", true},
	}
	for _, tc := range tests {
		if got := sentenceEnd(tc.w, tc.next); got != tc.want {
			t.Errorf("sentenceEnd(%q, %q) = %v, want %v", tc.w, tc.next, got, tc.want)
		}
	}
}

// checkPassages asserts the splitter's invariants on one document's passages: at most
// maxWords words, starting with the (possibly shortened) title, non-empty bodies, ordinals
// and ids in sequence, and the bodies' words equal to the document's words in order.
func checkPassages(t *testing.T, sp *Splitter, doc Document, ps []Passage) {
	t.Helper()
	maxWords := sp.maxWords
	var want []string
	for _, s := range doc.Sections {
		want = append(want, strings.Fields(s.Text)...)
	}
	var got []string
	titleWords := strings.Fields(doc.Title)
	for i, p := range ps {
		n := len(strings.Fields(p.Text))
		if n > maxWords {
			t.Errorf("doc %s: passage %s has %d words > %d", doc.ID, p.ID, n, maxWords)
		}
		if len(titleWords) > 0 && len(titleWords) < maxWords/2 && !strings.HasPrefix(p.Text, strings.Join(titleWords, " ")+" ") {
			t.Errorf("doc %s: passage %s does not start with its title: %.80q", doc.ID, p.ID, p.Text)
		}
		if p.ID != fmt.Sprintf("%s#%d", doc.ID, i) || p.Ordinal != i || p.DocID != doc.ID {
			t.Errorf("doc %s: passage %d has id %q ordinal %d doc %q", doc.ID, i, p.ID, p.Ordinal, p.DocID)
		}
		prefix := strings.Join(sp.prefix(titleWords, strings.Fields(p.Section)), " ")
		body, ok := strings.CutPrefix(p.Text, prefix)
		if !ok || prefix != "" && !strings.HasSuffix(prefix, " |") {
			t.Errorf("doc %s: passage %s does not start with prefix %q: %.80q", doc.ID, p.ID, prefix, p.Text)
		}
		bw := strings.Fields(body)
		if len(bw) == 0 {
			t.Errorf("doc %s: passage %s is empty", doc.ID, p.ID)
		}
		got = append(got, bw...)
	}
	if !sameWordsCutInCJK(got, want) {
		t.Errorf("doc %s: passages do not reproduce the document's %d words (got %d)", doc.ID, len(want), len(got))
	}
}

// sameWordsCutInCJK reports whether got is want with some words of Chinese or Japanese
// text cut in pieces (at passage boundaries), and no other difference.
func sameWordsCutInCJK(got, want []string) bool {
	i := 0
	for _, w := range want {
		acc := ""
		for acc != w {
			if i == len(got) || !strings.HasPrefix(w, acc+got[i]) || acc != "" && WordWeight(w) <= 1 && !strings.ContainsAny(w, cjkSentenceEnds) {
				return false
			}
			acc += got[i]
			i++
		}
	}
	return i == len(got)
}

// readPath reads every document of path, failing on any error.
func readPath(t testing.TB, path string, opts Options) ([]Document, ReadStats) {
	t.Helper()
	ctx := context.Background()
	r, err := Open(ctx, path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var docs []Document
	for {
		d, err := r.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		docs = append(docs, d)
	}
	return docs, r.Stats()
}

// TestSplitRealCorpora checks the invariants on every passage of SciFact, the COVID FAQ, the
// Enterprise articles and two MediaWiki dumps (opened with format detection: the enwiki
// fragment has no .xml extension, the Bulgarian one is UTF-16), and that two runs give the
// same passages with unique ids.
func TestSplitRealCorpora(t *testing.T) {
	for _, path := range []string{scifactPath, faqPath, enterpriseNDJSON, gensimEnwiki, gensimBgwiki} {
		t.Run(path, func(t *testing.T) {
			docs, _ := readPath(t, path, Options{})
			sp, _ := NewSplitter(SplitOptions{})
			ids := map[string]bool{}
			total := 0
			for _, d := range docs {
				ps := sp.Split(d)
				checkPassages(t, sp, d, ps)
				if again := sp.Split(d); !reflect.DeepEqual(again, ps) {
					t.Fatalf("doc %s: second split differs", d.ID)
				}
				for _, p := range ps {
					if ids[p.ID] {
						t.Fatalf("duplicate passage id %s", p.ID)
					}
					ids[p.ID] = true
				}
				total += len(ps)
			}
			if total < len(docs) {
				t.Errorf("%d passages for %d documents", total, len(docs))
			}
			t.Logf("%d documents, %d passages", len(docs), total)
		})
	}
}

// FuzzSentenceEnd holds sentenceEnd's shortcut to the whole test.
func FuzzSentenceEnd(f *testing.F) {
	for _, w := range []string{"end.", "end", "end,", "end.)", `"end."`, "终。", "x」", "a’", "a»", "1998.", "Dr.", ""} {
		f.Add(w, "Next")
	}
	f.Fuzz(func(t *testing.T, w, next string) {
		if got, want := sentenceEnd(w, next), endsSentence(w, next); got != want {
			t.Fatalf("sentenceEnd(%q, %q) = %v, without the shortcut %v", w, next, got, want)
		}
	})
}

// checkWholeSection holds wholeSection to packSection and joinUnits: where it takes the
// section whole, they make the same one passage (or none).
func checkWholeSection(t *testing.T, prefix, text string, budget int) {
	t.Helper()
	got, words, ok := wholeSection(prefix, text, budget)
	if !ok {
		if n := len(strings.Fields(text)); n <= budget && !strings.ContainsFunc(text, func(r rune) bool { return r >= cjkFrom }) {
			t.Fatalf("wholeSection(%q, %d) refused %d words", text, budget, n)
		}
		return
	}
	var want []string
	for _, chunk := range packSection(text, budget) {
		want = append(want, joinUnits(prefix, chunk))
	}
	switch {
	case words == 0 && len(want) != 0:
		t.Fatalf("wholeSection(%q, %d): no words, packSection %q", text, budget, want)
	case words > 0 && (len(want) != 1 || want[0] != got):
		t.Fatalf("wholeSection(%q, %d) = %q, packSection %q", text, budget, got, want)
	case words != len(strings.Fields(text)):
		t.Fatalf("wholeSection(%q, %d): %d words, strings.Fields %d", text, budget, words, len(strings.Fields(text)))
	}
}

func TestWholeSection(t *testing.T) {
	texts := append([]string{
		"One sentence. Another one!\n\nA new paragraph, e.g. this.", numberedWords(16, 0), numberedWords(17, 0),
		"café crème\u00a0au lait\u2003x", "a\u3000b", "北京 is", "x。 y", "a\xffb", "Dr. Who\nU.S. x\n\n\n y",
	}, spaceCases...)
	for _, text := range texts {
		for _, budget := range []int{1, 2, 16, 120} {
			for _, prefix := range []string{"", "Title | "} {
				checkWholeSection(t, prefix, text, budget)
			}
		}
	}
	if _, _, ok := wholeSection("", numberedWords(16, 0), 16); !ok {
		t.Fatal("16 words refused at a budget of 16")
	}
}

func FuzzWholeSection(f *testing.F) {
	f.Add("T | ", "One sentence. Another one!\n\nA new paragraph.", 20)
	f.Add("", "café\u00a0crème \u2003 x", 3)
	f.Add("", "北京 是", 5)
	f.Fuzz(func(t *testing.T, prefix, text string, budget int) {
		checkWholeSection(t, prefix, text, 1+abs(budget)%200)
	})
}

func FuzzSplit(f *testing.F) {
	f.Add("Title", "Sec", "One sentence. Another one!\n\nA new paragraph, e.g. this.", 20)
	f.Add("", "", numberedWords(300, 7), 16)
	f.Add("a b c d e f g h i j", "k l m n o p", numberedWords(50, 0), 16)
	f.Add("T", "", "x\ny\n\n\nz.  Q? R", 120)
	f.Add("北京", "历史", strings.Repeat("北京是中华人民共和国的首都，也是全国的政治和文化中心。", 30), 16)
	f.Add("東京", "", "「東京は日本の首都である。」と彼は言った。"+strings.Repeat("漢", 500), 20)
	f.Fuzz(func(t *testing.T, title, section, text string, maxWords int) {
		maxWords = minMaxWords + abs(maxWords)%200
		sp, err := NewSplitter(SplitOptions{MaxWords: maxWords})
		if err != nil {
			t.Fatal(err)
		}
		doc := Document{ID: "f", Title: title, Sections: []Section{{Name: section, Text: text}, {Text: text}}}
		ps := sp.Split(doc)
		var want []string
		for _, s := range doc.Sections {
			want = append(want, strings.Fields(s.Text)...)
		}
		var got []string
		for _, p := range ps {
			if n := len(strings.Fields(p.Text)); n > maxWords {
				t.Fatalf("passage %s: %d words > %d", p.ID, n, maxWords)
			}
			prefix := sp.prefix(strings.Fields(doc.Title), strings.Fields(p.Section))
			if pw, w := wordsWeight(prefix), wordsWeight(strings.Fields(p.Text)); pw <= maxWords/2 && w > maxWords {
				t.Fatalf("passage %s weighs %d > %d", p.ID, w, maxWords)
			}
			prefixText := strings.Join(sp.prefix(strings.Fields(doc.Title), strings.Fields(p.Section)), " ")
			body, ok := strings.CutPrefix(p.Text, prefixText)
			if !ok {
				t.Fatalf("passage %q does not start with prefix %q", p.Text, prefixText)
			}
			bw := strings.Fields(body)
			if len(bw) == 0 {
				t.Fatalf("empty passage %q", p.Text)
			}
			got = append(got, bw...)
		}
		if !sameWordsCutInCJK(got, want) {
			t.Fatalf("words not reproduced:\n got %q\nwant %q", got, want)
		}
	})
}

func BenchmarkSplitSciFact(b *testing.B) {
	docs, _ := readPath(b, scifactPath, Options{})
	sp, _ := NewSplitter(SplitOptions{})
	var bytes int64
	for _, d := range docs {
		bytes += int64(len(d.Title) + len(d.Sections[0].Text))
	}
	b.SetBytes(bytes)
	b.ResetTimer()
	passages := 0
	for b.Loop() {
		for _, d := range docs {
			passages += len(sp.Split(d))
		}
	}
	b.ReportMetric(float64(passages)/b.Elapsed().Seconds(), "passages/s")
}

// BenchmarkOpenSplit measures the whole corpus side (read, decode, clean, split) per input.
func BenchmarkOpenSplit(b *testing.B) {
	for _, path := range []string{scifactPath, enterpriseNDJSON, gensimEnwiki} {
		b.Run(filepath.Base(path), func(b *testing.B) {
			sp, _ := NewSplitter(SplitOptions{})
			passages := 0
			for b.Loop() {
				docs, _ := readPath(b, path, Options{})
				for _, d := range docs {
					passages += len(sp.Split(d))
				}
			}
			b.ReportMetric(float64(passages)/b.Elapsed().Seconds(), "passages/s")
		})
	}
}
