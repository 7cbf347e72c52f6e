package chat

import (
	"math"
	"regexp"
	"strconv"
	"strings"
)

// numberSet is what numbers a text states: the source a fact bullet, a draft or a revision is
// checked against (bulletSupport, draftSupported, revisionUnsupported).
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
	// smallNumberRe is a small number spelled out. Each is a number a source states; from
	// three on, each is a count a text is checked for ("won three Nobel Prizes"): "two" (and
	// "one") are words of pairing and reference as often as counts ("the two countries",
	// "one of them", "Here are two:" before a list).
	smallNumberRe = regexp.MustCompile(`(?i)\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\b`)
)

// numbersOf returns the numbers source (asciiDigits already applied) states, digits or the
// small number words.
func numbersOf(source string) numberSet {
	ns := numberSet{exact: map[string]bool{}}
	for _, loc := range numberRe.FindAllStringIndex(source, -1) {
		n := strings.ReplaceAll(source[loc[0]:loc[1]], ",", "")
		ns.exact[n] = true
		ns.values = append(ns.values, numberValue(n, source[loc[1]:]))
		if y, err := strconv.Atoi(n); err == nil && len(n) >= 3 && len(n) <= 4 {
			ns.years = append(ns.years, y)
		}
	}
	for _, w := range smallNumberRe.FindAllString(source, -1) {
		d := smallNumberWords[strings.ToLower(w)]
		ns.exact[d] = true
		ns.values = append(ns.values, numberValue(d, ""))
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

// missing returns the first number of text (asciiDigits already applied) that ns does not
// state, "" when ns states them all: as written, by value ("$1.5 million" for "$1,500,000"), as
// its decade ("the 1920s" for 1922) or its century ("the 19th century" for 1859); a count
// spelled out from three to twelve, as its digits or by value ("three million" for
// "3,000,000"). A count word was a content word like any other until "won three Nobel Prizes"
// passed as a one-word rewording of "won two".
func (ns numberSet) missing(text string) string {
	for _, loc := range smallNumberRe.FindAllStringIndex(text, -1) {
		d := smallNumberWords[strings.ToLower(text[loc[0]:loc[1]])]
		if d != "2" && !ns.exact[d] && !ns.hasValue(numberValue(d, text[loc[1]:])) {
			return text[loc[0]:loc[1]]
		}
	}
	for _, loc := range numberRe.FindAllStringIndex(text, -1) {
		n, after := strings.ReplaceAll(text[loc[0]:loc[1]], ",", ""), text[loc[1]:]
		if ns.exact[n] || ns.hasValue(numberValue(n, after)) {
			continue
		}
		f := numberValue(n, "")
		if math.IsNaN(f) {
			return text[loc[0]:loc[1]]
		}
		v := int(f)
		switch {
		case strings.HasPrefix(after, "s") && len(n) == 4 && v%10 == 0 && ns.hasYear(func(y int) bool { return y/10 == v/10 }):
		case centuryRe.MatchString(after) && ns.hasYear(func(y int) bool { return (y-1)/100+1 == v }):
		default:
			return text[loc[0]:loc[1]]
		}
	}
	return ""
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
