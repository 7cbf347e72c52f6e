package chat

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/kairos-rag/kairos/rerank"
)

// Inline citations. The draft prompt numbers every verified fact with the passage it came
// from ("- Frozen was directed by Chris Buck. [1]"), and asks the reply to carry the number
// after the sentence that uses the fact. Those markers are the LLM's word only: the reply's
// gate (replygate.go) strips them, tries the passages they name first, and writes the markers
// of the passages the attribution check found supporting each sentence, numbered in the order
// the user reads them. A marker naming no passage of the turn (a number the LLM invented, or
// one copied from an earlier turn or a passage's footnote) names nothing.

// citeSource is one passage the draft prompt numbered, with the facts it carries.
type citeSource struct {
	hit   rerank.Hit
	facts []string
	stage string // the stage the facts came from: summarize or verify
	forQ  string // the query or claim the passage was retrieved for
}

// markerRe matches a citation marker, "[3]" or "[1, 2]", with the spaces before it. The
// lenticular and fullwidth brackets (【3】, ［1，2］), fullwidth digits and the CJK commas are
// markers too: models trained on Chinese text, and some others, write them.
var markerRe = regexp.MustCompile(`[ \t]*[\[【［]\s*[0-9０-９]{1,3}(?:\s*[,，、]\s*[0-9０-９]{1,3})*\s*[\]】］]`)

// stripMarkers removes every citation marker from s: earlier turns shown to the LLM, and
// facts numbered for the draft, must not carry numbers that mean something else now.
func stripMarkers(s string) string { return strings.TrimSpace(markerRe.ReplaceAllString(s, "")) }

// numberFacts groups the verified facts by the passage each came from and returns the facts as
// the draft prompt lists them, each followed by its passage's number, with the numbered
// sources. A fact without a passage is listed unnumbered.
func numberFacts(facts []string, from []citeSource) ([]string, []citeSource) {
	var srcs []citeSource
	idx := map[string]int{}
	lines := make([]string, 0, len(facts))
	for i, f := range facts {
		f = stripMarkers(f)
		if f == "" {
			continue
		}
		s := from[i]
		if s.hit.ID == "" {
			lines = append(lines, f)
			continue
		}
		n, ok := idx[s.hit.ID]
		if !ok {
			srcs = append(srcs, citeSource{hit: s.hit, stage: s.stage, forQ: s.forQ})
			n = len(srcs)
			idx[s.hit.ID] = n
		}
		srcs[n-1].facts = append(srcs[n-1].facts, f)
		lines = append(lines, f+" ["+strconv.Itoa(n)+"]")
	}
	return lines, srcs
}
