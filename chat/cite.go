package chat

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kairos-rag/kairos/rerank"
)

// Inline citations. The draft prompt numbers every verified fact with the passage it came
// from ("- Frozen was directed by Chris Buck. [1]"), and asks the reply to carry the number
// after the sentence that uses the fact. The reply's markers are then bound: a marker naming a
// source of this turn is renumbered in order of first appearance ([1], [2], ... as the user
// reads them) and becomes a Citation; a marker naming none (a number the LLM invented, or one
// copied from an earlier turn or a passage's footnote) is removed, with the space before it.
// The same rewrite runs on a streamed reply piece by piece (markerStream) and on the whole
// reply, so what streamed and what is stored are the same text.

// citeSource is one passage the draft prompt numbered, with the facts it carries.
type citeSource struct {
	hit   rerank.Hit
	facts []string
	stage string // the stage the facts came from: summarize or verify
	forQ  string // the query or claim the passage was retrieved for
}

// markerRe matches a citation marker, "[3]" or "[1, 2]", with the spaces before it. The
// lenticular and fullwidth brackets (【3】, ［1，2］), fullwidth digits and the CJK commas are
// markers too: models trained on Chinese text, and some others, write them, and unbound they
// reached the user raw, an invented number with them.
var markerRe = regexp.MustCompile(`[ \t]*[\[【［]\s*[0-9０-９]{1,3}(?:\s*[,，、]\s*[0-9０-９]{1,3})*\s*[\]】］]`)

// partialMarkerRe matches what may still become a marker at the end of a streamed text: the
// spaces before it and an unclosed bracket of digits, commas and spaces.
var partialMarkerRe = regexp.MustCompile(`\s*(?:[\[【［][0-9０-９,，、\s]*)?$`)

// citer binds markers to sources. Its state is the reply numbers handed out so far.
type citer struct {
	sources int         // markers 1..sources name a source
	bound   map[int]int // source number -> reply number
	order   []int       // source numbers in reply order
}

func newCiter(sources int) *citer { return &citer{sources: sources, bound: map[int]int{}} }

// rewrite renumbers the markers of s that name a source and removes the others. Applied to
// consecutive pieces of a text that never split a marker or the spaces before one, it gives
// the same output as applied to the whole text.
func (c *citer) rewrite(s string) string {
	return markerRe.ReplaceAllStringFunc(s, func(m string) string {
		lead := m[:len(m)-len(strings.TrimLeftFunc(m, unicode.IsSpace))]
		body := strings.Trim(strings.TrimSpace(m), "[]【】［］")
		var nums []string
		for _, f := range strings.FieldsFunc(body, func(r rune) bool { return r == ',' || r == '，' || r == '、' }) {
			n, err := strconv.Atoi(asciiDigits(strings.TrimSpace(f)))
			if err != nil || n < 1 || n > c.sources {
				continue
			}
			r, ok := c.bound[n]
			if !ok {
				r = len(c.order) + 1
				c.bound[n] = r
				c.order = append(c.order, n)
			}
			if s := strconv.Itoa(r); !slices.Contains(nums, s) {
				nums = append(nums, s)
			}
		}
		if len(nums) == 0 {
			return ""
		}
		return lead + "[" + strings.Join(nums, ", ") + "]"
	})
}

// stripMarkers removes every citation marker from s: earlier turns shown to the LLM, and
// facts numbered for the draft, must not carry numbers that mean something else now.
func stripMarkers(s string) string { return strings.TrimSpace(markerRe.ReplaceAllString(s, "")) }

// markerStream rewrites a streamed reply's markers as it streams, holding back a possible
// marker (and the spaces before it) until it is complete or cannot be one.
type markerStream struct {
	c       *citer
	emit    func(string)
	held    string
	started bool // something was emitted
}

func (m *markerStream) write(s string) {
	m.held += s
	// A piece may end inside a character (a bracket is three bytes): that tail waits too.
	whole := len(m.held)
	for i := max(0, whole-utf8.UTFMax+1); i < whole; i++ {
		if utf8.RuneStart(m.held[i]) && !utf8.FullRuneInString(m.held[i:]) {
			whole = i
			break
		}
	}
	cut := partialMarkerRe.FindStringIndex(m.held[:whole])[0]
	if cut == 0 {
		return
	}
	m.send(m.c.rewrite(m.held[:cut]))
	m.held = m.held[cut:]
}

// flush emits what is held at the end of the stream. Trailing spaces are not part of a reply.
func (m *markerStream) flush() {
	m.send(strings.TrimRightFunc(m.c.rewrite(m.held), unicode.IsSpace))
	m.held = ""
}

// send emits out; a reply does not start with the spaces a removed marker leaves.
func (m *markerStream) send(out string) {
	if !m.started {
		out = strings.TrimLeftFunc(out, unicode.IsSpace)
	}
	if out != "" {
		m.started = true
		m.emit(out)
	}
}

// citations returns the sources the reply's markers bound, in reply order.
func (c *citer) citations(srcs []citeSource) []PassageRef {
	out := make([]PassageRef, 0, len(c.order))
	for i, n := range c.order {
		s := srcs[n-1]
		out = append(out, PassageRef{N: i + 1, ID: s.hit.ID, Title: s.hit.Title, Section: s.hit.Section, URL: s.hit.URL,
			Text: s.hit.Text, Score: s.hit.Score, For: s.forQ, Stage: s.stage, Facts: s.facts})
	}
	return out
}

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

// bestSupport returns the hit whose text supports claim best (the share of the claim's content
// words it holds), so that a claim verified against several passages cites the one that
// carries it.
func bestSupport(claim string, hits []rerank.Hit) rerank.Hit {
	best, bestShare := rerank.Hit{}, -1.0
	for _, h := range hits {
		if share, _ := bulletSupport(claim, h.Text); share > bestShare {
			best, bestShare = h, share
		}
	}
	return best
}
