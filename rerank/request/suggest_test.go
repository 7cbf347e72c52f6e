package request

import "testing"

func TestSuggestField(t *testing.T) {
	for _, tc := range []struct{ unknown, want string }{
		{"query", "text"},
		{"Query", "text"},
		{"q", "text"},
		{"top_k", "k"},
		{"per_dco", "per_doc"},
		{"txet", "text"}, // a swap is one edit
		{"minscore", "min_score"},
		{"threshold", "min_score"},
		{"date_form", "date_from"}, // nested in filters
		{"sources", "source"},
		{"zzzzzz", ""},
		{"ab", ""}, // two edits on a short name is a guess, not a typo
	} {
		if got := SuggestField(Query{}, tc.unknown); got != tc.want {
			t.Errorf("SuggestField(%q) = %q, want %q", tc.unknown, got, tc.want)
		}
	}
}
