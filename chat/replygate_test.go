package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"

	"github.com/kairos-rag/kairos/internal/sharedtest"
	"path/filepath"
	"strings"
	"testing"
)

// gateRun feeds text to a gate in pieces of n bytes and returns what it sent, piece by piece,
// and what it dropped.
func gateRun(t testing.TB, attr *attributor, text string, n int, truncated bool, markers ...int) ([]string, []DroppedSentence, *replyGate) {
	t.Helper()
	var sent []string
	var dropped []DroppedSentence
	g := newReplyGate(attr, 0, func(s string) { sent = append(sent, s) }, func(d DroppedSentence) { dropped = append(dropped, d) })
	g.markers = markers
	ctx := context.Background()
	for i := 0; i < len(text); i += n {
		if err := g.write(ctx, "test", text[i:min(i+n, len(text))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.flush(ctx, "test", truncated); err != nil {
		t.Fatal(err)
	}
	if strings.Join(sent, "") != g.text() {
		t.Errorf("sent %q, text %q", sent, g.text())
	}
	return sent, dropped, g
}

// A reply cut at the token limit keeps what it finished saying: never a number cut at its
// point, never a sentence without its end.
func TestReplyGateKeepsWholeSentencesOfACutOutput(t *testing.T) {
	tests := []struct{ in, want string }{
		{"One. Two [1]. Thr", "One. Two."},
		{"One. [2] Two", "One."},
		{"It cost 3.14 dollars and", ""},
		{"It cost 3.", ""},
		{"“Quoted.” Next", "“Quoted.”"},
		{"第一句。第二", "第一句。"},
		{"no end at all", ""},
		{"Yo-Yo Ma is best known, says Dr. Smith of the", ""},
		{"Iceland had 383,000 people in 2023, vs. 330,000 in", ""},
		{"Here are some:\n1. Yo-Yo Ma, who won", "Here are some:"},
		{"It opened at the St. Louis fair in 1904. It was", "It opened at the St. Louis fair in 1904."},
		{"Tolkien (J. R. R. Tolkien) wrote it. Then", "Tolkien (J. R. R. Tolkien) wrote it."},
	}
	for _, tt := range tests {
		for _, n := range []int{1, 4, 1000} {
			if _, _, g := gateRun(t, nil, tt.in, n, true); g.text() != tt.want {
				t.Errorf("cut %q in pieces of %d: %q, want %q", tt.in, n, g.text(), tt.want)
			}
		}
	}
}

// The gate cites each sentence with the passages that support it, numbered as the user reads
// them: the LLM's marker counts where its passage supports the sentence, a wrong one is
// re-bound, an invented sentence is dropped with its marker, and a sentence that leans on a
// dropped one ("That emperor ...") goes with it.
func TestReplyGateBindsSentencesToTheirPassages(t *testing.T) {
	attr := newAttributor(testTerms(vitaminD, napoleon))
	pool := attr.add(hits(vitaminD, napoleon)...)
	tests := []struct {
		name, in, want string
		dropped        int
	}{
		{"markers right", "Vitamin D was identified in 1922 by Elmer McCollum [1]. Napoleon crowned himself Emperor of the French in 1804 [2].",
			"Vitamin D was identified in 1922 by Elmer McCollum [1]. Napoleon crowned himself Emperor of the French in 1804 [2].", 0},
		{"markers swapped", "Napoleon crowned himself Emperor of the French in 1804 [1]. Vitamin D was identified in 1922 by Elmer McCollum [2].",
			"Napoleon crowned himself Emperor of the French in 1804 [1]. Vitamin D was identified in 1922 by Elmer McCollum [2].", 0},
		{"invented sentence with a marker", "Vitamin D is produced in the skin [1]. Vitamin D also reverses bone loss in every patient [1].",
			"Vitamin D is produced in the skin [1].", 1},
		{"no markers", "Vitamin D is produced in the skin on exposure to sunlight.", "Vitamin D is produced in the skin on exposure to sunlight [1].", 0},
		{"name split over two sentences", "It was first described by a French emperor. That emperor was Napoleon.", "", 2},
		{"name split around chat", "It was first described by a French emperor. Fun fact! That emperor was Napoleon.", "Fun fact!", 2},
		{"name split around repeated chat", "Fun fact! It was first described by a French emperor. Fun fact! That emperor was Napoleon.", "Fun fact!", 3},
		{"repeats", "Vitamin D is produced in the skin. Vitamin D is produced in the skin! It is produced in the skin.",
			"Vitamin D is produced in the skin [1].", 2},
		{"chat kept, question uncited", "Sure! Vitamin D is produced in the skin. Would you like to know more about vitamin D?",
			"Sure! Vitamin D is produced in the skin [1]. Would you like to know more about vitamin D?", 0},
		{"list", "- Vitamin D is produced in the skin.\n- It was identified in 1922.",
			"- Vitamin D is produced in the skin [1].\n- It was identified in 1922 [1].", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, n := range []int{3, 1000} {
				_, dropped, g := gateRun(t, attr, tt.in, n, false, pool...)
				if g.text() != tt.want || len(dropped) != tt.dropped {
					t.Errorf("pieces of %d: %q, dropped %+v; want %q and %d dropped", n, g.text(), dropped, tt.want, tt.dropped)
				}
			}
		})
	}
}

// The reply ends at the last whole sentence within its length limit.
func TestReplyGateLengthLimit(t *testing.T) {
	var b strings.Builder
	for i := range 40 {
		fmt.Fprintf(&b, "Sentence number %d is here. ", i)
	}
	g := newReplyGate(nil, 200, nil, nil)
	ctx := context.Background()
	if err := g.write(ctx, "x", b.String()); err != nil {
		t.Fatal(err)
	}
	g.flush(ctx, "x", false)
	if n := len(g.text()); n > 200 || n < 150 || !strings.HasSuffix(g.text(), "here.") {
		t.Errorf("%d bytes: %q", n, g.text())
	}
}

// FuzzReplyGate: whatever the text and however it arrives, the gate sends the same reply, sent
// piece by piece as decided, and every sentence it sent passes the check again.
func FuzzReplyGate(f *testing.F) {
	for _, s := range []string{
		"Vitamin D was identified in 1922 by Elmer McCollum [1]. Napoleon discovered it in 1850 [2].",
		"Yes! It was first described by a French emperor. That emperor was Napoleon.\nRelevance: 100/100",
		"- Vitamin D is produced in the skin.\n- it was discovered by napoleon bonaparte in MDCCCL.",
		"Napo\u034fleon Bona\u034fparte in ¹⁸⁵⁰. Vitamin D is a group of fat-soluble secosteroids.",
	} {
		f.Add(s, uint8(5))
	}
	attr := newAttributor(testTerms(vitaminD, napoleon))
	attr.add(hits(vitaminD, napoleon)...)
	f.Fuzz(func(t *testing.T, s string, size uint8) {
		_, _, whole := gateRun(t, attr, s, len(s)+1, false)
		_, _, pieces := gateRun(t, attr, s, int(size%16)+1, false)
		if whole.text() != pieces.text() {
			t.Fatalf("whole %q, in pieces %q", whole.text(), pieces.text())
		}
		for _, sent := range sentences(whole.text()) {
			c, err := attr.check(context.Background(), sent, nil)
			if err != nil {
				t.Fatal(err)
			}
			if c.kind == sentDropped {
				t.Errorf("sent %q, which the check drops (%s)", sent, c.reason)
			}
		}
	})
}

// The draft prompt's own examples pass the check against their facts: the few-shot examples
// teach the model the rewording the check lets through.
func TestDraftPromptExamplesPass(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("prompts", PromptDraft+".tmpl"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, b := range strings.Split(string(src), "=== user ===\n")[1:] {
		in, draft, ok := strings.Cut(b, "=== assistant ===\n")
		if !ok {
			continue // the live turn
		}
		conv, list, _ := strings.Cut(in, "\nVerified facts:\n")
		user := conv[strings.LastIndex(conv, "User: ")+len("User: "):]
		bySource := map[string][]string{}
		var order []string
		for _, l := range strings.Split(list, "\n") {
			if f, ok := strings.CutPrefix(l, "- "); ok {
				m := markerRe.FindString(f)
				if _, seen := bySource[m]; !seen {
					order = append(order, m)
				}
				bySource[m] = append(bySource[m], stripMarkers(f))
			}
		}
		var texts []string
		for _, m := range order {
			texts = append(texts, "Source"+strings.TrimSpace(m)+" | "+strings.Join(bySource[m], " "))
		}
		attr := newAttributor(wikiTerms(t), user)
		marks := attr.add(hits(texts...)...)
		g := newReplyGate(attr, 0, nil, func(d DroppedSentence) { t.Errorf("example %q: dropped %q: %s", user, d.Text, d.Reason) })
		g.markers = marks
		ctx := context.Background()
		if err := g.write(ctx, "draft", strings.TrimSpace(draft)); err != nil {
			t.Fatal(err)
		}
		g.flush(ctx, "draft", false)
		n++
	}
	if n < 4 {
		t.Errorf("read %d examples from the draft prompt", n)
	}
}

var (
	wikiTermsOnce sync.Once
	wikiTermsDF   *docFreqs
)

// wikiTerms is a TermStats over the Wikipedia leads of shared/data/wikichat-topics (head and
// tail articles): which words are rare in English Wikipedia, as an index of it would say.
func wikiTerms(t testing.TB) TermStats {
	t.Helper()
	wikiTermsOnce.Do(func() {
		var texts []string
		for _, f := range []string{"head_articles_en.json", "tail_articles_en.json"} {
			b, err := os.ReadFile(sharedtest.Join("data/wikichat-topics/" + f))
			if err != nil {
				t.Fatal(err)
			}
			var leads map[string]string
			if err := json.Unmarshal(b, &leads); err != nil {
				t.Fatal(err)
			}
			for title, lead := range leads {
				texts = append(texts, title+" | "+lead)
			}
		}
		wikiTermsDF = newDocFreqs(texts...)
	})
	return wikiTermsDF
}

// FuzzSentences: any text is cut into sentences that give it back whole.
func FuzzSentences(f *testing.F) {
	for _, s := range []string{"One. Two [1]. Thr", "St. Louis. Dr. Smith\n1. A\n2. B", "第一句。第二", "It cost 3.14. ", "e.g. this. That"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got := strings.Join(sentences(s), ""); got != s {
			t.Fatalf("sentences(%q) joined = %q", s, got)
		}
	})
}

// A fact that opens with a pronoun stands for the subject of the fact before it: a passage
// supporting it must be one that supports that fact or name one of its names. Each sentence
// passed on its own, and together they made Wellington the emperor.
func TestReplyGatePronounsKeepTheirSubject(t *testing.T) {
	const wellington = "Arthur Wellesley | Wellington was born in Dublin in 1769."
	const emperor = "French Empire | Napoleon was Emperor of the French."
	const coronation = "Napoleon | Napoleon was born in Corsica in 1769 and rose to prominence. He was crowned Emperor of the French in 1804."
	attr := newAttributor(testTerms(wellington, emperor, coronation))
	pool := attr.add(hits(wellington, emperor, coronation)...)
	tests := []struct {
		name, in, want string
		dropped        int
	}{
		{"another's subject", "Wellington was born in Dublin in 1769 [1]. He was Emperor of the French [2].", "Wellington was born in Dublin in 1769 [1].", 1},
		{"the same subject in another passage", "Napoleon was born in Corsica in 1769 [3]. He was Emperor of the French [2].",
			"Napoleon was born in Corsica in 1769 [1]. He was Emperor of the French [2].", 0},
		{"the same passage", "Napoleon was born in Corsica in 1769 [3]. He was crowned Emperor of the French in 1804 [3].",
			"Napoleon was born in Corsica in 1769 [1]. He was crowned Emperor of the French in 1804 [1].", 0},
		{"a numbered list", "1. Wellington was born in Dublin in 1769 [1].\n2. He was Emperor of the French [2].", "1. Wellington was born in Dublin in 1769 [1].", 1},
		{"an opening participle", "Born in Corsica in 1769, Napoleon rose to prominence [3]. He was Emperor of the French [2].",
			"Born in Corsica in 1769, Napoleon rose to prominence [1]. He was Emperor of the French [2].", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, dropped, g := gateRun(t, attr, tt.in, 1000, false, pool...)
			if g.text() != tt.want || len(dropped) != tt.dropped {
				t.Errorf("%q, dropped %+v; want %q and %d dropped", g.text(), dropped, tt.want, tt.dropped)
			}
		})
	}
}
