package chat

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/corpus/timex"
)

func TestParseQueryPlan(t *testing.T) {
	tests := []struct {
		name, in string
		want     QueryPlan
		wantErr  bool
	}{
		{"canonical", "Search: yes\nQuery: Eiffel Tower height\nTime: none",
			QueryPlan{true, "Eiffel Tower height", timex.Spec{Kind: timex.KindNone}}, false},
		{"case, markdown, quotes, chatter", "Sure! Here is my plan.\n**SEARCH**:  Yes.\n  query : \"2020 Olympics host\"\nTIME: Year=2020\nHope this helps.",
			QueryPlan{true, "2020 Olympics host", timex.Spec{Kind: timex.KindRange, From: 2020, To: 2020}}, false},
		{"recent", "Search: yes\nQuery: Israel-Hamas war ceasefire\nTime: recent",
			QueryPlan{true, "Israel-Hamas war ceasefire", timex.Spec{Kind: timex.KindRecent}}, false},
		{"range reversed", "Search: yes\nQuery: x\nTime: 1998 to 1990",
			QueryPlan{true, "x", timex.Spec{Kind: timex.KindRange, From: 1990, To: 1998}}, false},
		{"no search", "Search: no\nQuery: none\nTime: none", QueryPlan{Search: false}, false},
		{"query only means yes", "Query: Marie Curie", QueryPlan{true, "Marie Curie", timex.Spec{Kind: timex.KindNone}}, false},
		{"missing time is none", "Search: yes\nQuery: pandas", QueryPlan{true, "pandas", timex.Spec{Kind: timex.KindNone}}, false},
		{"yes without query", "Search: yes\nTime: none", QueryPlan{}, true},
		{"garbage search value", "Search: perhaps\nQuery: x", QueryPlan{}, true},
		{"prose", "I think we should look it up.", QueryPlan{}, true},
		{"empty", "", QueryPlan{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseQueryPlan(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err != nil {
				if !errors.Is(err, ErrUnusable) {
					t.Errorf("error %v does not wrap ErrUnusable", err)
				}
				return
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseRefinement(t *testing.T) {
	in := "Relevance: answers it. 90/100\n**Naturalness**: stiff 60 / 100\n- Non-repetition: repeats, 40/100\nTemporal correctness: fine 100/100\n\nRevised response: \"They beat Croatia 4-2.\"\nUser: thanks"
	got, err := ParseRefinement(in)
	if err != nil {
		t.Fatal(err)
	}
	want := Refinement{Scores: map[string]int{"relevance": 90, "naturalness": 60, "non-repetition": 40, "temporal correctness": 100},
		Revised: "They beat Croatia 4-2."}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if r, err := ParseRefinement("revised RESPONSE:\nHello there."); err != nil || r.Revised != "Hello there." || len(r.Scores) != 0 {
		t.Errorf("no scores: got %+v, %v", r, err)
	}
	for _, bad := range []string{"Relevance: 100/100", "Revised response:   ", ""} {
		if _, err := ParseRefinement(bad); !errors.Is(err, ErrUnusable) {
			t.Errorf("ParseRefinement(%q) err = %v, want ErrUnusable", bad, err)
		}
	}
}

func TestParseLabeledAndFacts(t *testing.T) {
	labeledTests := []struct{ in, label, want string }{
		{"Topic: Miles Davis", "topic", "Miles Davis"},
		{"Sure.\n**topic**:  \"Kind of Blue\"", "Topic", "Kind of Blue"},
		{"Miles Davis's album", "topic", "Miles Davis's album"},
		{"Clarified: My beagle chews\nshoes a lot", "clarified", "My beagle chews shoes a lot"},
		{"Reasoning: x\nMemory: I have a cat.", "memory", "I have a cat."},
	}
	for _, tt := range labeledTests {
		if got, err := ParseLabeled(tt.in, tt.label); err != nil || got != tt.want {
			t.Errorf("ParseLabeled(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	if _, err := ParseLabeled("two\nlines", "topic"); err == nil {
		t.Error("ParseLabeled accepted two unlabeled lines")
	}

	facts, err := ParseMemoryFacts("Here you go:\n- User: The user moved to Lisbon.\nbot: The bot grew up near the sea.\nUser: none")
	want := []MemoryFact{{"user", "The user moved to Lisbon."}, {"bot", "The bot grew up near the sea."}}
	if err != nil || !reflect.DeepEqual(facts, want) {
		t.Errorf("ParseMemoryFacts = %+v, %v", facts, err)
	}
	if f, err := ParseMemoryFacts("None."); err != nil || f != nil {
		t.Errorf("None: %+v %v", f, err)
	}
	if _, err := ParseMemoryFacts("the user is nice"); err == nil {
		t.Error("ParseMemoryFacts accepted prose")
	}
}

func TestParseResponseAndKnowledge(t *testing.T) {
	for in, want := range map[string]string{
		"Bot: Hello there!":                  "Hello there!",
		"  \"Quoted reply.\"  ":              "Quoted reply.",
		"Sure thing.\nUser: and then?\nBot:": "Sure thing.",
		"System replies: Two lines\nof text": "Two lines\nof text",
	} {
		if got, err := ParseResponse(in); err != nil || got != want {
			t.Errorf("ParseResponse(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseResponse(" \n"); err == nil {
		t.Error("empty response accepted")
	}
	if got, _ := ParseKnowledge("\n( hi ) Football => Football is a team sport.\nmore"); got != "Football is a team sport." {
		t.Errorf("ParseKnowledge = %q", got)
	}
}

// The fuzzers check that parsers never panic and that what they return is well formed.
func FuzzParseQueryPlan(f *testing.F) {
	for _, s := range []string{"Search: yes\nQuery: a\nTime: year=1994", "Search: no", "query: x\ntime: recent", "Time: 2020-1990"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseQueryPlan(s)
		if err != nil {
			return
		}
		if p.Search && strings.TrimSpace(p.Query) == "" {
			t.Errorf("search with empty query from %q", s)
		}
		if p.Time.Kind == timex.KindRange && p.Time.From > p.Time.To {
			t.Errorf("inverted range %+v", p.Time)
		}
	})
}

func FuzzParseList(f *testing.F) {
	for _, s := range []string{"- a\n- b", "None", "1. x\n2) y", "x:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		items, err := ParseList(s)
		for _, it := range items {
			if strings.TrimSpace(it) == "" {
				t.Errorf("empty item from %q", s)
			}
		}
		if err != nil && items != nil {
			t.Errorf("items with error")
		}
		for _, it := range items {
			if metaItemRe.MatchString(it) || strings.HasSuffix(it, "?") {
				t.Errorf("prose item %q from %q", it, s)
			}
		}
	})
}

func FuzzParseVerdict(f *testing.F) {
	for _, s := range []string{"Verdict: SUPPORTS", "refuted", "Reasoning: x\nVerdict: nei"} {
		f.Add(s)
	}
	for _, s := range []string{"Verdict: NOT SUPPORTED", "Verdict: SUPPORTS\nbut no", "supports the first half but", "Verdict: SUPPORTS\nVerdict: REFUTES"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, _, err := ParseVerdict(s)
		if v != Supports && v != Refutes && v != NotEnoughInfo {
			t.Errorf("verdict %q from %q", v, s)
		}
		if err != nil && v != NotEnoughInfo {
			t.Errorf("unusable output gave %q, want NOT ENOUGH INFO: %q", v, s)
		}
		if v == Supports && negationRe.MatchString(verdictText(s)) {
			t.Errorf("SUPPORTS from a negated or hedged verdict: %q", s)
		}
	})
}

func FuzzParseRefinement(f *testing.F) {
	f.Add("Relevance: ok 90/100\nRevised response: hi")
	f.Add("revised response")
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRefinement(s)
		for k, v := range r.Scores {
			if v < 0 || v > 100 {
				t.Errorf("score %s=%d", k, v)
			}
		}
		if err == nil && r.Revised == "" {
			t.Error("empty revised response without error")
		}
		if err == nil && (strings.ContainsAny(r.Revised, "\x00\x1b\r") || isKnownLabel(r.Revised)) {
			t.Errorf("revision %q keeps control characters or is a label", r.Revised)
		}
	})
}

func FuzzParseOthers(f *testing.F) {
	f.Add("Topic: x\nUser: the user likes y\nBot: none")
	f.Add("( a ) b => c")
	f.Fuzz(func(t *testing.T, s string) {
		if v, err := ParseLabeled(s, "topic"); err == nil && v == "" {
			t.Error("empty labeled value without error")
		}
		if facts, err := ParseMemoryFacts(s); err == nil {
			for _, fa := range facts {
				if (fa.About != "user" && fa.About != "bot") || fa.Text == "" {
					t.Errorf("bad fact %+v", fa)
				}
			}
		}
		if k, err := ParseKnowledge(s); err == nil && k == "" {
			t.Error("empty knowledge without error")
		}
		if r, err := ParseResponse(s); err == nil && r == "" {
			t.Error("empty response without error")
		} else if err == nil && CleanControl(r) != r {
			t.Errorf("response %q keeps control characters", r)
		}
	})
}

// verdictText is the text of the verdict lines of s, or all of s when it has none.
func verdictText(s string) string {
	clean := strings.ReplaceAll(strings.ReplaceAll(s, "**", ""), "__", "")
	var out []string
	for _, m := range verdictLineRe.FindAllStringSubmatch(clean, -1) {
		out = append(out, m[1])
	}
	if out == nil {
		return s
	}
	return strings.Join(out, "\n")
}
