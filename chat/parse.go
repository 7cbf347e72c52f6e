package chat

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

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
// relevance alone, the safe choice). A hedged or self-contradicting search decision ("no, but",
// two Search lines that disagree) is unusable, and the pipeline then searches with the user's
// own words: when in doubt, look it up.
func ParseQueryPlan(out string) (QueryPlan, error) {
	search, hasSearch := labeled(out, "search", false)
	query, hasQuery := labeled(out, "query", false)
	query = strings.Trim(query, "\"'“”` ")
	if !hasSearch && !hasQuery {
		return QueryPlan{}, unusable("Search or Query line", out)
	}
	p := QueryPlan{Search: true}
	if hasSearch {
		yes, ok := yesNo(search)
		if !ok {
			return QueryPlan{}, fmt.Errorf("%w: Search is %q, want yes or no", ErrUnusable, truncate(search, 80))
		}
		for _, l := range strings.Split(out, "\n") {
			if m := labelRe.FindStringSubmatch(cleanLine(l)); m != nil && strings.EqualFold(strings.TrimSpace(m[1]), "search") {
				if y, ok := yesNo(m[2]); !ok || y != yes {
					return QueryPlan{}, fmt.Errorf("%w: Search lines disagree in %q", ErrUnusable, truncate(out, 200))
				}
			}
		}
		p.Search = yes
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

// yesNo reads a bare yes or no (any case, final punctuation allowed).
func yesNo(s string) (yes, ok bool) {
	switch strings.ToLower(strings.Trim(cleanLine(s), ".!\"'` ")) {
	case "yes", "y", "true":
		return true, true
	case "no", "n", "false":
		return false, true
	}
	return false, false
}

var yearRe = regexp.MustCompile(`\b(1[0-9]{3}|20[0-9]{2})\b`)

var (
	// notRecentRe matches a recency that is denied ("not recent", "isn't current", "no recent
	// need"), which is no recency: "Time: none, not recent" was read as recent.
	notRecentRe = regexp.MustCompile(`\b(?:not|no|never|isn't|is\s+not|nothing)\s+(?:\w+\s+)?(?:recent|latest|current)\w*`)
	// timeNoneRe matches a time need that is none: the whole value, or none before a
	// separator and an aside ("none, not recent", "None - not recent", "N/A (nothing
	// current)"). A value that only opens with the word "no" is not: "No specific year, but
	// recent news" was read as none.
	timeNoneRe = regexp.MustCompile(`^[\W_]*(?:none|n/?a|no)[\W_]*$|^[\W_]*(?:none|n/?a|no)\s*(?:[,;:(\[.!–—]|-\s|--)`)
	// butRecentRe matches a recency after "but" ("none in particular, but recent"): the aside
	// that turns the value is its last word.
	butRecentRe = regexp.MustCompile(`\bbut\b(.*\b(?:recent|latest|current)\w*.*)$`)
	// timeDenialRe finds a denial anywhere in an aside ("but the latest is not needed").
	timeDenialRe = regexp.MustCompile(`\b(?:not|no|never|nothing)\b|n't\b`)
)

// parseTimeNeed reads "none", "recent", "year=1994", "1994", "1990-1998". A value that is none
// is none whatever its aside says ("none; the latest is not needed"), unless a recency after
// "but" that nothing denies turns it ("none, but recent news"); a denied recency ("not
// recent") is not recent.
func parseTimeNeed(s string) timex.Spec {
	l := strings.ToLower(cleanLine(s))
	if m := butRecentRe.FindStringSubmatch(l); m != nil && !timeDenialRe.MatchString(m[1]) {
		return timex.Spec{Kind: timex.KindRecent}
	}
	if timeNoneRe.MatchString(l) {
		return timex.Spec{Kind: timex.KindNone}
	}
	l = notRecentRe.ReplaceAllString(l, " ")
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

var itemRe = regexp.MustCompile(`^\s*(?:[-*•·–]|\(?\d{1,3}[.)\]]|\[\d{1,3}\])\s+(.*)$`)

// metaItemRe matches list items that talk about the input instead of stating a fact ("The
// passage is not relevant", "No factual claims", "I cannot ..."): prose that a model wrote as a
// bullet, which must never become a fact or a claim. The input's nouns and "I will" match in
// lower case only, and "there is no" only before what a list of facts lacks, so that titles
// and facts that open like them stay facts ("The Conversation is a 1974 film", "I Will Always
// Love You is a song", "There are no native snakes in Ireland").
var metaItemRe = regexp.MustCompile(`(?i)\b(the (?-i:passage|text|reply|response|evidence|article|document|conversation|query)s? (is|are|does|do|did|has|have|doesn't|don't|contains?|mentions?|says?|provides?|makes?)|` +
	`not relevant|irrelevant|no (relevant|factual|verifiable|specific)|there (is|are) no ((new|more|other|further|additional) )?(relevant|factual|verifiable|specific|claims?|information|facts?|mention|data|details?)\b|` +
	`i (cannot|can't|could not|couldn't|am unable|don't|do not|(?-i:will|would|think))|as an ai|here (is|are)|sorry)\b|^\s*note\s*:`)

// ParseList reads a bullet or numbered list ("- x", "* x", "1. x", "(2) x", "[3] x"), or "None"
// for an empty one. It fails closed: lines without a list marker are chatter and never items;
// an output with no list item that is not a None answer is unusable; an output that has both
// items and a None answer contradicts itself and is unusable; items that are prose about the
// input rather than facts are dropped.
func ParseList(out string) ([]string, error) {
	var items []string
	sawNone, sawItem := false, false
	for _, l := range strings.Split(out, "\n") {
		l = cleanLine(l)
		if l == "" {
			continue
		}
		m := itemRe.FindStringSubmatch(l)
		if m == nil {
			if isNone(l) {
				sawNone = true
			}
			continue
		}
		it := strings.TrimSpace(m[1])
		if isNone(it) {
			sawNone = true
			continue
		}
		sawItem = true
		if it == "" || strings.HasSuffix(it, ":") || strings.HasSuffix(it, "?") || metaItemRe.MatchString(it) {
			continue
		}
		items = append(items, it)
	}
	switch {
	case sawItem && sawNone:
		return nil, fmt.Errorf("%w: both list items and None in %q", ErrUnusable, truncate(out, 200))
	case len(items) > 0:
		return items, nil
	case sawNone:
		return nil, nil
	}
	return nil, unusable("list items or None", out)
}

// Verdict is a fact-check outcome.
type Verdict string

const (
	Supports      Verdict = "SUPPORTS"
	Refutes       Verdict = "REFUTES"
	NotEnoughInfo Verdict = "NOT ENOUGH INFO"
)

var (
	// verdictWordRe finds any verdict-like word; after the verdict line one means the model
	// went on to say something else, and the verdict is no longer clear.
	verdictWordRe = regexp.MustCompile(`(?i)\b(support|supports|supported|supporting|refute|refutes|refuted|refuting|contradict\w*|not enough|insufficient|nei|unverifiable|partially|partly)\b`)
	// negationRe finds words that turn a verdict around or hedge it.
	negationRe = regexp.MustCompile(`(?i)\b(not|no|never|neither|nor|cannot|can't|doesn't|don't|isn't|aren't|wasn't|un\w*|partially|partly|mostly|likely|probably|possibly|maybe|may|might|seems?|appears?|but|however|although|though|except|mixed|half|somewhat|weakly|insufficient|wait|actually|reconsider\w*|instead)\b`)
	// verdictLineRe is a verdict line, the model's own ("Final verdict", "My preliminary
	// verdict"): each is a verdict, so one that disagrees with the last makes the output
	// unclear instead of being read as reasoning. Another's verdict quoted in the reasoning
	// ("The jury's verdict: not guilty") is not one.
	verdictLineRe = regexp.MustCompile(`(?im)^[#>*\s-]*(?:(?:my|the|our)\s+)?(?:(?:final|preliminary|initial|overall|revised|updated|tentative|first|second|new)\s+)?verdict\s*[:：]\s*(.*)$`)
)

// ParseVerdict reads "Reasoning: ..." and "Verdict: X" and fails closed: only a single clear
// "Verdict: SUPPORTS" (or SUPPORTED) counts as SUPPORTS. A negated, hedged or mixed verdict
// ("NOT SUPPORTED", "supports, but ...", "SUPPORTS or REFUTES"), several verdict lines that
// disagree, a verdict word after the verdict line, or no verdict line at all give NOT ENOUGH
// INFO with an ErrUnusable error so the trace notes why. A bare one-word answer ("SUPPORTS") is
// read as the verdict.
func ParseVerdict(out string) (Verdict, string, error) {
	reasoning, _ := labeled(out, "reasoning", true)
	clean := strings.ReplaceAll(strings.ReplaceAll(out, "**", ""), "__", "")
	locs := verdictLineRe.FindAllStringSubmatchIndex(clean, -1)
	if len(locs) == 0 {
		if v, ok := verdictValue(clean); ok && !strings.Contains(strings.TrimSpace(clean), "\n") {
			return v, reasoning, nil
		}
		return NotEnoughInfo, reasoning, unusable("Verdict line", out)
	}
	var got Verdict
	for _, loc := range locs {
		v, ok := verdictValue(clean[loc[2]:loc[3]])
		if !ok {
			return NotEnoughInfo, reasoning, fmt.Errorf("%w: unclear verdict %q", ErrUnusable, truncate(clean[loc[2]:loc[3]], 100))
		}
		if got != "" && v != got {
			return NotEnoughInfo, reasoning, fmt.Errorf("%w: verdicts disagree in %q", ErrUnusable, truncate(out, 200))
		}
		got = v
	}
	// Whatever follows the first label, later labels included, may not hedge it.
	if tail := clean[locs[0][1]:]; otherVerdictWord(tail, got) || negationRe.MatchString(tail) {
		return NotEnoughInfo, reasoning, fmt.Errorf("%w: text after the verdict qualifies it: %q", ErrUnusable, truncate(tail, 100))
	}
	if got == Supports {
		// The label is the model's last word, the reasoning its argument: a SUPPORTS whose
		// reasoning says the evidence does not support the claim is not a clear verdict,
		// wherever the reasoning stands: before the label, between labels, or after it
		// ("Verdict: SUPPORTS\nReasoning: ... so the claim is false").
		if m := reasoningAgainst(verdictLineRe.ReplaceAllString(clean, "\n")); m != "" {
			return NotEnoughInfo, reasoning, fmt.Errorf("%w: SUPPORTS, but the reasoning says %q", ErrUnusable, m)
		}
	}
	return got, reasoning, nil
}

var (
	// againstRe finds reasoning that argues the evidence does not back the claim: that it does
	// not support, mention or match it, that the claim is wrong, incorrect or false, that the
	// two contradict, conflict or differ. A SUPPORTS whose reasoning said "which does not match
	// the claim" or "the claim's year is wrong" was a verdict until these were added. Reasoning
	// quotes the claim and the evidence, whose words are anyone's ("the Korean War was a
	// conflict", "False Bay", "The Wrong Trousers", "British spelling differs from American"):
	// so "wrong", "false", "conflict", "differ" and their kin count only with the claim, the
	// evidence or what stands for them (it, this, which, the year ...) as their subject or
	// object (againstSubject, againstObject).
	againstRe = regexp.MustCompile(`(?i)\b(?:(?:does|do|did|is|are|was|were|can|could)\s*(?:not|n't)|cannot|fails?\s+to|never)\s+` +
		`(?:\w+\s+){0,2}?(?:support|confirm|back|mention|state|say|verify|establish|corroborate|show|match|agree|align|correspond)|` +
		`\bnot\s+(?:supported|confirmed|mentioned|stated|verified|backed|established|corroborated|matching|consistent)\b|` +
		`\bno\s+(?:evidence|mention|information|support|indication|match)\b|` +
		// support in part, or silence: "only partially supports", "says nothing about", "is silent on"
		`\b(?:partially|partly|only\s+partly|only\s+partially|only\s+in\s+part|not\s+fully|not\s+entirely)\s+(?:supports?|supported|supporting|confirms?|confirmed|matches|backs?)\b|` +
		`\b(?:supports?|supported|confirms?|confirmed|backs?)\s+(?:\w+\s+){0,3}?(?:only\s+(?:in\s+)?part|only\s+partly|only\s+partially|only\s+some|only\s+half)\b|` +
		`\b(?:says?|said|states?|stated|mentions?|mentioned|tells?|told)\s+(?:us\s+)?nothing\s+(?:about|of|on|regarding|concerning)\b|` +
		`\b(?:is|are|was|were|remains?)\s+silent\s+(?:on|about|regarding|concerning|as\s+to)\b|` +
		`\b(?:not\s+enough|insufficient)\s+(?:info|information|evidence)\b|\bunsupported\b|\b(?:mismatch(?:es|ed)?|discrepanc(?:y|ies))\b|` +
		// the claim (or what stands for it) is wrong: "the claim's year is wrong", "which is false"
		againstSubject + `(?:['’]s\s+\w+)?\s+(?:is|was|are|were|seems?|appears?|looks?|(?:would|must|may|might)\s+be)\s+` + againstAdverb +
		`(?:wrong|incorrect|false|inaccurate|mistaken|untrue|erroneous|inconsistent|contradictory|contradicted|refuted|at\s+odds)\b|` +
		// it conflicts with the claim: "differs from the claim", "is inconsistent with the evidence"
		`\b(?:conflicts?|conflicting|conflicted|differs?|differing|differed|disagrees?|disagreeing|inconsistent|at\s+odds|contradictory)\s+(?:with|from|to)\s+` + againstObject + `|` +
		`\b(?:refutes?|refuted|refuting|contradicts?|contradicted|contradicting)\s+(?:(?:\w+\s+){0,2}?` + againstNoun + `|it\b|this\b)|` +
		`\b(?:claims?|evidence|statement|passage|article|it|this|year|date|name|number)\s+(?:\w+\s+)?(?:refutes?|contradicts?|conflicts?|differs?|disagrees?)\b|` +
		`\b(?:claim\s+and\s+(?:the\s+)?evidence|evidence\s+and\s+(?:the\s+)?claim|the\s+two)\s+(?:\w+\s+)?(?:conflict|differ|disagree|contradict)\b|` +
		`\b(?:refuted|contradicted)\s+by\b|\b(?:contradiction|conflict|inconsistency)\s+(?:with|between)\s+` + againstObject + `|` +
		`\b(?:there['’]?s|there\s+is|there\s+are|shows?|creates?|presents?)\s+(?:an?\s+|the\s+)?(?:\w+\s+)?(?:contradictions?|inconsistenc(?:y|ies))\b`)
	// notAgainstRe finds the phrases that negate a contradiction ("does not contradict", "is not
	// wrong", "nothing in the evidence is inconsistent", "no discrepancy"), which argue for the
	// claim.
	notAgainstRe = regexp.MustCompile(`(?i)(?:\b(?:(?:does|do|did|is|are|was|were)\s*(?:not|n't)|never)\s+(?:\w+\s+)?|` +
		`\bnothing\s+(?:(?:in|of|from|about)\s+(?:the\s+)?\w+\s+)?(?:is\s+|was\s+|seems\s+)?(?:\w+\s+)?)` +
		`(?:refutes?|refuted|contradicts?|contradicted|contradictory|wrong|incorrect|false|inaccurate|mistaken|inconsistent|conflicts?|conflicting|differs?)\b|` +
		`\bno\s+(?:contradiction|conflict|discrepancy|mismatch|inconsistency)\b`)
)

// againstSubject and againstObject name what a verdict's reasoning argues about: the claim,
// the evidence, the parts of a claim a verdict checks, and the pronouns that stand for them.
const (
	againstSubject = `\b(?:claims?|evidence|statement|assertion|passage|article|source|premise|it|this|that|which|year|date|name|number|figure|detail|amount)`
	againstObject  = `(?:` + againstNoun + `|(?:it|this|that)\b)`
	againstNoun    = `(?:(?:the|this|that|its|what\s+the)\s+)?(?:claims?|evidence|statement|assertion|passage|article|source)\b`
	// againstAdverb may stand between "is" and "wrong"; an article may not ("it was a false
	// flag operation" quotes).
	againstAdverb = `(?:(?:clearly|also|simply|therefore|thus|partly|partially|entirely|completely|factually|plainly|actually|likely|probably|slightly|somewhat|still|then|so|in\s+fact)\s+)?`
)

// reasoningAgainst returns the phrase of a verdict's reasoning that argues against the claim, or "".
func reasoningAgainst(reasoning string) string {
	return againstRe.FindString(notAgainstRe.ReplaceAllString(reasoning, " "))
}

// otherVerdictWord reports whether s has a verdict word other than one of got's family.
func otherVerdictWord(s string, got Verdict) bool {
	for _, w := range verdictWordRe.FindAllString(s, -1) {
		if v, ok := verdictValue(w); !ok || v != got {
			return true
		}
	}
	return false
}

// verdictValue reads the value of a verdict line: exactly one label, in any case, with
// brackets, quotes and a final period allowed and nothing else.
func verdictValue(v string) (Verdict, bool) {
	v = strings.ToLower(strings.TrimSpace(v))
	v = strings.Trim(v, "[](){}<>\"'`“”‘’*_.!:; \t")
	v = strings.Join(strings.Fields(strings.ReplaceAll(v, "_", " ")), " ")
	switch v {
	case "supports", "supported", "support":
		return Supports, true
	case "refutes", "refuted", "refute":
		return Refutes, true
	case "not enough info", "not enough information", "nei", "not enough evidence", "insufficient information":
		return NotEnoughInfo, true
	}
	return "", false
}

// Refinement is the parsed output of the refine stage.
type Refinement struct {
	Scores  map[string]int `json:"scores"` // criterion (lower case) -> 0..100
	Revised string         `json:"revised,omitempty"`
}

var scoreRe = regexp.MustCompile(`(?i)^[\W_]*(relevan(?:ce|t)|natural(?:ness)?|non[- ]?repetit(?:ion|ive)|temporal(?:ly)?\s*correct(?:ness)?)\b.*?(\d{1,3})\s*(?:/\s*100|out of 100|%)`)

// revisedLineRe matches a "Revised response:" label at the start of a line (after markdown),
// never a mention of the words inside feedback ("the revised response should ...").
// The paper's own label (Table 23) is "Revised response after applying this feedback:".
var revisedLineRe = regexp.MustCompile(`(?im)^[#>*_\s-]*(?:revised|improved|final)\s+(?:response|reply)(?:\s+after\s+applying\s+(?:this|the|that|all|these)\s+feedback)?\s*[*_]*\s*[:：][*_]*[ \t]*`)

// stageFormatRe matches a line that belongs to a stage's output format, not to a reply: the
// labels our prompts and the papers' prompts ask for, feedback score lines, role markers and
// the untrusted-data delimiters. A reply that carries one is a stage's output leaking through
// (a draft written as a refinement, a revision followed by its feedback) and is never shown.
var stageFormatRe = regexp.MustCompile(`(?im)^[#>*_\s-]*(?:(?:search(?:\s+needed\??)?|query|reasoning|verdict|claims?|evidence|` +
	`relevan(?:ce|t)|natural(?:ness)?|non[- ]?repetit(?:ion|ive)|temporal(?:ly)?\s*correct(?:ness)?|` +
	`(?:revised|improved|final)\s+(?:response|reply)(?:\s+after\s+applying\s+\w+\s+feedback)?|` +
	`verified\s+facts|memor(?:y|ies)|relevant\s+memory|clarified|knowledge|topic|directive|passage|` +
	`draft|reply|response|conversation|user\s+turn)[*_]*\s*[:：]|time\s*[:：]\s*(?:none|recent|year\s*=)|` +
	`let'?s\s+break\s+down\s+the\s+feedback|=+\s*(?:system|user|assistant)\s*=+)|<<<UNTRUSTED|END UNTRUSTED>>>`)

// stageFormatLine returns the first line of s that carries a stage's format, if any.
func stageFormatLine(s string) (string, bool) {
	for _, l := range strings.Split(s, "\n") {
		if c := cleanLine(l); stageFormatRe.MatchString(l) || scoreRe.MatchString(c) {
			return c, true
		}
	}
	return "", false
}

// errStageFormat is the unusable-output error of a reply that carries a stage's format line.
func errStageFormat(line string) error {
	return fmt.Errorf("%w: a stage's format line in the reply: %q", ErrUnusable, truncate(line, 120))
}

// revisionNoteRe matches a line in which the model speaks of its revision rather than to the
// user: a list of changes, "This revision removes ...", "The revised version ...", "I
// removed ...". Models add one after the revision, and it was sent as part of the reply. Only
// explicit self-reference counts: a reply's own line may well open with "The changes to the
// tax code ...", "The response was criticised ..." or "The revision of the constitution ...",
// and such lines were cut from the reply.
var revisionNoteRe = regexp.MustCompile(`(?i)^[\W_]*(?:` +
	`(?:explanation|changes?(?:\s+made)?|edits?(?:\s+made)?|rationale|justification)\s*[:：]|` +
	`(?:this|my)\s+(?:revision|revised\s+(?:response|reply|version|text)|rewrite|edit|changes?)\b|` +
	`the\s+(?:revised\s+(?:response|reply|version|text)|rewrite)\b|` +
	`(?:this|the)\s+(?:response|reply)\s+(?:now|is\s+now|has\s+been\s+(?:revised|rewritten|reworded|rephrased|shortened|edited|updated|changed|corrected|simplified|trimmed|kept))\b|` +
	`i\s+(?:have\s+|'ve\s+)?(?:removed|added|kept|changed|rephrased|reworded|shortened|merged|dropped|corrected|fixed|revised|rewrote|made|cut|moved|replaced|softened)\b)`)

// noteLabelRe matches a line labelled as a note ("Note:", "(Note: ...)"). A reply may carry a
// note of its own ("Note: the museum is closed on Mondays."), so such a line is a note about
// the revision only when it speaks of the revision (editTalkRe) and ends the text
// (revisionNotes).
var noteLabelRe = regexp.MustCompile(`(?i)^[\W_]*notes?\s*[:：]`)

// editTalkRe finds the words by which a note speaks of the revision: the draft, the revision,
// the feedback, the citations, the response itself, or an edit in the first person.
var editTalkRe = regexp.MustCompile(`(?i)\b(?:revision|revised|revise|draft|rewrite|rewritten|reworded|rephrased|feedback|citations?|` +
	`(?:original|previous|earlier|this|my)\s+(?:response|reply|answer|version)|nothing\s+(?:to|was|needed\s+to)\s+(?:be\s+)?changed?|unchanged)\b|` +
	`\bi\s+(?:have\s+|'ve\s+)?(?:removed|added|kept|changed|rephrased|reworded|shortened|merged|dropped|corrected|fixed|revised|rewrote|made|cut|moved|replaced|softened|left)\b`)

// revisionNotes reports, for each line, whether it opens the model's note about its revision:
// a line of revisionNoteRe, or a note label that speaks of the revision with nothing but such
// notes, labels and score lines after it. One backward pass: the next line of text vouches for
// the rest, so a line needs only that line's answer.
func revisionNotes(lines []string) []bool {
	note := make([]bool, len(lines))
	next := -1 // the next line of text after line i; -1: none
	for i := len(lines) - 1; i >= 0; i-- {
		l := cleanLine(lines[i])
		note[i] = revisionNoteRe.MatchString(l) ||
			noteLabelRe.MatchString(l) && editTalkRe.MatchString(l) && (next < 0 || note[next])
		if l != "" && !isKnownLabel(l) && !scoreRe.MatchString(l) {
			next = i
		}
	}
	return note
}

// ParseRefinement reads four scored feedback lines and "Revised response: ...". Scores are
// optional (their absence is not worth failing a turn for); the revised response is not. The
// response is the text after the last "Revised response:" label line, up to a line that starts
// another label or a user turn; a revision that is empty, itself a feedback line, or more than
// one revision is unusable. A note about the revision after it (revisionNotes) is not part of
// it, and a revision that is only a note is unusable.
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
	locs := revisedLineRe.FindAllStringIndex(out, -1)
	if len(locs) == 0 {
		return r, unusable("Revised response line", out)
	}
	if len(locs) > 1 {
		return r, fmt.Errorf("%w: %d Revised response lines in %q", ErrUnusable, len(locs), truncate(out, 200))
	}
	var lines []string
	after := strings.Split(out[locs[0][1]:], "\n")
	notes := revisionNotes(after)
	for i, l := range after {
		if i > 0 && (isKnownLabel(cleanLine(l)) || scoreRe.MatchString(cleanLine(l)) || notes[i]) {
			break
		}
		lines = append(lines, l)
	}
	r.Revised = cleanResponse(strings.Join(lines, "\n"))
	if r.Revised == "" || isKnownLabel(r.Revised) || scoreRe.MatchString(r.Revised) || revisionNotes(strings.Split(r.Revised, "\n"))[0] {
		return r, unusable("text after Revised response", out)
	}
	if l, bad := stageFormatLine(r.Revised); bad {
		return r, errStageFormat(l)
	}
	return r, nil
}

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

var speakerPrefixRe = regexp.MustCompile(`(?i)^(bot|assistant|system replies|system|response|reply|answer|chatbot)[ \t]*:\s*`)

var userTurnRe = regexp.MustCompile(`(?i)^\s*(user|human)\s*:`)

// cleanResponse trims a free-text reply: leading speaker labels, wrapping quotes, and anything
// after a blank line followed by a labeled line (a model that keeps going with "User: ...").
func cleanResponse(out string) string {
	s := strings.TrimSpace(strings.ReplaceAll(out, "\r", ""))
	s = speakerPrefixRe.ReplaceAllString(s, "")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if userTurnRe.MatchString(l) {
			lines = lines[:i]
			break
		}
	}
	s = strings.TrimSpace(strings.Join(lines, "\n"))
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"') {
		s = strings.TrimSpace(s[1 : len(s)-1])
	}
	return strings.TrimSpace(CleanControl(s))
}

// CleanControl removes what must not reach a user's terminal or page from LLM text: terminal
// escape sequences (whole), control characters other than newline and tab, bidirectional
// overrides and isolates (which reorder how text is displayed), and invalid UTF-8.
func CleanControl(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r == '\r':
			return -1
		case unicode.IsControl(r), r == utf8.RuneError:
			return -1
		case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069, r == 0x200E, r == 0x200F, r == 0x061C:
			return -1
		}
		return r
	}, stripEscapes(s))
}

// ParseResponse reads a free-text reply for its content, as a streamed reply is read
// (contentReader): a speaker or response label, a preamble, a stage's format lines (a
// "Relevance: ... 100/100" feedback line, a "Verdict:") and a closing offer are left out, and
// the reply ends at a user turn or a role marker. An output with no content left is unusable;
// one over MaxReplyBytes is cut there.
func ParseResponse(out string) (string, error) {
	r := newContentReader(replyLabel, false)
	r.write(out)
	s, err := r.finish(false)
	if r.over && r.out.Len() > 0 {
		return r.out.String(), nil
	}
	return s, err
}

// ParseLabeled reads "Label: value". A one-line output without the label is taken as the value
// (models often drop the label); anything else without it is unusable.
func ParseLabeled(out, label string) (string, error) {
	out = CleanControl(out)
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

// A topic tracker's answer that names no topic is unusable: a refusal ("I can't determine
// the topic", "Sorry, I ..."), a remark that there is none ("no clear topic", "The topic is
// unclear", "unknown"), or the model speaking of itself ("As an AI"). Titles open like
// refusals ("Unknown Pleasures", "I Can't Tell You Why", "I Don't Know How to Love Him",
// "There's No Business Like Show Business", "Sorry, Wrong Number", "It's Impossible") and
// were refused, so an opener alone is no refusal: the whole answer must be one
// (topicNoneRe), or the opener must speak of the task (topicTaskRe) or be written as a
// sentence, not a title ("I can't tell", not "I Can't Tell").

// topicNoneRe matches an answer that is, as a whole, a remark that there is no topic.
var topicNoneRe = regexp.MustCompile(`(?i)^\W*(?:none|nothing|unknown|unclear|uncertain|undetermined|unspecified|` +
	`not\s+(?:sure|clear|known|applicable|specified)|n/?a|no(?:\s+(?:clear|specific|particular|identifiable|single|obvious))?\s+topic)\W*$`)

// topicSelfRe matches the model speaking of itself: "As an AI ...", "Sorry, I ...".
var topicSelfRe = regexp.MustCompile(`(?i)^\W*(?:as\s+an\s+ai\b|sorry\s*[,.!:;]\s*(?:i\b|i['’]m\b|but\b))`)

// topicRefusalRe matches how a refusal or a remark that there is no topic opens.
var topicRefusalRe = regexp.MustCompile(`(?i)^\W*(?:` +
	`i\s*(?:can't|cannot|can\s+not|could\s+not|couldn't|am\s+unable\s+to|'m\s+unable\s+to|am\s+not\s+able\s+to|don't|do\s+not|won't)\s+(?:\w+\s+)?` +
	`(?:determine|tell|identify|say|find|know|see|infer|figure|detect|decide|extract|provide|help|answer|discern)|` +
	`sorry\s*[,.!:;]|unable\s+to\b|(?:it\s+is|it's)\s+(?:unclear|not\s+clear|hard|difficult|impossible)\b|` +
	`(?:unclear|unknown|uncertain|undetermined|not\s+sure|not\s+clear|no\s+(?:clear\s+|specific\s+|particular\s+|identifiable\s+)?topic)\b|` +
	`(?:the\s+)?topic\s+(?:is|was|remains)\s+(?:unclear|unknown|not\s+clear|undetermined|none)\b|` +
	`(?:there\s+is|there's)\s+no\b)`)

// topicTaskRe finds the words by which a refusal speaks of the task: the topic, the subject,
// the conversation.
var topicTaskRe = regexp.MustCompile(`(?i)\b(?:topics?|subjects?|conversation|context|discuss\w*|talk(?:ed|ing)?\s+about)\b`)

// topicRefusal reports whether a topic tracker's answer names no topic.
func topicRefusal(topic string) bool {
	if isNone(topic) || topicNoneRe.MatchString(topic) || topicSelfRe.MatchString(topic) {
		return true
	}
	if !topicRefusalRe.MatchString(topic) {
		return false
	}
	if topicTaskRe.MatchString(topic) {
		return true
	}
	// Written as a sentence: the word after the first in lower case ("I can't tell",
	// "It's impossible to say", "Unknown to me").
	w := strings.Fields(strings.TrimLeft(topic, "\"'“‘([ "))
	if len(w) < 2 {
		return false
	}
	r, _ := utf8.DecodeRuneInString(strings.TrimLeft(w[1], "\"'“‘(["))
	return unicode.IsLower(r)
}

// parseTopic reads the topic tracker's "Topic: ..." answer. None, a refusal and a remark that
// there is no topic (topicRefusal) are unusable, so that the conversation keeps the topic it
// had: "Topic: none" became the topic "none", and the directive was asked about it.
func parseTopic(out string) (string, error) {
	topic, err := ParseLabeled(out, "topic")
	if err != nil {
		return "", err
	}
	if topicRefusal(topic) {
		return "", fmt.Errorf("%w: no topic in %q", ErrUnusable, truncate(topic, 100))
	}
	return topic, nil
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
		if (who == "user" || who == "bot") && text != "" && !isNone(text) && !metaItemRe.MatchString(text) {
			facts = append(facts, MemoryFact{About: who, Text: text})
		}
	}
	if len(facts) > 0 && sawNone {
		return nil, fmt.Errorf("%w: both facts and None in %q", ErrUnusable, truncate(out, 200))
	}
	if len(facts) == 0 && !sawNone {
		return nil, unusable("User:/Bot: fact lines or None", out)
	}
	return facts, nil
}

// ParseKnowledge reads the MSDP knowledge completion: its first non-empty line, without a
// repeated "=>" prefix or a "Knowledge:" label. A refusal or a remark about the task ("I don't
// know", "None", "There is no ...") is not knowledge and is unusable.
func ParseKnowledge(out string) (string, error) {
	for _, l := range strings.Split(out, "\n") {
		l = cleanLine(l)
		if i := strings.LastIndex(l, "=>"); i >= 0 {
			l = strings.TrimSpace(l[i+2:])
		}
		if m := labelRe.FindStringSubmatch(l); m != nil && strings.EqualFold(strings.TrimSpace(m[1]), "knowledge") {
			l = strings.TrimSpace(m[2])
		}
		if l == "" {
			continue
		}
		if isNone(l) || metaItemRe.MatchString(l) {
			return "", fmt.Errorf("%w: not knowledge: %q", ErrUnusable, truncate(l, 100))
		}
		if k := strings.TrimSpace(CleanControl(l)); k != "" {
			return k, nil
		}
	}
	return "", unusable("knowledge sentence", out)
}
