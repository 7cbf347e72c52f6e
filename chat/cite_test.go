package chat

import (
	"slices"
	"testing"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/search"
)

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
