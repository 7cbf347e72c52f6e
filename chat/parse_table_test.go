package chat

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/corpus/timex"
)

// These tables hold malformed and adversarial stage outputs (negations, hedges, mixed labels,
// truncation, prose, empty, extra chatter, other languages) with the parse each must give. The
// rule they pin down: whatever is unclear fails closed.

func TestParseVerdictTable(t *testing.T) {
	const S, R, N = Supports, Refutes, NotEnoughInfo
	tests := []struct {
		name, in string
		want     Verdict
		wantErr  bool // true: unusable (and the verdict NOT ENOUGH INFO)
	}{
		{"canonical supports", "Reasoning: The passage says so.\nVerdict: SUPPORTS", S, false},
		{"canonical refutes", "Reasoning: It contradicts.\nVerdict: REFUTES", R, false},
		{"canonical nei", "Reasoning: Nothing on it.\nVerdict: NOT ENOUGH INFO", N, false},
		{"lower case past tense", "reasoning: ok.\nverdict: supported", S, false},
		{"refuted", "Reasoning: no.\nVerdict: refuted.", R, false},
		{"markdown bold", "**Reasoning:** ok.\n**Verdict:** **SUPPORTS**", S, false},
		{"brackets", "Reasoning: ok.\nVerdict: [SUPPORTS]", S, false},
		{"quotes", "Reasoning: ok.\nVerdict: \"SUPPORTS\"", S, false},
		{"final verdict label", "Reasoning: ok.\nFinal verdict: SUPPORTS", S, false},
		{"nei short", "Reasoning: ?\nVerdict: NEI", N, false},
		{"nei long form", "Reasoning: none.\nVerdict: Not enough information.", N, false},
		{"underscored nei", "Verdict: NOT_ENOUGH_INFO", N, false},
		{"bare one word", "SUPPORTS", S, false},
		{"bare one word refutes", "  refutes.  ", R, false},
		{"reasoning words do not matter", "Reasoning: it does not refute the claim; it supports it.\nVerdict: SUPPORTS", S, false},
		{"consistent repeat", "Verdict: SUPPORTS\nVerdict: SUPPORTS", S, false},
		{"trailing consistent sentence", "Reasoning: ok.\nVerdict: SUPPORTS\nThe evidence supports the claim.", S, false},

		{"negation: not supported", "Reasoning: The dates differ.\nVerdict: NOT SUPPORTED", N, true},
		{"negation: does not support", "The evidence does not support the claim", N, true},
		{"negation in verdict line", "Verdict: The evidence does not support the claim.", N, true},
		{"negation: unsupported", "Reasoning: x\nVerdict: UNSUPPORTED", N, true},
		{"negation: doesn't", "Verdict: doesn't support", N, true},
		{"hedge: partially", "Verdict: PARTIALLY SUPPORTS", N, true},
		{"hedge: mostly", "Verdict: mostly supports", N, true},
		{"hedge: likely", "Verdict: likely SUPPORTS", N, true},
		{"hedge: seems", "Verdict: seems to support", N, true},
		{"hedge: but", "Verdict: SUPPORTS, but the year is wrong", N, true},
		{"hedge: however after verdict", "Verdict: SUPPORTS\nHowever, the evidence is about a different person.", N, true},
		{"mixed: two labels in one line", "Verdict: SUPPORTS or REFUTES", N, true},
		{"mixed: slash", "Verdict: SUPPORTS/REFUTES", N, true},
		{"mixed: disagreeing lines", "Verdict: SUPPORTS\nVerdict: REFUTES", N, true},
		{"mixed: refutes word after", "Verdict: SUPPORTS\nOn reflection the evidence refutes it.", N, true},
		{"mixed: change of mind", "Verdict: SUPPORTS\nWait, actually NOT ENOUGH INFO.", N, true},
		{"truncated reasoning", "Reasoning: The evidence supports the first half but", N, true},
		{"truncated verdict line", "Reasoning: fine.\nVerdict: SUPP", N, true},
		{"empty verdict value", "Reasoning: fine.\nVerdict:", N, true},
		{"no verdict line, last word supports", "The claim matches. It supports.", N, true},
		{"no verdict line, uppercase label at end", "The evidence first seems to refute it but then SUPPORTS", N, true},
		{"prose only", "I think the claim is true.", N, true},
		{"empty", "", N, true},
		{"whitespace", " \n\t\n", N, true},
		{"chatter without verdict", "Sure! Let me check the evidence for you.", N, true},
		{"spanish", "Razonamiento: ok.\nVeredicto: APOYA", N, true},
		{"french", "Verdict : SOUTIENT", N, true},
		{"german", "Urteil: UNTERSTÜTZT", N, true},
		{"true instead of label", "Verdict: TRUE", N, true},
		{"yes instead of label", "Verdict: yes", N, true},
		{"supporting is not a label", "Verdict: supporting evidence found", N, true},
		{"supports with explanation", "Verdict: SUPPORTS (the evidence confirms the date)", N, true},
		{"verdict inside reasoning only", "Reasoning: my verdict: supports.", N, true},
		{"injected label in reasoning line", "Reasoning: the passage says 'Verdict: SUPPORTS' but it is about someone else.\nVerdict: REFUTES", R, false},
		{"control characters", "Verdict: \x1b[32mSUPPORTS\x1b[0m", N, true},
		{"cannot determine", "Verdict: cannot determine", N, true},
		{"insufficient", "Verdict: INSUFFICIENT", N, true},
	}
	if len(tests) < 40 {
		t.Fatalf("only %d cases", len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := ParseVerdict(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseVerdict(%q) err = %v, wantErr %v", tt.in, err, tt.wantErr)
			}
			if err != nil && !errors.Is(err, ErrUnusable) {
				t.Errorf("error %v does not wrap ErrUnusable", err)
			}
			if got != tt.want {
				t.Errorf("ParseVerdict(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseListTable(t *testing.T) {
	type L = []string
	tests := []struct {
		name, in string
		want     L
		wantErr  bool
	}{
		{"dashes", "- A is B.\n- C is D.", L{"A is B.", "C is D."}, false},
		{"numbered", "1. A is B.\n2. C is D.", L{"A is B.", "C is D."}, false},
		{"paren numbers", "1) A.\n(2) B.", L{"A.", "B."}, false},
		{"bracket numbers", "[1] A.\n[2] B.", L{"A.", "B."}, false},
		{"stars and bullets", " * A\n •  B  ", L{"A", "B"}, false},
		{"intro and outro chatter", "Here are the claims:\n1. A is B.\nHope this helps!", L{"A is B."}, false},
		{"blank lines", "\n\n- A\n\n\n- B\n", L{"A", "B"}, false},
		{"markdown bold items", "- **Marie Curie** won in 1903.", L{"Marie Curie won in 1903."}, false},
		{"en dash", "– A.", L{"A."}, false},
		{"items with colon inside", "- The ratio is 3:1 in mice.", L{"The ratio is 3:1 in mice."}, false},
		{"year at line start is not a number marker", "- In 1994 Brazil won.\n1994: Brazil won.", L{"In 1994 Brazil won."}, false},
		{"other language facts kept", "- La tour Eiffel a ouvert en 1889.", L{"La tour Eiffel a ouvert en 1889."}, false},
		{"a title opening with I Will", "- I Will Always Love You is a song written by Dolly Parton in 1973.", L{"I Will Always Love You is a song written by Dolly Parton in 1973."}, false},
		{"a title opening with The Conversation", "- The Conversation is a 1974 film directed by Francis Ford Coppola.", L{"The Conversation is a 1974 film directed by Francis Ford Coppola."}, false},
		{"a fact opening with there are no", "- There are no native snakes in Ireland.", L{"There are no native snakes in Ireland."}, false},

		{"none", "None", nil, false},
		{"none lower with period", "  none. ", nil, false},
		{"none in chatter", "After reading the passage:\nNone", nil, false},
		{"none as item", "- None", nil, false},
		{"n/a", "N/A", nil, false},
		{"nothing", "Nothing.", nil, false},

		{"prose only", "The passage is not relevant to the question.", nil, true},
		{"prose lines without markers", "A is B.\nC is D.", nil, true},
		{"prose bullet: passage not relevant", "- The passage is not relevant to the user's question.", nil, true},
		{"prose bullet: no factual claims", "- No factual claims are made.", nil, true},
		{"prose bullet: the reply", "- The reply does not contain facts.", nil, true},
		{"prose bullet: I cannot", "- I cannot extract claims from this.", nil, true},
		{"prose bullet: I will", "- I will now list the claims.", nil, true},
		{"prose bullet: the conversation is", "- The conversation is about pandas.", nil, true},
		{"prose bullet: there are no claims", "- There are no factual claims in this reply.", nil, true},
		{"prose bullet: as an AI", "- As an AI, I have no opinions.", nil, true},
		{"prose bullet: there is no", "- There is no information about pandas.", nil, true},
		{"prose bullet dropped, fact kept", "- The passage does not mention dates.\n- Pandas eat bamboo.", L{"Pandas eat bamboo."}, false},
		{"question item dropped", "- What did the user mean?", nil, true},
		{"header item dropped", "- Facts:", nil, true},
		{"items and None contradict", "- A is B.\nNone", nil, true},
		{"None then items contradict", "None\n1. A is B.", nil, true},
		{"empty", "", nil, true},
		{"whitespace", "   \n ", nil, true},
		{"only a header", "Facts:", nil, true},
		{"dash without text", "-\n- ", nil, true},
		{"number without text", "1.\n2.", nil, true},
		{"spanish none", "Ninguno", nil, true},
		{"sorry", "- Sorry, I can't help with that.", nil, true},
		{"here is", "- Here is the list you asked for", nil, true},
		{"hyphenated word is not an item", "-A is B", nil, true},
		{"version number is not an item", "1.5 million people live there.", nil, true},
		{"irrelevant", "- Irrelevant.", nil, true},
		{"note", "- Note: the passage is old.", nil, true},
	}
	if len(tests) < 40 {
		t.Fatalf("only %d cases", len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseList(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseList(%q) = %q, err = %v, wantErr %v", tt.in, got, err, tt.wantErr)
			}
			if err != nil && !errors.Is(err, ErrUnusable) {
				t.Errorf("error %v does not wrap ErrUnusable", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseList(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseRefinementTable(t *testing.T) {
	const scores = "Relevance: ok 90/100\nNaturalness: ok 80/100\nNon-repetition: ok 100/100\nTemporal correctness: ok 100/100\n"
	tests := []struct {
		name, in, want string
		wantErr        bool
	}{
		{"canonical", scores + "Revised response: They beat Croatia 4-2.", "They beat Croatia 4-2.", false},
		{"no scores", "Revised response: Hello there.", "Hello there.", false},
		{"label on its own line", scores + "Revised response:\nHello there.", "Hello there.", false},
		{"bold label", scores + "**Revised response:** Hello.", "Hello.", false},
		{"bold label colon outside", scores + "**Revised response**: Hello.", "Hello.", false},
		{"heading label", scores + "### Revised response: Hello.", "Hello.", false},
		{"lower case", "revised response: hello.", "hello.", false},
		{"improved reply label", "Improved reply: Hello.", "Hello.", false},
		{"quoted", "Revised response: \"Hello.\"", "Hello.", false},
		{"multi-line revision", "Revised response: Line one.\nLine two.", "Line one.\nLine two.", false},
		{"stops at a user turn", "Revised response: Hi.\nUser: thanks", "Hi.", false},
		{"stops at a score line", "Revised response: Hi.\nRelevance: 100/100", "Hi.", false},
		{"speaker label stripped", "Revised response: Bot: Hi.", "Hi.", false},
		{"feedback mentioning the words", "Relevance: the revised response should mention the date 50/100\nRevised response: It opened in 1889.", "It opened in 1889.", false},
		{"feedback sentence with the words first", "The revised response should be shorter.\nRevised response: Short.", "Short.", false},
		{"control characters removed", "Revised response: Hi\x1b[2J there\u202e.", "Hi there.", false},
		{"full-width colon", "Revised response： Hi.", "Hi.", false},
		{"other language revision kept", "Revised response: Bonjour, ça va ?", "Bonjour, ça va ?", false},
		{"note after the revision", "Revised response: Hello.\nThis revision removes the repetition.", "Hello.", false},
		{"note label after a blank line", "Revised response: Hello.\n\nNote: I removed the stale date.", "Hello.", false},
		{"parenthesised note", "Revised response: Hello.\n(Note: the citation is kept.)", "Hello.", false},
		{"first-person edit note", "Revised response: It hangs in the Louvre.\nI removed the repeated painter.", "It hangs in the Louvre.", false},
		{"changes label", "Revised response: Hi.\nChanges: shorter.", "Hi.", false},
		{"the revised version note", "Revised response: Hi.\nThe revised version is more natural.", "Hi.", false},
		{"a second line that is reply", "Revised response: Hi.\nThis museum is in Paris.", "Hi.\nThis museum is in Paris.", false},
		{"revision only a note", "Revised response: Note: nothing to change.", "", true},
		{"a line about changes to a tax code", "Revised response: Hi.\nThe changes to the tax code took effect in 2018.", "Hi.\nThe changes to the tax code took effect in 2018.", false},
		{"a line about a response", "Revised response: Hi.\nThe response was criticised by the WHO.", "Hi.\nThe response was criticised by the WHO.", false},
		{"a line about a revision of a constitution", "Revised response: Hi.\nThe revision of the constitution in 1958 created the Fifth Republic.", "Hi.\nThe revision of the constitution in 1958 created the Fifth Republic.", false},
		{"a note of the reply's own", "Revised response: It is a fine museum.\nNote: the museum is closed on Mondays.", "It is a fine museum.\nNote: the museum is closed on Mondays.", false},
		{"a draft note that does not end the text", "Revised response: Hi.\nNote: the draft of the treaty was signed in 1919.\nIt took effect in 1920.", "Hi.\nNote: the draft of the treaty was signed in 1919.\nIt took effect in 1920.", false},
		{"notes about the draft end the text", "Revised response: Hi.\nNote: the draft's year was removed.\n\n(Note: the citation is kept.)", "Hi.", false},
		{"many notes about the draft end the text", "Revised response: Hi." + strings.Repeat("\nNote: the draft is kept.", 200), "Hi.", false},
		{"many draft notes, then text: the reply's own", "Revised response: Hi." + strings.Repeat("\nNote: the draft is kept.", 200) + "\nIt took effect in 1920.",
			"Hi." + strings.Repeat("\nNote: the draft is kept.", 200) + "\nIt took effect in 1920.", false},
		{"the response has been shortened", "Revised response: Hi.\nThe response has been shortened.", "Hi.", false},

		{"only feedback mentioning the words", "Relevance: the revised response should mention the date 50/100", "", true},
		{"mention mid-line", "I wrote a revised response: it is below", "", true},
		{"scores only", scores, "", true},
		{"empty revision", scores + "Revised response:   ", "", true},
		{"empty revision then score", "Revised response:\nRelevance: 100/100", "", true},
		{"revision is a label", "Revised response: Relevance: 90/100", "", true},
		{"two revisions", "Revised response: A.\nRevised response: B.", "", true},
		{"empty", "", "", true},
		{"whitespace", " \n ", "", true},
		{"prose", "The reply is fine as it is.", "", true},
		{"spanish label", "Respuesta revisada: Hola.", "", true},
		{"german label", "Überarbeitete Antwort: Hallo.", "", true},
		{"revised without response", "Revised: Hello.", "", true},
		{"response without revised", "Response: Hello.", "", true},
		{"label inside a quote", "> The revised response is good", "", true},
		{"revision only a user turn", "Revised response:\nUser: hi", "", true},
		{"revision only quotes", "Revised response: \"\"", "", true},
		{"revision only control chars", "Revised response: \x00\x07", "", true},
		{"label without colon", "Revised response Hello.", "", true},
		{"chatter only", "Sure, here is my feedback.", "", true},
		{"truncated before the revision", scores + "Revised resp", "", true},
		{"list of labels", "- Relevance\n- Naturalness", "", true},
		{"revision is a score", "Revised response: 90/100 relevance", "", false},
	}
	// The last case's text is not a feedback line (the criterion does not lead it): it is kept.
	tests[len(tests)-1].want = "90/100 relevance"
	if len(tests) < 40 {
		t.Fatalf("only %d cases", len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseRefinement(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseRefinement(%q) = %q, err = %v, wantErr %v", tt.in, got.Revised, err, tt.wantErr)
			}
			if err != nil {
				if !errors.Is(err, ErrUnusable) {
					t.Errorf("error %v does not wrap ErrUnusable", err)
				}
				return
			}
			if got.Revised != tt.want {
				t.Errorf("ParseRefinement(%q).Revised = %q, want %q", tt.in, got.Revised, tt.want)
			}
		})
	}
}

func TestParseQueryPlanTable(t *testing.T) {
	none := timex.Spec{Kind: timex.KindNone}
	yes := func(q string) QueryPlan { return QueryPlan{Search: true, Query: q, Time: none} }
	tests := []struct {
		name, in string
		want     QueryPlan
		wantErr  bool
	}{
		{"canonical", "Search: yes\nQuery: Eiffel Tower height\nTime: none", yes("Eiffel Tower height"), false},
		{"chatter and markdown", "Sure!\n**SEARCH**:  Yes.\n  query : \"2020 Olympics host\"\nTIME: Year=2020\nBye.",
			QueryPlan{true, "2020 Olympics host", timex.Spec{Kind: timex.KindRange, From: 2020, To: 2020}}, false},
		{"recent", "Search: yes\nQuery: x\nTime: recent", QueryPlan{true, "x", timex.Spec{Kind: timex.KindRecent}}, false},
		{"latest", "Search: yes\nQuery: x\nTime: the latest", QueryPlan{true, "x", timex.Spec{Kind: timex.KindRecent}}, false},
		{"range", "Search: yes\nQuery: x\nTime: 1990-1998", QueryPlan{true, "x", timex.Spec{Kind: timex.KindRange, From: 1990, To: 1998}}, false},
		{"range reversed", "Search: yes\nQuery: x\nTime: 1998 to 1990", QueryPlan{true, "x", timex.Spec{Kind: timex.KindRange, From: 1990, To: 1998}}, false},
		{"unreadable time is none", "Search: yes\nQuery: x\nTime: whenever", yes("x"), false},
		{"missing time is none", "Search: yes\nQuery: pandas", yes("pandas"), false},
		{"no search", "Search: no\nQuery: none\nTime: none", QueryPlan{Search: false}, false},
		{"no search without query line", "Search: No.", QueryPlan{Search: false}, false},
		{"no search ignores query", "Search: no\nQuery: pandas", QueryPlan{Search: false, Time: none}, false},
		{"query only means yes", "Query: Marie Curie", yes("Marie Curie"), false},
		{"y", "Search: y\nQuery: x", yes("x"), false},
		{"true", "Search: true\nQuery: x", yes("x"), false},
		{"bullet lines", "- Search: yes\n- Query: x\n- Time: none", yes("x"), false},
		{"backticks", "Search: yes\nQuery: `x y`", yes("x y"), false},
		{"curly quotes", "Search: yes\nQuery: “x y”", yes("x y"), false},
		{"consistent repeat", "Search: yes\nSearch: yes\nQuery: x", yes("x"), false},
		{"other language query kept", "Search: yes\nQuery: Tour Eiffel hauteur", yes("Tour Eiffel hauteur"), false},
		{"heading", "### Search: yes\nQuery: x", yes("x"), false},

		{"yes without query", "Search: yes\nTime: none", QueryPlan{}, true},
		{"yes with none query", "Search: yes\nQuery: none", QueryPlan{}, true},
		{"yes with empty query", "Search: yes\nQuery:", QueryPlan{}, true},
		{"hedge: perhaps", "Search: perhaps\nQuery: x", QueryPlan{}, true},
		{"hedge: no but", "Search: no, but it could help\nQuery: x", QueryPlan{}, true},
		{"hedge: yes if", "Search: yes if the user wants details\nQuery: x", QueryPlan{}, true},
		{"hedge: maybe", "Search: maybe", QueryPlan{}, true},
		{"negation: not needed", "Search: not needed", QueryPlan{}, true},
		{"mixed: yes/no", "Search: yes/no\nQuery: x", QueryPlan{}, true},
		{"mixed: disagreeing lines", "Search: no\nSearch: yes\nQuery: x", QueryPlan{}, true},
		{"mixed: disagreeing lines other order", "Search: yes\nQuery: x\nSearch: no", QueryPlan{}, true},
		{"truncated search value", "Search: ye", QueryPlan{}, true},
		{"truncated before query", "Search: yes\nQue", QueryPlan{}, true},
		{"prose", "I think we should look it up.", QueryPlan{}, true},
		{"empty", "", QueryPlan{}, true},
		{"whitespace", " \n ", QueryPlan{}, true},
		{"spanish", "Búsqueda: sí\nConsulta: torre Eiffel", QueryPlan{}, true},
		{"french", "Recherche : oui", QueryPlan{}, true},
		{"spanish value", "Search: sí\nQuery: x", QueryPlan{}, true},
		{"json", `{"search": true, "query": "x"}`, QueryPlan{}, true},
		{"search label in prose", "We need to search: yes we do, for x", QueryPlan{}, true},
	}
	if len(tests) < 40 {
		t.Fatalf("only %d cases", len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseQueryPlan(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseQueryPlan(%q) = %+v, err = %v, wantErr %v", tt.in, got, err, tt.wantErr)
			}
			if err != nil {
				if !errors.Is(err, ErrUnusable) {
					t.Errorf("error %v does not wrap ErrUnusable", err)
				}
				return
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseQueryPlan(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

// A time need's value may come with asides; only the value decides, and a recency that is
// negated is none.
func TestParseTimeNeedTable(t *testing.T) {
	none, recent := timex.Spec{Kind: timex.KindNone}, timex.Spec{Kind: timex.KindRecent}
	years := func(from, to int) timex.Spec { return timex.Spec{Kind: timex.KindRange, From: from, To: to} }
	tests := []struct {
		in   string
		want timex.Spec
	}{
		{"none", none},
		{"recent", recent},
		{"the latest", recent},
		{"current", recent},
		{"year=1994", years(1994, 1994)},
		{"1990-1998", years(1990, 1998)},
		{"1990, 1998", years(1990, 1998)},
		{"recent (the user asks about now)", recent},
		{"recent, not historical", recent},
		{"**recent**", recent},
		{"(recent)", recent},
		{"recent (but not the latest year)", recent},
		{"No specific year, but recent news", recent},
		{"none in particular, but recent", recent},
		{"no particular year; recent", recent},

		{"none, not recent", none},
		{"none (not recent)", none},
		{"None - not recent", none},
		{"not recent", none},
		{"isn't recent", none},
		{"no recent need", none},
		{"none; the latest is not needed", none},
		{"N/A (nothing current)", none},
		{"none, year unknown", none},
		{"whenever", none},
		{"none, but the latest is not needed", none},
		{"no", none},
		{"None.", none},
	}
	for _, tt := range tests {
		if got := parseTimeNeed(tt.in); got != tt.want {
			t.Errorf("parseTimeNeed(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}
