package chat

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/kairos-rag/kairos/rerank"
)

// Attribution is the invariant of the grounded pipelines (wikichat, commonsense): what the user
// sees is made of sentences, each bound to one or more of this turn's passages that support it.
// One deterministic check (attributor.check) applies to every text an LLM adds: the summary
// bullets, the claims its verifier kept, the draft, the refinement, the commonsense response.
// A verdict, a label or the LLM's own citation marker is never what makes a sentence verified.
//
// A passage supports a sentence when, both folded alike (textfold.go):
//   - every number of the sentence is in the passage, by value whatever its notation (digits,
//     words, roman numerals, superscripts, a scale word), standing with the same entity
//     (numberStands: "25 nmol/L" is no support for "25-hydroxyvitamin");
//   - every name of the sentence (a word written with a capital inside it) and every word that
//     is rare in the index (TermStats: RareShare of its passages or fewer) is in the passage;
//   - its other content words are the passage's, in any form (Porter stems) or as a synonym
//     (synonymGroups), save a few common words of a rewording (MaxRewordShare), none of them the
//     user's words or earlier turns' (which are never support) and none the opposite of the
//     passage's (oppositeGroups);
//   - each of its clauses finds its words in one sentence of the passage (scattered);
//   - each of its clauses denies where the passage's clause that restates it denies, and
//     only there (clausePolarity);
//   - each of its numbers keeps the bound the passage puts on it ("more than", "before":
//     boundOf).
//
// A sentence with nothing to check (no content word, no number: "Sure!", "Is there anything
// else you'd like to know?", "Sorry, I'm not sure.") is chat and passes without a source. An
// assent or denial of its own ("Yes.", "No, that's wrong") is dropped, and one that opens a
// sentence ("Yes, X") is cut off it: the passages can support X, never the "yes".

// TermStats tells how many passages of the index hold a word: the attribution check's measure
// of which words are rare. search.Index implements it.
type TermStats interface {
	// DocFreq returns, for each word, how many passages of the index hold it (after the
	// index's own analysis), and how many passages the index has.
	DocFreq(ctx context.Context, words []string) (df []int, n int, err error)
}

// TermStatsFunc adapts a function to TermStats (a server's live index, which reloads).
type TermStatsFunc func(ctx context.Context, words []string) ([]int, int, error)

// DocFreq calls f.
func (f TermStatsFunc) DocFreq(ctx context.Context, words []string) ([]int, int, error) {
	return f(ctx, words)
}

// Attribution settings. A word held by at most RareShare of the index's passages is rare (one
// in a thousand: "napoleon", "astronauts", "seawater" in English Wikipedia leads; not
// "emperor", "famous" or "probably"): it must be in the supporting passage, as a name must. Of
// a sentence's other content words, at most MaxRewordShare (rounded down) may be words the
// passage lacks, the common words of a rewording ("The tower went up in 1889" for "was built in
// 1889"): a sentence of four content words or fewer must hold them all, or their synonyms.
const (
	RareShare      = 0.001
	MaxRewordShare = 0.2
)

// evidence is one passage of the turn, as the check reads it.
type evidence struct {
	hit   rerank.Hit
	toks  []tok
	title []tok    // the passage's title: its words support any sentence of it
	sents [][2]int // token ranges of its sentences
}

// attributor checks sentences against this turn's passages. Safe for concurrent use.
type attributor struct {
	terms TermStats // nil: every word is rare (fail closed)
	mu    sync.Mutex
	pool  []evidence
	ids   map[string]int
	rare  map[string]bool // folded word -> rare
	user  map[string]bool // stems of the user's words and of earlier turns
}

// newAttributor starts a check for one turn. userTexts are the user's message and the earlier
// turns (both speakers): their words are never support.
func newAttributor(terms TermStats, userTexts ...string) *attributor {
	a := &attributor{terms: terms, ids: map[string]int{}, rare: map[string]bool{}, user: map[string]bool{}}
	for _, t := range userTexts {
		for _, w := range tokenize(t) {
			if !w.num && isContent(w) {
				a.user[w.stem] = true
			}
		}
	}
	return a
}

// add puts passages into the pool (each once, by id) and returns their pool numbers. A
// passage's sentences that speak to the bot are no evidence (withoutBotAddress).
func (a *attributor) add(hits ...rerank.Hit) []int {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]int, len(hits))
	for i, h := range hits {
		if n, ok := a.ids[h.ID]; ok {
			out[i] = n
			continue
		}
		text := withoutBotAddress(h.Text)
		if h.Title != "" && !strings.HasPrefix(text, h.Title) {
			text = h.Title + " | " + text
		}
		e := evidence{hit: h, toks: tokenize(text), title: tokenize(h.Title)}
		start := 0
		for k, t := range e.toks {
			if k > start && t.sentStart {
				e.sents = append(e.sents, [2]int{start, k})
				start = k
			}
		}
		e.sents = append(e.sents, [2]int{start, len(e.toks)})
		a.ids[h.ID] = len(a.pool)
		out[i] = len(a.pool)
		a.pool = append(a.pool, e)
	}
	return out
}

// passage returns pool passage n.
func (a *attributor) passage(n int) rerank.Hit {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.pool[n].hit
}

// Kinds of checked sentences.
const (
	sentDropped = iota
	sentFact    // supported by one or more passages
	sentChat    // nothing to check
)

// checked is the outcome of checking one sentence.
type checked struct {
	kind     int
	text     string // the sentence as it may be shown: markers removed, an opening assent cut off
	passages []int  // supporting pool passages, the preferred and best first
	reason   string // why it was dropped
}

// assentRe is an assent or a denial that opens a sentence, with its punctuation: "Yes, ...",
// "No! ...", "That's right. ...". The words after "No" must be set off ("No one knows" is no
// denial), and a hyphen sets them off only with a space after it: "No-fault divorce" and
// "Right-wing parties" open with a word, not an answer.
var assentRe = regexp.MustCompile(`(?i)^\W*(?:yes|yeah|yep|yup|no|nope|correct|incorrect|right|wrong|true|false|exactly|indeed|absolutely|certainly|definitely|` +
	`(?:that['’]?s|that\s+is|you['’]?re|you\s+are)\s+(?:right|correct|true|wrong|incorrect|mistaken))` +
	`\s*(?:[,!.;:—–]+-*|-+(?:\s|$))\s*`)

// ellipsisEnds are the words an elliptical answer ends on ("He did.", "It is.", "I think so."):
// it borrows its claim from the question, so it is checked as one that states nothing. Such an
// answer is short (maxEllipsisWords); a longer sentence of chat that ends on one ("Let me know
// if there is anything else I can do.") is chat.
const maxEllipsisWords = 5

var ellipsisEnds = setOf(`is are was were am be been do does did has have had can could will would
	shall should may might must so`)

// clauseSepRe separates the clauses of a sentence of chat words, for ellipticClause.
var clauseSepRe = regexp.MustCompile(`(?i)[,;:—–()]|\bbut\b|\band\b`)

// fillerWords may trail an elliptical answer's verb without changing what it affirms ("He
// certainly did, actually.", "It is too.").
var fillerWords = setOf(`actually certainly really indeed definitely surely too though probably
	maybe perhaps obviously course yes`)

var conditionWords = setOf(`if whether when unless`)

// pronounAux says whether toks hold a pronoun followed by an auxiliary that ends what it says
// ("he did", "it was"): with a number and no content word ("He did, in 1804."), the
// sentence affirms the user's claim and adds a number to it.
func pronounAux(toks []tok) bool {
	for i := 0; i+1 < len(toks); i++ {
		if elliptSubjects[toks[i].word] && ellipsisEnds[toks[i+1].word] &&
			(i+2 == len(toks) || toks[i+2].sep == sepBreak || toks[i+2].num || stopwords[toks[i+2].word]) {
			return true
		}
	}
	return false
}

var elliptSubjects = setOf(`he she it they i we you this that`)

// ellipticClause says whether a clause of body (cut at commas, dashes, "but" and "and") is an
// elliptical answer: at most maxEllipsisWords words ending, filler words aside, on an
// auxiliary ("He did", "he certainly did"), but not a condition ("if I can"). Only the whole
// sentence was looked at, so "He did, I think." and "I'm not sure, but he did." passed as
// chat while affirming the user's claim.
func ellipticClause(body string) bool {
	for _, part := range clauseSepRe.Split(body, -1) {
		toks := tokenize(part)
		for len(toks) > 1 && fillerWords[toks[len(toks)-1].word] {
			toks = toks[:len(toks)-1]
		}
		if len(toks) == 0 || len(toks) > maxEllipsisWords || !ellipsisEnds[toks[len(toks)-1].word] {
			continue
		}
		if slices.ContainsFunc(toks, func(t tok) bool { return conditionWords[t.word] }) || toks[0].word == "as" {
			continue // a condition ("I'll help if I can") affirms nothing
		}
		return true
	}
	return false
}

// doubtRe is a first-person doubt ("I'm not sure", "I don't know", "I couldn't find"): chat,
// for all its "not", when nothing else in the sentence needs checking.
var doubtRe = regexp.MustCompile(`(?i)\bi\s*(?:['’]m|am)\s+(?:not\s+(?:sure|certain|aware)|unsure|uncertain)\b|` +
	`\bi\s+(?:do\s+not|don['’]t|did\s+not|didn['’]t|could\s+not|couldn['’]t|can['’]t|cannot|can\s+not)\s+(?:know|find|tell|say|confirm|verify|recall)\b`)

// listLeadRe is a list item's marker at the start of a sentence ("- ", "2. ").
var listLeadRe = regexp.MustCompile(`^[ \t]*(?:[-*•][ \t]+|[0-9]{1,2}[.)][ \t]+)`)

// check checks one sentence. prefer are the pool passages its LLM cited or it came from:
// among the passages that support it, they come first.
func (a *attributor) check(ctx context.Context, sentence string, prefer []int) (checked, error) {
	body := strings.TrimSpace(stripMarkers(sentence))
	lead := listLeadRe.FindString(body)
	body = body[len(lead):]
	assent := assentRe.FindString(body)
	if assent != "" {
		body = upperFirst(body[len(assent):])
		if len(tokenize(body)) == 0 {
			return checked{reason: "an assent or denial of its own"}, nil
		}
	}
	c := checked{text: strings.TrimSpace(lead) + " " + body}
	c.text = strings.TrimSpace(c.text)
	toks := tokenize(body)
	content, nums, negated := 0, 0, false
	for i, t := range toks {
		switch {
		case t.num:
			nums++
		case negatesAt(toks, i):
			negated = true
		case isContent(t) && !chatWords[t.word]:
			content++
		}
	}
	if content == 0 && nums > 0 && pronounAux(toks) {
		c.reason = "an elliptical answer with a number, nothing to check it against"
		return c, nil
	}
	if content == 0 && nums == 0 {
		// An assent before words that state nothing ("Yes, he did.") answers the user's
		// question, and an elliptical answer ("It is.") repeats it: either affirms a claim
		// that the sentence does not hold, so there is nothing to check it against.
		switch doubt := doubtRe.MatchString(body); {
		case assent != "" && !doubt:
			c.reason = "an assent or denial whose words state nothing to check"
		case ellipticClause(body):
			// Before the doubt: "I'm not sure, but he did." affirms the user's claim.
			c.reason = "an elliptical answer, nothing to check"
		case doubt:
			c.kind = sentChat
		case negated:
			c.reason = "a denial with nothing to check"
		default:
			c.kind = sentChat
		}
		return c, nil
	}
	if err := a.lookupRare(ctx, toks); err != nil {
		return checked{}, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	order := make([]int, 0, len(a.pool))
	seen := map[int]bool{}
	for _, p := range prefer {
		if p >= 0 && p < len(a.pool) && !seen[p] {
			order, seen[p] = append(order, p), true
		}
	}
	for p := range a.pool {
		if !seen[p] {
			order = append(order, p)
		}
	}
	best, bestScore := "", -1.0
	for _, p := range order {
		score, why := a.supports(toks, &a.pool[p])
		if why == "" {
			c.passages = append(c.passages, p)
			continue
		}
		if score > bestScore {
			best, bestScore = fmt.Sprintf("passage %s lacks %s", a.pool[p].hit.ID, why), score
		}
	}
	if len(c.passages) > 0 {
		c.kind = sentFact
		return c, nil
	}
	if best == "" {
		best = "no passage was retrieved"
	}
	c.reason = best
	return c, nil
}

// personalBefore reports whether a word of the speaker or the user (personalWords, not
// "US") stands before ts[i] in its clause with only function and chat words between: what
// makes a claim word chat in a sentence that states a fact (claimChatWords).
func personalBefore(ts []tok, i int) bool {
	for j := i - 1; j >= 0; j-- {
		switch w := ts[j].word; {
		case personalWords[w] && !ts[j].allCaps:
			return true
		case !stopwords[w] && !chatWords[w]:
			return false // "I'd love to", "you might like", not "you visit the free museum"
		}
		if ts[j].sep == sepBreak {
			return false
		}
	}
	return false
}

// isContent reports whether a word token carries content: not a stopword, and a letter long
// unless written as a capital ("vitamin D").
func isContent(t tok) bool {
	if t.num {
		return false
	}
	if stopwords[t.word] {
		// A name that folds to a stop word carries a claim: "the US", "the WHO", "in May"
		// passed against a passage naming Norway, Pfizer and August.
		return t.allCaps || (t.word == "may" && t.capital && !t.sentStart)
	}
	return utf8.RuneCountInString(t.word) >= 2 || t.capital
}

// lookupRare asks TermStats about the content words of toks not asked about yet.
func (a *attributor) lookupRare(ctx context.Context, toks []tok) error {
	a.mu.Lock()
	var ask []string
	for _, t := range toks {
		if _, ok := a.rare[t.word]; !ok && isContent(t) && !slices.Contains(ask, t.word) {
			if a.terms == nil {
				a.rare[t.word] = true
				continue
			}
			ask = append(ask, t.word)
		}
	}
	a.mu.Unlock()
	if len(ask) == 0 {
		return nil
	}
	df, n, err := a.terms.DocFreq(ctx, ask)
	if err != nil {
		return fmt.Errorf("attribution: document frequencies: %w", err)
	}
	a.mu.Lock()
	for i, w := range ask {
		a.rare[w] = n <= 0 || df[i] == 0 || float64(df[i]) <= RareShare*float64(n)
	}
	a.mu.Unlock()
	return nil
}

// supports returns "" when passage e supports the sentence toks (attributor's rules), else
// what it lacks, with a score ranking how close it came (for the reason given).
func (a *attributor) supports(toks []tok, e *evidence) (float64, string) {
	found, content := 0, 0
	var reworded []string
	var at []bool // at[i]: toks[i] is a content word found in e
	for i, t := range toks {
		at = append(at, false)
		if t.num {
			if !numberStands(toks, i, e.toks) {
				return float64(found) / float64(len(toks)), "the number " + t.word + " standing with what it stands with here"
			}
			continue
		}
		if !isContent(t) || boundWordAt(toks, i) {
			continue // a bound is compared with its number (boundOf)
		}
		content++
		if hasToken(e.toks, t) {
			found++
			at[i] = true
			continue
		}
		if chatWords[t.word] && !factWords[t.word] && (!claimChatWords[t.word] || personalBefore(toks, i)) && !(t.capital && !t.sentStart) {
			found++
			continue
		}
		switch {
		case t.capital && !t.sentStart:
			return float64(found) / float64(len(toks)), "the name " + strconvQuote(t.word)
		case a.rare[t.word]:
			return float64(found) / float64(len(toks)), "the word " + strconvQuote(t.word) + ", rare in the index"
		case a.user[t.stem]:
			return float64(found) / float64(len(toks)), "the user's word " + strconvQuote(t.word)
		default:
			reworded = append(reworded, t.stem)
		}
	}
	score := float64(found) / float64(max(1, content))
	if len(reworded) > int(MaxRewordShare*float64(content)) {
		return score, "words " + strconvQuote(strings.Join(reworded, " ")) + " (a rewording may add fewer)"
	}
	if what := scattered(toks, at, e); what != "" {
		return score, what
	}
	touched := touchedSentences(toks, at, e)
	for _, w := range reworded {
		for _, r := range touched {
			for _, p := range e.toks[r[0]:r[1]] {
				if !p.num && opposite(w, p.stem) {
					return score, "the opposite of its word " + strconvQuote(p.word)
				}
			}
		}
	}
	if what := functionWordClaim(toks, e, touched); what != "" {
		return score, what
	}
	return score, clausePolarity(toks, at, e)
}

// functionWordOpposites are stop words that carry a claim by their direction: a sentence's
// word whose opposite the passage's sentences that restate it hold, and not the word, turns
// the passage around ("More patients died ..." against "Fewer patients died ...", "before
// meals" against "after meals"). Stop words are otherwise not compared.
var functionWordOpposites = map[string][]string{
	"more": {"fewer", "less"}, "most": {"fewest", "least"}, "before": {"after"}, "after": {"before"},
	"above": {"below"}, "below": {"above"}, "all": {"none", "some", "few"},
}

// quantifierWords claim a whole: the passage's sentences that restate the sentence must hold
// the word or one of its synonyms ("All of the patients died" against "Twelve of the 40
// patients died").
var quantifierWords = map[string][]string{
	"all":   {"all", "every", "each", "entire", "whole", "everyone", "everybody"},
	"every": {"all", "every", "each", "everyone", "everybody"},
	"none":  {"none", "no", "nobody", "neither"},
}

// idiomAt says whether the function word toks[i] is part of an idiom that claims nothing:
// "of all", "at all", "after all", "above all", "all in all".
func idiomAt(toks []tok, i int) bool {
	w := toks[i].word
	prev, next := "", ""
	if i > 0 && toks[i].sep != sepBreak {
		prev = toks[i-1].word
	}
	if i+1 < len(toks) && toks[i+1].sep != sepBreak {
		next = toks[i+1].word
	}
	switch w {
	case "all":
		return prev == "of" || prev == "at" || prev == "after" || prev == "above" || next == "in" || prev == "in"
	case "after", "above":
		return next == "all"
	}
	return false
}

// turnedAround says whether a passage sentence of touched holds one of opp, the opposites of
// the sentence's function word toks[i], about the same thing: followed by the same content
// word ("more patients" and "fewer patients", "before meals" and "after meals"), and, for a
// comparison, not against another ("Paris is more populous than Lyon" restates "Lyon is less
// populous than Paris"). An opposite about something else ("after the Revolution ended"
// against "a decade before Napoleon was crowned") is another clause's order, not a denial.
func turnedAround(toks []tok, i int, e *evidence, touched [][2]int, opp []string) bool {
	nextContent := func(ts []tok, j int) string {
		for k := j + 1; k < len(ts) && k <= j+3; k++ {
			if ts[k].num {
				return ""
			}
			if isContent(ts[k]) {
				return ts[k].stem
			}
		}
		return ""
	}
	thanWord := func(ts []tok, j int) string {
		for k := j + 1; k < len(ts) && k <= j+4; k++ {
			if ts[k].word == "than" {
				return nextContent(ts, k)
			}
		}
		return ""
	}
	want, than := nextContent(toks, i), thanWord(toks, i)
	for _, r := range touched {
		ps := e.toks[r[0]:r[1]]
		for j, p := range ps {
			if p.num || !slices.Contains(opp, p.word) {
				continue
			}
			if got := nextContent(ps, j); want == "" || got == "" || !sameWord(got, want) {
				continue
			}
			if pt := thanWord(ps, j); than != "" && pt != "" && !sameWord(than, pt) {
				continue
			}
			return true
		}
	}
	return false
}

// functionWordClaim returns what a stop word of the sentence claims that the passage's
// sentences in touched do not (functionWordOpposites, quantifierWords), or "". A bound word
// beside a number is boundOf's to compare.
func functionWordClaim(toks []tok, e *evidence, touched [][2]int) string {
	holds := func(ws ...string) bool {
		for _, r := range touched {
			for _, w := range ws {
				if hasWord(e.toks[r[0]:r[1]], stem(w)) {
					return true
				}
			}
		}
		return false
	}
	for i, t := range toks {
		if t.num || boundWordAt(toks, i) || idiomAt(toks, i) {
			continue
		}
		if opp, ok := functionWordOpposites[t.word]; ok && !holds(t.word) && turnedAround(toks, i, e, touched, opp) {
			return "the opposite of its word " + strconvQuote(t.word)
		}
		if syn, ok := quantifierWords[t.word]; ok && !holds(syn...) {
			return "the word " + strconvQuote(t.word) + ", which claims a whole the passage does not"
		}
	}
	return ""
}

// clausePolarity returns which clause of the sentence (cut at its punctuation) denies what the
// passage's clauses that restate it assert, or asserts what they deny, or "". The passage is
// cut into clauses the same way, title included. A clause of the passage that agrees restates
// the sentence's clause when it holds half of its words or more (or the most of any clause),
// and as many of them as the best clause that disagrees, or a word that clause lacks:
//   - "Bats are blind." against "Bat | Bats are not blind.": the title agrees with one word
//     of two, the denial holds both;
//   - "Vitamin D is produced in the skin." against "Vitamin D is not produced by plants; it
//     is produced in the skin.": the agreeing clause holds "skin", which the denial lacks;
//   - "Pluto was discovered in 1930." against "Pluto was discovered in 1930, but it is no
//     longer classified as a planet.": the denial is another clause's.
//
// A denial moved from one clause to another ("The Eiffel Tower is the tallest structure in
// France, and it is not in Paris", where the passage denies the first and asserts the second)
// is found clause by clause.
func clausePolarity(toks []tok, at []bool, e *evidence) string {
	type pclause struct {
		r     [2]int
		n     int
		agree bool
	}
	pcl := polarityRanges(e.toks, e.title)
	// holds: a clause of the passage holds a word it has or its title has, which its
	// pronouns stand for ("Bat | ... Contrary to popular belief, they are not blind.").
	holds := func(r [2]int, w string) bool { return hasWord(e.toks[r[0]:r[1]], w) || hasWord(e.title, w) }
	for _, c := range polarityRanges(toks, e.title) {
		var words []string
		neg := false
		for i := c[0]; i < c[1]; i++ {
			neg = neg || negatesIn(toks, i, e.title)
			if at[i] {
				words = append(words, toks[i].stem)
			}
		}
		if len(words) == 0 {
			continue
		}
		var held []pclause
		best, maxDis := 0, 0
		for _, r := range pcl {
			n := 0
			for _, w := range words {
				if holds(r, w) {
					n++
				}
			}
			if n == 0 {
				continue
			}
			p := pclause{r: r, n: n, agree: clauseDeniesIn(e.toks[r[0]:r[1]], e.title) == neg}
			held = append(held, p)
			best = max(best, n)
			if !p.agree {
				maxDis = max(maxDis, n)
			}
		}
		if len(held) == 0 {
			continue
		}
		// lacksTopDenial: some word of the sentence's clause that a is alone in holding, against
		// every disagreeing clause that holds the most.
		lacksTopDenial := func(a pclause) bool {
			for _, w := range words {
				if !holds(a.r, w) {
					continue
				}
				alone := true
				for _, d := range held {
					if !d.agree && d.n == maxDis && holds(d.r, w) {
						alone = false
						break
					}
				}
				if alone {
					return true
				}
			}
			return false
		}
		restated := slices.ContainsFunc(held, func(a pclause) bool {
			return a.agree && (2*a.n >= len(words) || a.n == best) && (a.n >= maxDis || lacksTopDenial(a))
		})
		switch {
		case restated:
		case neg:
			return "the denial of its clause " + strconvQuote(clauseText(toks[c[0]:c[1]]))
		default:
			return "an assertion of its clause " + strconvQuote(clauseText(toks[c[0]:c[1]])) + ": the passage denies it"
		}
	}
	return ""
}

// clauseRanges cuts ts into clauses at its punctuation (tok.sepBreak).
func clauseRanges(ts []tok) [][2]int {
	var out [][2]int
	for start := 0; start < len(ts); {
		end := start + 1
		for end < len(ts) && ts[end].sep != sepBreak {
			end++
		}
		out = append(out, [2]int{start, end})
		start = end
	}
	return out
}

// clauseDeniesIn says whether ts, a clause of a passage whose title is title, holds a
// negation (negatesIn).
func clauseDeniesIn(ts, title []tok) bool {
	for i := range ts {
		if negatesIn(ts, i, title) {
			return true
		}
	}
	return false
}

// polarityRanges cuts ts into clauses as clauseRanges does, but a clause whose negation has
// no content word after it carries on through the clauses that follow, up to the first that
// holds one: "Supplementation did not, however, reduce fracture risk" is one denial, not "did
// not" and an assertion that "however" and commas cut off.
func polarityRanges(ts, title []tok) [][2]int {
	rs := clauseRanges(ts)
	var out [][2]int
	for k := 0; k < len(rs); k++ {
		r := rs[k]
		if danglingNegation(ts[r[0]:r[1]], title) {
			for k+1 < len(rs) {
				k++
				r[1] = rs[k][1]
				if hasContent(ts[rs[k][0]:rs[k][1]]) {
					break
				}
			}
		}
		out = append(out, r)
	}
	return out
}

// danglingNegation reports whether the clause ts ends on a negation: nothing but asides after
// it ("did not, however, ..."; "is not known, ..." ends on what it denies).
func danglingNegation(ts, title []tok) bool {
	last := -1
	for i := range ts {
		if negatesIn(ts, i, title) {
			last = i
		}
	}
	if last < 0 {
		return false
	}
	for _, t := range ts[last+1:] {
		if !asides[t.word] {
			return false
		}
	}
	return true
}

// hasContent reports whether ts holds a content word other than an aside ("however") or a
// chat word ("in fact").
func hasContent(ts []tok) bool {
	for _, t := range ts {
		if isContent(t) && !asides[t.word] && !chatWords[t.word] {
			return true
		}
	}
	return false
}

// clauseText is a clause's words, for a reason.
func clauseText(ts []tok) string {
	w := make([]string, len(ts))
	for i, t := range ts {
		w[i] = t.word
	}
	return strings.Join(w, " ")
}

// touchedSentences returns the sentences of e that hold at least half of the sentence's
// content words found in e (at), or the one that holds most: those it restates, whose polarity
// it must keep and whose words it must not turn into their opposites.
func touchedSentences(toks []tok, at []bool, e *evidence) [][2]int {
	var words []string
	for i, t := range toks {
		if at[i] {
			words = append(words, t.stem)
		}
	}
	var out [][2]int
	best, bestN := e.sents[0], -1
	for _, r := range e.sents {
		n := countWords(e.toks[r[0]:r[1]], words)
		if n > bestN {
			best, bestN = r, n
		}
		if len(words) > 0 && 2*n >= len(words) {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		out = append(out, best)
	}
	return out
}

// scattered returns what of the sentence the passage holds only in pieces, or "": each of the
// sentence's clauses (cut at its punctuation) must find its words in one sentence of the
// passage, its title aside, save one word when that sentence holds three or more of them (a
// detail of the passage's folded in: "Frozen is a 2013 Disney film directed by Chris Buck").
// A clause of one such word leans on the clause before it (or after it). "Vitamin D is made in
// the liver" puts "produced" of one sentence with "cod liver oil" of another, and no sentence
// of the passage says it; "Vitamin D, a group of fat-soluble secosteroids, was identified in
// 1922" takes each clause from a sentence that says it.
func scattered(toks []tok, at []bool, e *evidence) string {
	var clauses [][]string
	var cur []string
	for i, t := range toks {
		if i > 0 && t.sep == sepBreak && len(cur) > 0 {
			clauses, cur = append(clauses, cur), nil
		}
		if at[i] && !hasWord(e.title, t.stem) {
			cur = append(cur, t.stem)
		}
	}
	if len(cur) > 0 {
		clauses = append(clauses, cur)
	}
	for i := 0; i < len(clauses); i++ { // a clause of one word joins a neighbour
		if len(clauses[i]) == 1 && len(clauses) > 1 {
			j := i - 1
			if j < 0 {
				j = 1
			}
			clauses[j] = append(clauses[j], clauses[i]...)
			clauses = append(clauses[:i], clauses[i+1:]...)
			i--
		}
	}
	// A passage sentence that opens with a pronoun holds the subject of the sentence before it:
	// "Napoleon was crowned emperor in 1804." restates "Napoleon was born in Corsica in 1769.
	// He was crowned emperor in 1804.", and was dropped.
	stands := make([][]tok, len(e.sents))
	for k := 1; k < len(e.sents); k++ {
		if r := e.sents[k]; r[1] > r[0] && pronounLeads[e.toks[r[0]].word] {
			p := e.sents[k-1]
			stands[k] = subjectOf(e.toks[p[0]:p[1]])
		}
	}
	for _, c := range clauses {
		best := 0
		for k, r := range e.sents {
			n := 0
			for _, w := range c {
				if hasWord(e.toks[r[0]:r[1]], w) || hasWord(stands[k], w) {
					n++
				}
			}
			best = max(best, n)
		}
		if stray := len(c) - best; stray > 1 || stray == 1 && best < 3 {
			return "one sentence holding " + strconvQuote(strings.Join(c, " "))
		}
	}
	return ""
}

// hasToken is hasWord for the sentence's word t, except that two capitalised words must be the
// same word, not one the start of the other: "India" is not "Indiana", nor "Niger" "Nigeria".
// That holds for two words that open sentences too, since a name may open one; two forms of a
// common word that both open a sentence ("Treated", "Treatment") then count as a rewording.
func hasToken(ts []tok, t tok) bool {
	if t.allCaps && stopwords[t.word] {
		return hasStopName(ts, t.word)
	}
	for _, p := range ts {
		if p.num {
			continue
		}
		same := sameWord(p.stem, t.stem)
		if t.capital && p.capital {
			same = p.stem == t.stem
		}
		if same || synonymous(p.stem, t.stem) {
			return true
		}
	}
	return false
}

// hasStopName says whether ts writes the name w, one that folds to a stop word ("WHO",
// "US"), as a name: in capitals, or as its letters with dots ("U.S."). The passage's "who"
// or "us" is not the name.
func hasStopName(ts []tok, w string) bool {
	for i, p := range ts {
		if p.num {
			continue
		}
		if p.allCaps && p.word == w {
			return true
		}
		if p.capital && len(p.word) == 1 && i+len(w) <= len(ts) {
			letters := ""
			for _, q := range ts[i : i+len(w)] {
				if q.num || !q.capital || len(q.word) != 1 {
					break
				}
				letters += q.word
			}
			if letters == w {
				return true
			}
		}
	}
	return false
}

// countWords is how many of the stems words ts holds (hasWord).
func countWords(ts []tok, words []string) int {
	n := 0
	for _, w := range words {
		if hasWord(ts, w) {
			n++
		}
	}
	return n
}

// hasWord reports whether ts holds a word of stem s: the same word in any form, or a synonym.
func hasWord(ts []tok, s string) bool {
	for _, p := range ts {
		if !p.num && (sameWord(p.stem, s) || synonymous(p.stem, s)) {
			return true
		}
	}
	return false
}

// numberStands reports whether the number s[i] stands in p with the same value and the same
// entity: a passage occurrence of its value (or, for a decade or a century, of a year in it)
// with the same closest word before or after it, word for word; or whose surroundings (two
// content words either side) share a word with its own clause's, and whose word right after it, when the sentence
// has one ("86.5 nmol/L", "25-hydroxyvitamin", "330 metres", "978 Korean subjects"), is the
// sentence's, or stands within three words of it and is no other number's there.
func numberStands(s []tok, i int, p []tok) bool {
	t := s[i]
	after := wordAfter(s, i)
	near := nearWords(s, i, 6)
	sb, sa := nearest(s, i)
	bs := boundOf(s, i)
	for j, q := range p {
		// A bound of the sentence's that the passage lacks or turns fails ("more than 300" for
		// "fewer than 300" or "300"); the passage's own bound may go unsaid ("at 12 weeks" for
		// "after 12 weeks").
		// The passage's "one" or "two" read as a word ("the two countries") holds the count
		// a sentence writes as a number ("Two countries").
		spelled := !q.num && t.value <= 2 && unitWordValue(q.word) == t.value
		if !spelled && (!q.num || !valueMatches(t, q)) || bs != 0 && bs != boundOf(p, j) {
			continue
		}
		if pb, pa := nearest(p, j); sb != "" && sb == pb || sa != "" && sa == pa {
			return true
		}
		if after != "" {
			if pa := wordAfter(p, j); pa != "" && !sameOrSynonym(pa, after) || pa == "" && !unitNear(p, j, after) {
				continue
			}
		}
		if len(near) == 0 || sharesWord(near, nearContent(p, j, 2)) {
			return true
		}
	}
	return false
}

// boundOf says which way a bound word bounds the number ts[i]: +1 from below ("more than
// 300", "over 65", "after 1804", "65 and over"), -1 from above ("fewer than 300", "before
// 1804", "300 or fewer"), 0 for none. A bound a sentence puts on its number must be the
// passage's (numberStands): "More than 300 athletes" passed against "Fewer than 300
// athletes".
func boundOf(ts []tok, i int) int {
	if w := boundBefore(ts, i); w != "" {
		return boundSign(w)
	}
	if i+2 < len(ts) && (ts[i+1].word == "or" || ts[i+1].word == "and") && ts[i+1].sep != sepBreak && ts[i+2].sep != sepBreak &&
		boundsAfter[ts[i+2].word] {
		return boundSign(ts[i+2].word)
	}
	return 0
}

// boundBefore is the bound word right before the number ts[i] ("than" skipped), or "".
func boundBefore(ts []tok, i int) string {
	if i == 0 || ts[i].sep == sepBreak {
		return ""
	}
	w := ts[i-1].word
	if w == "than" && i >= 2 && ts[i-1].sep != sepBreak {
		w = ts[i-2].word
		if b := thanBounds[w]; b != "" {
			return b // "old than 65", a rewording's "older than 65"
		}
	}
	if boundSign(w) == 0 {
		return ""
	}
	return w
}

func boundSign(w string) int {
	switch {
	case boundsUp[w]:
		return 1
	case boundsDown[w]:
		return -1
	}
	return 0
}

// boundWordAt reports whether ts[i] is a bound word of a number (boundOf): compared with the
// number by its direction, not as a word the passage must hold ("under 300" for "fewer than
// 300").
func boundWordAt(ts []tok, i int) bool {
	if boundSign(ts[i].word) == 0 {
		return false
	}
	joined := func(j int) bool { return j < len(ts) && ts[j].sep != sepBreak }
	switch {
	case joined(i+1) && ts[i+1].num: // "over 65"
		return true
	case joined(i+1) && joined(i+2) && ts[i+1].word == "than" && ts[i+2].num: // "more than 300"
		return true
	}
	return i >= 2 && ts[i-2].num && boundOf(ts, i-2) != 0 // "65 and over"
}

func sameOrSynonym(a, b string) bool { return b != "" && (sameWord(a, b) || synonymous(a, b)) }

// unitNear reports whether a word of stem unit stands within three words of p[j], and not as
// the unit of another number.
func unitNear(p []tok, j int, unit string) bool {
	for k := max(0, j-3); k < min(len(p), j+4); k++ {
		if k == j || p[k].num || !sameOrSynonym(unit, p[k].stem) {
			continue
		}
		if k > 0 && p[k-1].num && k-1 != j {
			continue
		}
		return true
	}
	return false
}

// valueMatches reports whether the sentence's number t is the passage's number q: the same
// value (up to the rounding of a product such as "1.5 million", not a unit: "12,001" is not
// "12,000"), t a decade ("1920s") or century ("19th century") holding q's year, or a century
// written as its hundreds ("1800s" for "19th century", either way). A year is not its
// decade: "1920" is not supported by "the 1920s".
func valueMatches(t, q tok) bool {
	if math.IsNaN(t.value) || math.IsNaN(q.value) {
		return false
	}
	if t.value == q.value || q.value != 0 && math.Abs(t.value/q.value-1) < 1e-9 {
		return t.century == q.century && (t.decade || !q.decade)
	}
	hundreds := func(d tok) int { // the century that "1800s" names, or 0
		if v := int(d.value); d.decade && float64(v) == d.value && v%100 == 0 {
			return v/100 + 1
		}
		return 0
	}
	switch {
	case t.century && q.decade:
		return hundreds(q) == int(t.value)
	case t.decade && q.century:
		return hundreds(t) == int(q.value)
	}
	y := int(q.value)
	if float64(y) != q.value || y < 100 || y > 9999 {
		return false
	}
	switch {
	case t.decade:
		return int(t.value)/10 == y/10
	case t.century:
		return (y-1)/100+1 == int(t.value)
	}
	return false
}

// wordAfter returns the stem of the content word right after a number, joined to it or after
// a space ("86.5 nmol/L", "25-hydroxyvitamin", "330 metres", "978 Korean"), or "".
func wordAfter(ts []tok, i int) string {
	if i+1 >= len(ts) {
		return ""
	}
	n := ts[i+1]
	if n.num || n.sep == sepBreak || !isContent(n) && n.word != "percent" {
		return ""
	}
	return n.stem
}

// nearWords returns the stems of the content words within k tokens of ts[i], stopping at a
// clause break: a sentence's own surroundings of its number. A number alone in its phrase ("In
// 1804, Napoleon ...", "..., in 1804.") stands with the rest of its sentence, what follows it
// first: with no surroundings at all, any occurrence of its value would do.
func nearWords(ts []tok, i, k int) []string {
	var out []string
	b := i - 1 // the last token looked at before i
	for ; b >= 0 && b >= i-k && ts[b+1].sep != sepBreak; b-- {
		if isContent(ts[b]) {
			out = append(out, ts[b].stem)
		}
	}
	a := i + 1 // the first token not looked at after i
	for ; a < len(ts) && a <= i+k && ts[a].sep != sepBreak; a++ {
		if isContent(ts[a]) {
			out = append(out, ts[a].stem)
		}
	}
	if len(out) > 0 {
		return out
	}
	// The rest of the sentence after the phrase, or before it: the clause it opens may start
	// with an apposition ("In 1804, Bonaparte, the French commander, crowned ...") and name
	// what the number is of late ("In 1889, the Eiffel Tower was completed for the World's
	// Fair").
	if a < len(ts) && a <= i+k && !ts[a].sentStart {
		for m := a; m < len(ts) && (m == a || !ts[m].sentStart); m++ {
			if isContent(ts[m]) {
				out = append(out, ts[m].stem)
			}
		}
	}
	if len(out) == 0 && b >= 0 && b >= i-k && !ts[b+1].sentStart {
		for m := b; m >= 0; m-- {
			if isContent(ts[m]) {
				out = append(out, ts[m].stem)
			}
			if ts[m].sentStart {
				break
			}
		}
	}
	return out
}

// nearContent returns the stems of the k content words on either side of ts[i] within its
// sentence: a passage's surroundings of its number, however many numbers and function words
// stand between ("a population of about 383,000 in 2023").
func nearContent(ts []tok, i, k int) []string {
	var out []string
	for j, n := i-1, 0; j >= 0 && n < k && !ts[j+1].sentStart; j-- {
		if isContent(ts[j]) {
			out, n = append(out, ts[j].stem), n+1
		}
	}
	for j, n := i+1, 0; j < len(ts) && n < k && !ts[j].sentStart; j++ {
		if isContent(ts[j]) {
			out, n = append(out, ts[j].stem), n+1
		}
	}
	return out
}

// nearest returns the content words closest to ts[i] before and after it, within eight tokens,
// as written (folded, not stemmed: "participating" is not "participants"), "" where there is
// none.
func nearest(ts []tok, i int) (before, after string) {
	for j := i - 1; j >= 0 && j >= i-8 && before == ""; j-- {
		if isContent(ts[j]) {
			before = ts[j].word
		}
	}
	for j := i + 1; j < len(ts) && j <= i+8 && after == ""; j++ {
		if isContent(ts[j]) {
			after = ts[j].word
		}
	}
	return before, after
}

func containsWord(ws []string, s string) bool {
	for _, w := range ws {
		if sameWord(w, s) || synonymous(w, s) {
			return true
		}
	}
	return false
}

func sharesWord(a, b []string) bool {
	for _, w := range a {
		if containsWord(b, w) {
			return true
		}
	}
	return false
}

func strconvQuote(s string) string { return `"` + s + `"` }

// upperFirst returns s with its first letter in upper case.
func upperFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

// subjectOf is the subject a sentence of ts names: the run of names it opens with, stop words
// before it skipped ("The Eiffel Tower", "Wellington"). A sentence that opens with a pronoun,
// or with common words ("The first iPhone"), names none.
func subjectOf(ts []tok) []tok {
	// An opening participle's clause ("Born in Corsica, Napoleon ...", "Completed in 1889,
	// the Eiffel Tower ...") is no subject: the subject follows its comma.
	if len(ts) > 1 && participle(ts[0].word) {
		for i := 1; i < len(ts); i++ {
			if ts[i].sep == sepBreak {
				return subjectOf(ts[i:])
			}
		}
		return nil
	}
	var names []tok
	for _, t := range ts {
		if t.num || !isContent(t) {
			if len(names) > 0 || pronounLeads[t.word] {
				break
			}
			continue
		}
		if !(t.capital || t.allCaps) || chatWords[t.word] {
			break
		}
		names = append(names, t)
	}
	return names
}

// participle says whether w reads as a past or present participle that may open a sentence
// ("Born", "Completed", "Having"): by its ending, or one of the common irregular ones.
func participle(w string) bool {
	return strings.HasSuffix(w, "ed") || strings.HasSuffix(w, "ing") || irregularParticiples[w]
}

var irregularParticiples = setOf(`born built known made taken given seen written won led held left
	found begun bought brought caught chosen drawn driven fought grown hidden kept lost meant paid
	put read run set sold sent shown shot spent stood struck taught thought told understood worn`)

// pronounLeads are the pronouns a sentence may open with to stand for the subject of the
// sentence before it.
//
// Only persons' subject pronouns: "It" may stand for the sentence's object or its topic ("...
// on Saint Helena. It is a remote island."), and "His brother" names someone else.
var pronounLeads = setOf(`he she they`)

// pronounCarries returns why c, a fact that opens with a pronoun, may not stand after prev,
// the fact sent before it, or "". Each passes on its own, but together they may say what
// neither passage does: "Wellington was born in Dublin in 1769 [1]. He was Emperor of the
// French [2]." made Wellington the emperor. So a passage supporting c must be one that
// supports prev, or name (in its text or title) one of the names prev opens with, its
// subject. Without them (prev opens with a pronoun or common words) nothing is required.
func (a *attributor) pronounCarries(c, prev checked) string {
	unlisted := func(s string) string { return s[len(listLeadRe.FindString(s)):] }
	toks := tokenize(unlisted(c.text))
	if len(toks) == 0 || !pronounLeads[toks[0].word] {
		return ""
	}
	for _, p := range c.passages {
		if slices.Contains(prev.passages, p) {
			return ""
		}
	}
	names := subjectOf(tokenize(unlisted(prev.text)))
	if len(names) == 0 {
		return ""
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, p := range c.passages {
		if p < 0 || p >= len(a.pool) {
			continue
		}
		e := &a.pool[p]
		for _, n := range names {
			if hasToken(e.toks, n) || hasToken(e.title, n) {
				return ""
			}
		}
	}
	words := make([]string, len(names))
	for i, n := range names {
		words[i] = n.word
	}
	return "its " + strconvQuote(toks[0].word) + " stands for the sentence before it (" + strings.Join(words, " ") + "), which no passage supporting it names"
}
