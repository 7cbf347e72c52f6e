package chat

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// completeSentences keeps what a cut output finished saying: never a number cut at its point,
// never a sentence without its end.
func TestCompleteSentencesCut(t *testing.T) {
	tests := []struct{ in, want string }{
		{"One. Two [1]. Thr", "One. Two [1]."},
		{"One. [2] Two", "One. [2]"},
		{"It cost 3.14 dollars and", ""},
		{"It cost 3.", ""},
		{"“Quoted.” Next", "“Quoted.”"},
		{"第一句。第二", "第一句。"},
		{"no end at all", ""},
		{"Yo-Yo Ma is best known, says Dr. Smith of the", ""},
		{"Iceland had 383,000 people in 2023, vs. 330,000 in", ""},
		{"Here are some:\n1. Yo-Yo Ma, who won", ""},
		{"It opened at the St. Louis fair in 1904. It was", "It opened at the St. Louis fair in 1904."},
		{"Tolkien (J. R. R. Tolkien) wrote it. Then", "Tolkien (J. R. R. Tolkien) wrote it."},
	}
	for _, tt := range tests {
		if got := completeSentences(tt.in); got != tt.want {
			t.Errorf("completeSentences(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// draftSupported drops the sentence that adds a number or a full name to the facts, and keeps
// the user's name where the draft denies it.
func TestDraftSupported(t *testing.T) {
	tests := []struct {
		name, draft, user string
		facts             []string
		dropped           int
	}{
		{"a word before the name", "However, Marie Curie won it in 1903 [1].", "Who won?", []string{"Marie Curie won the Nobel Prize in Physics in 1903. [1]"}, 0},
		{"a title before the name", "President Abraham Lincoln signed it in 1863 [1].", "Who signed it?", []string{"Abraham Lincoln signed the Emancipation Proclamation in 1863. [1]"}, 0},
		{"a fuller name", "Mount Everest is 8,849 m tall [1].", "How tall is it?", []string{"Everest's height is 8,849 m. [1]"}, 0},
		{"a shorter name", "Elmer McCollum identified it in 1922 [1].", "Who?", []string{"Elmer V. McCollum identified vitamin D in 1922. [1]"}, 0},
		{"a decade", "It was found in the 1920s [1].", "When?", []string{"Vitamin D was identified in 1922. [1]"}, 0},
		{"a century", "Darwin published it in the 19th century [1].", "When?", []string{"Darwin published On the Origin of Species in 1859. [1]"}, 0},
		{"digits for a word", "She wrote 4 papers on it [1].", "How many?", []string{"She wrote four papers on radium. [1]"}, 0},
		{"a scale word", "It cost $1.5 million [1].", "How much?", []string{"The statue cost $1,500,000 in 1886. [1]"}, 0},
		{"a numbered list", "Here are two:\n1. Yo-Yo Ma [1]\n2. Jacqueline du Pré [2]", "Who?", []string{"Yo-Yo Ma is a cellist. [1]", "Jacqueline du Pré was a cellist. [2]"}, 0},
		{"an abbreviation", "It opened at the St. Louis World's Fair in 1904 [1].", "Where?", []string{"It opened at the 1904 World's Fair in St. Louis. [1]"}, 0},
		{"an invented century", "It was found in the 18th century [1].", "When?", []string{"Vitamin D was identified in 1922. [1]"}, 1},
		{"the user's name asserted", "Yes, Napoleon Bonaparte discovered vitamin D in 1922 [1].",
			"Did Napoleon Bonaparte discover vitamin D in 1922?", []string{"Vitamin D was identified in 1922 by Elmer McCollum. [1]"}, 1},
		{"the user's lone name asserted", "It was discovered in 1922 by Napoleon [1].",
			"Did Napoleon discover vitamin D?", []string{"Vitamin D was identified in 1922 by Elmer McCollum. [1]"}, 1},
		{"an invented year", "Vitamin D was identified in 1922 by Elmer McCollum [1]. It was first sold in 1931.",
			"Who found vitamin D?", []string{"Vitamin D was identified in 1922 by Elmer McCollum. [1]"}, 1},
		{"an invented full name", "Vitamin D was identified in 1922 by Elmer McCollum [1]. Napoleon Bonaparte studied it too.",
			"Who found vitamin D?", []string{"Vitamin D was identified in 1922 by Elmer McCollum. [1]"}, 1},
		{"the user's name, denied", "No, Napoleon Bonaparte did not discover vitamin D; it was identified in 1922 by Elmer McCollum [1].",
			"Did Napoleon Bonaparte discover vitamin D?", []string{"Vitamin D was identified in 1922 by Elmer McCollum. [1]"}, 0},
		{"a list, a line each", "- Identified in 1922 [1]\n- Sold from 1931",
			"When?", []string{"Vitamin D was identified in 1922 by Elmer McCollum. [1]"}, 1},
		{"a count spelled out, invented", "Marie Curie won three Nobel Prizes [1].", "How many?", []string{"Marie Curie won two Nobel Prizes. [1]"}, 1},
		{"the user's count asserted", "Yes, she won three Nobel Prizes [1].", "Did she win three Nobel Prizes?", []string{"Marie Curie won two Nobel Prizes. [1]"}, 1},
		{"a count spelled out as the facts' digits", "She wrote four papers and was a three-time laureate [1].", "How many?", []string{"She wrote 4 papers and won 3 times. [1]"}, 0},
		{"a count with a scale word", "The city has three million people [1].", "How big?", []string{"Its population was 3,000,000 in 2020. [1]"}, 0},
		{"a count the facts spell out", "Ten people died [1].", "How many?", []string{"The storm killed ten people. [1]"}, 0},
		{"two and one are not counts checked", "The two countries signed it; one of them left [1].", "Who?", []string{"France and Germany signed the treaty. [1]"}, 0},
	}
	for _, tt := range tests {
		kept, dropped := draftSupported(tt.draft, tt.facts, nil, tt.user)
		if len(dropped) != tt.dropped {
			t.Errorf("%s: dropped %q, want %d sentences", tt.name, dropped, tt.dropped)
		}
		if tt.dropped == 0 && kept != tt.draft {
			t.Errorf("%s: kept %q, want the draft whole", tt.name, kept)
		}
	}
}

// The draft prompt's own examples (rewording, chat, single capitalised words such as
// "Astronauts" and "US") keep every sentence.
func TestDraftPromptExamplesKept(t *testing.T) {
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
		var facts []string
		for _, l := range strings.Split(list, "\n") {
			if f, ok := strings.CutPrefix(l, "- "); ok {
				facts = append(facts, f)
			}
		}
		draft = strings.TrimSpace(draft)
		if kept, dropped := draftSupported(draft, facts, nil, user); len(dropped) > 0 || kept != draft {
			t.Errorf("example draft %q: dropped %q", draft, dropped)
		}
		n++
	}
	if n < 4 {
		t.Errorf("read %d examples from the draft prompt", n)
	}
}

// FuzzSentences: any text is cut into sentences that give it back whole, and a cut output's
// complete sentences are a prefix of it.
func FuzzSentences(f *testing.F) {
	for _, s := range []string{"One. Two [1]. Thr", "St. Louis. Dr. Smith\n1. A\n2. B", "第一句。第二", "It cost 3.14. ", "e.g. this. That"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got := strings.Join(sentences(s), ""); got != s {
			t.Fatalf("sentences(%q) joined = %q", s, got)
		}
		if c := completeSentences(s); !strings.HasPrefix(strings.TrimSpace(s), c) {
			t.Fatalf("completeSentences(%q) = %q, not a prefix", s, c)
		}
	})
}
