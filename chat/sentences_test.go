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
		{"an invented year", "Vitamin D was identified in 1922 by Elmer McCollum [1]. It was first sold in 1931.",
			"Who found vitamin D?", []string{"Vitamin D was identified in 1922 by Elmer McCollum. [1]"}, 1},
		{"an invented full name", "Vitamin D was identified in 1922 by Elmer McCollum [1]. Napoleon Bonaparte studied it too.",
			"Who found vitamin D?", []string{"Vitamin D was identified in 1922 by Elmer McCollum. [1]"}, 1},
		{"the user's name, denied", "No, Napoleon Bonaparte did not discover vitamin D; it was identified in 1922 by Elmer McCollum [1].",
			"Did Napoleon Bonaparte discover vitamin D?", []string{"Vitamin D was identified in 1922 by Elmer McCollum. [1]"}, 0},
		{"a list, a line each", "- Identified in 1922 [1]\n- Sold from 1931",
			"When?", []string{"Vitamin D was identified in 1922 by Elmer McCollum. [1]"}, 1},
	}
	for _, tt := range tests {
		kept, dropped := draftSupported(tt.draft, tt.facts, tt.user)
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
		if kept, dropped := draftSupported(draft, facts, user); len(dropped) > 0 || kept != draft {
			t.Errorf("example draft %q: dropped %q", draft, dropped)
		}
		n++
	}
	if n < 4 {
		t.Errorf("read %d examples from the draft prompt", n)
	}
}
