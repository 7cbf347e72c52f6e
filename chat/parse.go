package chat

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/kairos-rag/kairos/corpus/timex"
)

// Parsers read LLM output tolerantly: any case, extra whitespace and markdown emphasis, missing
// brackets, chatter before or after the expected lines. They fail with ErrUnusable, quoting the
// output, when nothing usable is there.

// ErrUnusable is wrapped by every parser error.
var ErrUnusable = errors.New("unusable LLM output")

func unusable(what, out string) error {
	return fmt.Errorf("%w: no %s in %q", ErrUnusable, what, truncate(out, 200))
}

// cleanLine removes markdown emphasis and surrounding space.
func cleanLine(s string) string {
	s = strings.ReplaceAll(s, "**", "")
	s = strings.ReplaceAll(s, "__", "")
	return strings.TrimSpace(s)
}

var labelRe = regexp.MustCompile(`^[#>*\s-]*([A-Za-z][A-Za-z \-]{0,30}?)\s*[:：]\s*(.*)$`)

// labeled returns the value after the first "label:" line (case-insensitive), with the lines
// after it up to the next labeled line or blank line when multiline is set.
func labeled(out, label string, multiline bool) (string, bool) {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		m := labelRe.FindStringSubmatch(cleanLine(l))
		if m == nil || !strings.EqualFold(strings.TrimSpace(m[1]), label) {
			continue
		}
		val := []string{strings.TrimSpace(m[2])}
		if multiline {
			for _, next := range lines[i+1:] {
				n := cleanLine(next)
				if n == "" || isKnownLabel(n) {
					break
				}
				val = append(val, n)
			}
		}
		return strings.TrimSpace(strings.Join(val, " ")), true
	}
	return "", false
}

// isKnownLabel reports whether a line starts with one of the labels our prompts ask for, so that
// multi-line values stop there but not at a colon inside prose.
func isKnownLabel(line string) bool {
	m := labelRe.FindStringSubmatch(line)
	if m == nil {
		return false
	}
	switch strings.ToLower(strings.TrimSpace(m[1])) {
	case "search", "query", "time", "reasoning", "verdict", "relevance", "naturalness", "non-repetition",
		"temporal correctness", "revised response", "memory", "topic", "directive", "clarified", "user", "bot":
		return true
	}
	return false
}

func isNone(s string) bool {
	s = strings.ToLower(strings.Trim(cleanLine(s), ".!\"' "))
	return s == "none" || s == "n/a" || s == "nothing" || s == "no relevant information"
}

// QueryPlan is the parsed output of the query stage.
type QueryPlan struct {
	Search bool       `json:"search"`
	Query  string     `json:"query,omitempty"`
	Time   timex.Spec `json:"time"`
}

// ParseQueryPlan reads "Search: yes|no", "Query: ...", "Time: none|recent|year=YYYY". A query
// line without a search line means yes; an unreadable time means none (the reranker then ranks by
// relevance alone, the safe choice).
func ParseQueryPlan(out string) (QueryPlan, error) {
	search, hasSearch := labeled(out, "search", false)
	query, hasQuery := labeled(out, "query", false)
	query = strings.Trim(query, "\"'“”` ")
	if !hasSearch && !hasQuery {
		return QueryPlan{}, unusable("Search or Query line", out)
	}
	p := QueryPlan{Search: true}
	if hasSearch {
		s := strings.ToLower(strings.Trim(search, ".! "))
		switch {
		case strings.HasPrefix(s, "yes") || s == "true" || s == "y":
		case strings.HasPrefix(s, "no") || s == "false" || s == "n":
			p.Search = false
		default:
			return QueryPlan{}, fmt.Errorf("%w: Search is %q, want yes or no", ErrUnusable, search)
		}
	}
	if !hasQuery || query == "" || isNone(query) {
		if p.Search {
			return QueryPlan{}, unusable("query although Search is yes", out)
		}
		return p, nil
	}
	if p.Search {
		p.Query = query
	}
	t, _ := labeled(out, "time", false)
	p.Time = parseTimeNeed(t)
	return p, nil
}

var yearRe = regexp.MustCompile(`\b(1[0-9]{3}|20[0-9]{2})\b`)

// parseTimeNeed reads "none", "recent", "year=1994", "1994", "1990-1998".
func parseTimeNeed(s string) timex.Spec {
	l := strings.ToLower(cleanLine(s))
	if strings.Contains(l, "recent") || strings.Contains(l, "latest") || strings.Contains(l, "current") {
		return timex.Spec{Kind: timex.KindRecent}
	}
	ys := yearRe.FindAllString(l, 2)
	if len(ys) == 0 {
		return timex.Spec{Kind: timex.KindNone}
	}
	from, _ := strconv.Atoi(ys[0])
	to := from
	if len(ys) == 2 {
		to, _ = strconv.Atoi(ys[1])
	}
	if to < from {
		from, to = to, from
	}
	return timex.Spec{Kind: timex.KindRange, From: from, To: to}
}

var itemRe = regexp.MustCompile(`^\s*(?:[-*•·–]|\(?\d{1,3}[.)\]:]|\[\d{1,3}\])\s*(.*)$`)

// ParseList reads a bullet or numbered list, or "None" for an empty one. Lines that are not list
// items are taken as items only when the output has no list markers at all (a model that forgot
// the dashes); introductions like "Here are the facts:" are dropped.
func ParseList(out string) ([]string, error) {
	var items, plain []string
	for _, l := range strings.Split(out, "\n") {
		l = cleanLine(l)
		if l == "" {
			continue
		}
		if m := itemRe.FindStringSubmatch(l); m != nil {
			if it := strings.TrimSpace(m[1]); it != "" && !isNone(it) {
				items = append(items, it)
			}
			continue
		}
		if isNone(l) || strings.HasSuffix(l, ":") {
			continue
		}
		plain = append(plain, l)
	}
	if len(items) > 0 {
		return items, nil
	}
	if len(plain) > 0 {
		return plain, nil
	}
	if t := strings.TrimSpace(out); t != "" && (isNone(t) || containsNoneLine(t)) {
		return nil, nil
	}
	return nil, unusable("list items or None", out)
}

func containsNoneLine(s string) bool {
	for _, l := range strings.Split(s, "\n") {
		if isNone(l) {
			return true
		}
	}
	return false
}

// Verdict is a fact-check outcome.
type Verdict string

const (
	Supports      Verdict = "SUPPORTS"
	Refutes       Verdict = "REFUTES"
	NotEnoughInfo Verdict = "NOT ENOUGH INFO"
)

var verdictRe = regexp.MustCompile(`(?i)\b(supports?|supported|refutes?|refuted|not\s+enough\s+info(?:rmation)?|nei)\b`)

// ParseVerdict reads "Reasoning: ..." and "Verdict: X". Without a verdict line the last verdict
// word of the output counts, since chain-of-thought ends with its conclusion.
func ParseVerdict(out string) (Verdict, string, error) {
	reasoning, _ := labeled(out, "reasoning", true)
	src := out
	if v, ok := labeled(out, "verdict", false); ok && verdictRe.MatchString(v) {
		src = v
	}
	ms := verdictRe.FindAllString(src, -1)
	if len(ms) == 0 {
		return "", reasoning, unusable("verdict (SUPPORTS, REFUTES, NOT ENOUGH INFO)", out)
	}
	w := strings.ToLower(ms[len(ms)-1])
	switch {
	case strings.HasPrefix(w, "support"):
		return Supports, reasoning, nil
	case strings.HasPrefix(w, "refut"):
		return Refutes, reasoning, nil
	default:
		return NotEnoughInfo, reasoning, nil
	}
}

// Refinement is the parsed output of the refine stage.
type Refinement struct {
	Scores  map[string]int `json:"scores"` // criterion (lower case) -> 0..100
	Revised string         `json:"revised,omitempty"`
}

// refineCriteria are the criteria the refine stage scores.
var refineCriteria = [...]string{"relevance", "naturalness", "non-repetition", "temporal correctness"}

var scoreRe = regexp.MustCompile(`(?i)^[\W_]*(relevan(?:ce|t)|natural(?:ness)?|non[- ]?repetit(?:ion|ive)|temporal(?:ly)?\s*correct(?:ness)?)\b.*?(\d{1,3})\s*(?:/\s*100|out of 100|%)`)

// ParseRefinement reads four scored feedback lines and "Revised response: ...". Scores are
// optional (their absence is not worth failing a turn for); the revised response is not.
func ParseRefinement(out string) (Refinement, error) {
	r := Refinement{Scores: map[string]int{}}
	for _, l := range strings.Split(out, "\n") {
		m := scoreRe.FindStringSubmatch(cleanLine(l))
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		r.Scores[canonicalCriterion(m[1])] = min(n, 100)
	}
	// A regexp on the original text, not an index into strings.ToLower(out): lowering can change
	// byte lengths (invalid UTF-8 becomes U+FFFD), which would misplace the cut.
	loc := revisedRe.FindStringIndex(out)
	if loc == nil {
		return r, unusable("Revised response", out)
	}
	rest := out[loc[1]:]
	rest = strings.TrimLeft(rest, "*_ \t")
	rest = strings.TrimPrefix(rest, ":")
	rest = strings.TrimPrefix(strings.TrimLeft(rest, "*_ \t"), "：")
	r.Revised = cleanResponse(rest)
	if r.Revised == "" {
		return r, unusable("text after Revised response", out)
	}
	return r, nil
}

var revisedRe = regexp.MustCompile(`(?i)revised\s+response`)

func canonicalCriterion(s string) string {
	s = strings.ToLower(s)
	switch {
	case strings.HasPrefix(s, "relevan"):
		return "relevance"
	case strings.HasPrefix(s, "natural"):
		return "naturalness"
	case strings.HasPrefix(s, "non"):
		return "non-repetition"
	default:
		return "temporal correctness"
	}
}

var speakerPrefixRe = regexp.MustCompile(`(?i)^(bot|assistant|system replies|system|response|reply|answer|chatbot)\s*:\s*`)

var userTurnRe = regexp.MustCompile(`(?i)^\s*(user|human)\s*:`)

// cleanResponse trims a free-text reply: leading speaker labels, wrapping quotes, and anything
// after a blank line followed by a labeled line (a model that keeps going with "User: ...").
func cleanResponse(out string) string {
	s := strings.TrimSpace(strings.ReplaceAll(out, "\r", ""))
	s = speakerPrefixRe.ReplaceAllString(s, "")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if i > 0 && userTurnRe.MatchString(l) {
			lines = lines[:i]
			break
		}
	}
	s = strings.TrimSpace(strings.Join(lines, "\n"))
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"') {
		s = strings.TrimSpace(s[1 : len(s)-1])
	}
	return s
}

// ParseResponse reads a free-text reply; empty output is unusable.
func ParseResponse(out string) (string, error) {
	if s := cleanResponse(out); s != "" {
		return s, nil
	}
	return "", unusable("reply text", out)
}

// ParseLabeled reads "Label: value". A one-line output without the label is taken as the value
// (models often drop the label); anything else without it is unusable.
func ParseLabeled(out, label string) (string, error) {
	if v, ok := labeled(out, label, true); ok {
		v = strings.Trim(v, "\"'“” ")
		if v != "" {
			return v, nil
		}
	}
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if l = cleanLine(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 1 && !isKnownLabel(lines[0]) {
		if v := strings.Trim(lines[0], "\"'“” "); v != "" {
			return v, nil
		}
	}
	return "", unusable(label+" line", out)
}

// MemoryFact is one fact the MPC summarizer extracted.
type MemoryFact struct {
	About string `json:"about"` // "user" or "bot"
	Text  string `json:"text"`
}

// ParseMemoryFacts reads "User: ..." and "Bot: ..." lines (bulleted or not), or None.
func ParseMemoryFacts(out string) ([]MemoryFact, error) {
	var facts []MemoryFact
	sawNone := false
	for _, l := range strings.Split(out, "\n") {
		l = cleanLine(l)
		if m := itemRe.FindStringSubmatch(l); m != nil {
			l = strings.TrimSpace(m[1])
		}
		if l == "" {
			continue
		}
		if isNone(l) {
			sawNone = true
			continue
		}
		m := labelRe.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		who := strings.ToLower(strings.TrimSpace(m[1]))
		text := strings.TrimSpace(m[2])
		if (who == "user" || who == "bot") && text != "" && !isNone(text) {
			facts = append(facts, MemoryFact{About: who, Text: text})
		}
	}
	if len(facts) == 0 && !sawNone {
		return nil, unusable("User:/Bot: fact lines or None", out)
	}
	return facts, nil
}

// ParseKnowledge reads the MSDP knowledge completion: its first non-empty line, without a
// repeated "=>" prefix.
func ParseKnowledge(out string) (string, error) {
	for _, l := range strings.Split(out, "\n") {
		l = cleanLine(l)
		if i := strings.LastIndex(l, "=>"); i >= 0 {
			l = strings.TrimSpace(l[i+2:])
		}
		if l != "" {
			return l, nil
		}
	}
	return "", unusable("knowledge sentence", out)
}
