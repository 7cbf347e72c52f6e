package chat

import (
	"math"
	"regexp"
	"strconv"
	"strings"
)

// draftSupported returns the sentences of a draft that add no fact of the LLM's own to the
// verified facts it was written from, and the sentences it dropped. The draft is the LLM's
// own writing: "identified in 1922 by Elmer McCollum [1]. Napoleon Bonaparte discovered it in
// 1850." states a fact no stage verified, and the refinement, checked against the draft,
// would keep it. A sentence is dropped for
//   - a number the facts do not hold, in any of their forms (draftNumbers): a number the user
//     gave is no exception, it is what "Yes, it was 1850" assents to;
//   - a name none of whose words the facts, their passages' titles or the conversation's
//     earlier turns (context) hold, when it
//     has two words or more ("Napoleon Bonaparte"); a lone capitalised word is left alone
//     ("Astronauts fixed it", "in the US");
//   - a name only the user's turn holds, in a sentence that denies nothing: the user's name
//     may be named to be denied ("No, Napoleon did not ...").
//
// Rewording, which the prompt asks for, is not checked.
func draftSupported(draft string, facts, context []string, userMsg string) (string, []string) {
	source := asciiDigits(markerRe.ReplaceAllString(strings.Join(facts, "\n"), ""))
	nums := draftNumbers(source)
	named := tokens(source + "\n" + strings.Join(context, "\n"))
	user := tokens(asciiDigits(userMsg))
	var kept strings.Builder
	var dropped []string
	for _, sent := range sentences(draft) {
		text := asciiDigits(markerRe.ReplaceAllString(sent, ""))
		ok := nums.hold(listNumberRe.ReplaceAllString(text, ""))
		for _, name := range missingNames(text, source) {
			run := tokens(name)
			switch {
			case !ok:
			case shareWord(run, named):
			case shareWord(run, user):
				ok = bulletNegationRe.MatchString(text)
			default:
				ok = len(run) < 2
			}
		}
		if ok {
			kept.WriteString(sent)
		} else {
			dropped = append(dropped, strings.TrimSpace(sent))
		}
	}
	return strings.TrimSpace(kept.String()), dropped
}

// listNumberRe is a list item's number at the start of a line ("1. ", "2) ").
var listNumberRe = regexp.MustCompile(`(?m)^[ \t]*(?:[-*•][ \t]*)?[0-9]{1,2}[.)][ \t]`)

// shareWord reports whether a word of run, stop words aside, is among ts.
func shareWord(run, ts []token) bool {
	for _, r := range run {
		if stopwords[r.word] || revisionChatWords[r.word] {
			continue
		}
		for _, t := range ts {
			if t.word == r.word || strings.TrimSuffix(t.word, "s") == strings.TrimSuffix(r.word, "s") {
				return true
			}
		}
	}
	return false
}

// numberSet is what numbers a text states, for draftSupported.
type numberSet struct {
	exact  map[string]bool // as written, commas removed
	values []float64       // with their scale ("1.5 million" is 1500000)
	years  []int           // three- and four-digit whole numbers
}

var (
	scaledRe         = regexp.MustCompile(`(?i)^\s*(thousand|million|billion|trillion)\b`)
	scales           = map[string]float64{"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
	smallNumberWords = map[string]string{"two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
		"seven": "7", "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12"}
	centuryRe = regexp.MustCompile(`(?i)^(?:st|nd|rd|th)\s+century\b`)
)

// draftNumbers returns the numbers source states, digits or the small number words.
func draftNumbers(source string) numberSet {
	ns := numberSet{exact: map[string]bool{}}
	for _, loc := range numberRe.FindAllStringIndex(source, -1) {
		n := strings.ReplaceAll(source[loc[0]:loc[1]], ",", "")
		ns.exact[n] = true
		ns.values = append(ns.values, numberValue(n, source[loc[1]:]))
		if len(n) >= 3 && len(n) <= 4 && strings.Trim(n, "0123456789") == "" {
			y := 0
			for _, c := range n {
				y = y*10 + int(c-'0')
			}
			ns.years = append(ns.years, y)
		}
	}
	for _, w := range Words(source) {
		if d, ok := smallNumberWords[w]; ok {
			ns.exact[d] = true
			ns.values = append(ns.values, numberValue(d, ""))
		}
	}
	return ns
}

// numberValue is n (digits, commas removed) times the scale word that follows it, if any; NaN,
// which equals nothing, for a dotted run that is no number ("1.2.3").
func numberValue(n, after string) float64 {
	v, err := strconv.ParseFloat(n, 64)
	if err != nil {
		return math.NaN()
	}
	if m := scaledRe.FindStringSubmatch(after); m != nil {
		v *= scales[strings.ToLower(m[1])]
	}
	return v
}

// hold reports whether every number of text is one ns states: as written, by value ("$1.5
// million" for "$1,500,000"), as its decade ("the 1920s" for 1922) or its century ("the 19th
// century" for 1859).
func (ns numberSet) hold(text string) bool {
	for _, loc := range numberRe.FindAllStringIndex(text, -1) {
		n, after := strings.ReplaceAll(text[loc[0]:loc[1]], ",", ""), text[loc[1]:]
		if ns.exact[n] || ns.hasValue(numberValue(n, after)) {
			continue
		}
		f := numberValue(n, "")
		if math.IsNaN(f) {
			return false
		}
		v := int(f)
		switch {
		case strings.HasPrefix(after, "s") && len(n) == 4 && v%10 == 0 && ns.hasYear(func(y int) bool { return y/10 == v/10 }):
		case centuryRe.MatchString(after) && ns.hasYear(func(y int) bool { return (y-1)/100+1 == v }):
		default:
			return false
		}
	}
	return true
}

func (ns numberSet) hasValue(v float64) bool {
	for _, x := range ns.values {
		if x == v || (x != 0 && v/x > 0.9999 && v/x < 1.0001) {
			return true
		}
	}
	return false
}

func (ns numberSet) hasYear(f func(int) bool) bool {
	for _, y := range ns.years {
		if f(y) {
			return true
		}
	}
	return false
}
