package chat

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// tok is one word or number of a folded text (foldRunes), with what the attribution check
// needs to know about where it stands.
type tok struct {
	word string // folded; for a number, its digits as written without commas (or its words)
	stem string // stem(word); "" for a number
	num  bool
	// value is a number's value, its scale word applied ("1.5 million"); NaN for a dotted run
	// that is no number ("1.2.3"), which equals nothing.
	value     float64
	decade    bool // written as a decade ("the 1920s")
	century   bool // written as a century ("the 19th century")
	capital   bool // written with an upper-case first letter
	allCaps   bool // written in upper case, two letters or more
	sentStart bool // the first word of its sentence
	// sep is what stands between the token and the one before it: sepNone (nothing: "25OHD",
	// "1920s"), sepSpace, sepJoin (a hyphen or a slash: "25-hydroxyvitamin", "nmol/L") or
	// sepBreak (punctuation that ends a clause, or the start of the text).
	sep byte
}

const (
	sepBreak byte = iota
	sepNone
	sepSpace
	sepJoin
)

// tokenize splits s into words and numbers after folding it. A letter and a digit next to
// each other are two tokens ("25OHD", "H2O"), so a number is found wherever it is written; a
// possessive "'s" is dropped and "n't" is the word "not" ("didn't" is "did not"); "%" and "per
// cent" are the word "percent". Numbers are then read as values: digits with their scale word, spelled-out
// numbers ("eighteen fifty", "twenty-five"), and roman numerals written in capitals
// (numberTokens).
func tokenize(s string) []tok {
	rs := foldRunes(s)
	var out []tok
	sep, sentStart := sepBreak, true
	i := 0
	for i < len(rs) {
		r := rs[i].r
		switch {
		case unicode.IsLetter(r):
			j := i
			for j < len(rs) && (unicode.IsLetter(rs[j].r) || isApostrophe(rs[j].r) && j+1 < len(rs) && unicode.IsLetter(rs[j+1].r)) {
				j++
			}
			out = appendWord(out, rs[i:j], sep, sentStart)
			sep, sentStart, i = sepNone, false, j
		case r >= '0' && r <= '9':
			j := i
			for j < len(rs) && (rs[j].r >= '0' && rs[j].r <= '9' ||
				(rs[j].r == '.' || rs[j].r == ',') && j+1 < len(rs) && rs[j+1].r >= '0' && rs[j+1].r <= '9' && j > i) {
				j++
			}
			var b strings.Builder
			for _, c := range rs[i:j] {
				if c.r != ',' {
					b.WriteRune(c.r)
				}
			}
			out = append(out, tok{word: b.String(), num: true, sep: sep, sentStart: sentStart})
			sep, sentStart, i = sepNone, false, j
		case r == '%':
			out = append(out, tok{word: "percent", stem: "percent", sep: sep, sentStart: sentStart})
			sep, sentStart, i = sepNone, false, i+1
		default:
			switch {
			case strings.ContainsRune(".!?\n|", r):
				sep = sepBreak
				sentStart = sentStart || r != '.' || fullStopAt(rs, i, out)
			case strings.ContainsRune(",:;()[]{}\"“”«»—–…", r):
				sep = sepBreak
			case r == '-' || r == '/' || r == '‐' || r == '‑':
				if sep != sepBreak {
					sep = sepJoin
				}
			case unicode.IsSpace(r):
				if sep == sepNone {
					sep = sepSpace
				}
			default:
				if sep == sepNone {
					sep = sepSpace
				}
			}
			i++
		}
	}
	return numberTokens(out)
}

// fullStopAt reports whether the period rs[i] ends a sentence: a space follows it, the word
// before it is no initial or abbreviation ("S. Typhimurium", "Dr. Smith"; not the "β" of
// "IL-1β."), and the next word
// does not start in lower case.
func fullStopAt(rs []foldedRune, i int, before []tok) bool {
	if i+1 < len(rs) && !unicode.IsSpace(rs[i+1].r) {
		return false
	}
	if n := len(before); n > 0 && !before[n-1].num && (len(before[n-1].word) == 1 && before[n-1].capital && before[n-1].sep != sepNone || abbreviations[before[n-1].word]) {
		return false
	}
	for k := i + 1; k < len(rs); k++ {
		if !unicode.IsSpace(rs[k].r) {
			return !unicode.IsLetter(rs[k].r) || rs[k].upper
		}
	}
	return true
}

func isApostrophe(r rune) bool { return r == '\'' || r == '’' || r == 'ʼ' }

// appendWord appends the word of rs, splitting "n't" off as "not" and dropping "'s".
func appendWord(out []tok, rs []foldedRune, sep byte, sentStart bool) []tok {
	var b strings.Builder
	for _, c := range rs {
		if isApostrophe(c.r) {
			b.WriteByte('\'')
		} else {
			b.WriteRune(c.r)
		}
	}
	w := b.String()
	w = strings.TrimSuffix(w, "'s")
	// "you'd", "we're", "they've", "I'll", "I'm": the auxiliary is a stopword either way.
	for _, aux := range []string{"'d", "'re", "'ve", "'ll", "'m"} {
		if base, ok := strings.CutSuffix(w, aux); ok && base != "" {
			w = base
			break
		}
	}
	allCaps := len(rs) >= 2
	for _, c := range rs {
		if unicode.IsLetter(c.r) && !c.upper {
			allCaps = false
		}
	}
	t := tok{capital: rs[0].upper, allCaps: allCaps, sep: sep, sentStart: sentStart}
	if base, ok := strings.CutSuffix(w, "n't"); ok {
		switch base {
		case "ca":
			base = "can"
		case "wo":
			base = "will"
		case "sha":
			base = "shall"
		}
		t.word, t.stem = base, stem(base)
		out = append(out, t)
		return append(out, tok{word: "not", stem: "not", sep: sepSpace})
	}
	w = strings.Trim(w, "'")
	if w == "" {
		return out
	}
	// "per cent" is the word "percent", as "%" is.
	if n := len(out); w == "cent" && sep == sepSpace && n > 0 && out[n-1].word == "per" {
		out[n-1].word, out[n-1].stem = "percent", "percent"
		return out
	}
	t.word, t.stem = w, stem(w)
	return append(out, t)
}

// Number words, scale words and roman numerals.
var (
	unitWords = map[string]float64{"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
		"seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
		"fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19}
	tensWords = map[string]float64{"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
		"seventy": 70, "eighty": 80, "ninety": 90}
	scaleWords = map[string]float64{"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
	// romanRe is a well-formed roman numeral (no "IIII", "VV" or "IC").
	romanRe = regexp.MustCompile(`^m{0,3}(?:cm|cd|d?c{0,3})(?:xc|xl|l?x{0,3})(?:ix|iv|v?i{0,3})$`)
	// ordinalSuffixes follow the digits of an ordinal ("19th").
	ordinalSuffixes = setOf(`st nd rd th`)
)

// numberTokens reads the numbers of ts as values: digits take the scale word after them ("1.5
// million") and a decade's "s"; a run of number words is one number ("twenty-five",
// "eighteen fifty" and "nineteen twenty-two" as years, "two thousand and five"); a word written
// in capitals that is a roman numeral of two letters or more is one ("MDCCCL"; a lone "I", "C"
// or "D" is a word: "vitamin D"). "One" and "two" alone are numbers only where they count
// (counts): they are words of reference and pairing as often ("one of them", "the two
// countries").
func numberTokens(ts []tok) []tok {
	out := ts[:0:0]
	for i := 0; i < len(ts); i++ {
		t := ts[i]
		switch {
		case t.num:
			t.value = digitsValue(t.word)
			if i+1 < len(ts) && ts[i+1].sep == sepNone && ts[i+1].word == "s" && len(t.word) == 4 {
				t.decade = true
				i++
			} else if i+1 < len(ts) && ts[i+1].sep == sepNone && ordinalSuffixes[ts[i+1].word] {
				i++
				if i+1 < len(ts) && ts[i+1].sep == sepSpace && ts[i+1].word == "century" {
					t.century = true
					i++
				}
			}
			if i+1 < len(ts) && ts[i+1].sep == sepSpace && scaleWords[ts[i+1].word] > 0 {
				t.value *= scaleWords[ts[i+1].word]
				i++
			}
			out = append(out, t)
		case isNumberWord(t.word):
			v, n := spelledNumber(ts[i:])
			if n == 1 && v <= 2 && unitWords[t.word] == v && !counts(ts, i) {
				out = append(out, t)
				continue
			}
			var words []string
			for _, w := range ts[i : i+n] {
				words = append(words, w.word)
			}
			out = append(out, tok{word: strings.Join(words, " "), num: true, value: v, sep: t.sep, sentStart: t.sentStart})
			i += n - 1
		case t.allCaps && len(t.word) >= 2 && romanRe.MatchString(t.word):
			out = append(out, tok{word: t.word, num: true, value: romanValue(t.word), sep: t.sep, sentStart: t.sentStart})
		default:
			out = append(out, t)
		}
	}
	return out
}

// counts says whether "one" or "two" at ts[i] is a count: right before a word that is neither
// a function word nor a number ("two experiments", "one Nobel Prize"), with no determiner
// before it ("the two countries", "each one", "this one").
//
// After a word that makes it a quantity ("only one of the patients", "just two") or before
// "in all" or "in total" ("children, two in all") it is a count whatever follows: read as a
// word, "Only one of the patients died" passed against "Twelve of the 40 patients died".
func counts(ts []tok, i int) bool {
	if i > 0 && ts[i].sep == sepSpace && countQualifiers[ts[i-1].word] &&
		(i < 2 || ts[i-1].sep != sepSpace || !countDeterminers[ts[i-2].word]) { // "the only one" is no count
		return true
	}
	if i+2 < len(ts) && ts[i+1].word == "in" && (ts[i+2].word == "all" || ts[i+2].word == "total") && ts[i+1].sep == sepSpace {
		return true
	}
	if i+1 >= len(ts) || ts[i+1].sep != sepSpace || ts[i+1].num || stopwords[ts[i+1].word] || isNumberWord(ts[i+1].word) {
		return false
	}
	return i == 0 || ts[i].sep != sepSpace || !countDeterminers[ts[i-1].word]
}

// countQualifiers before "one" or "two" make it a quantity.
var countQualifiers = setOf(`only just exactly precisely nearly almost about around roughly
	approximately merely`)

// unitWordValue is the value of "one" or "two" read as a word (counts), else -1.
func unitWordValue(w string) float64 {
	if v, ok := unitWords[w]; ok && v <= 2 {
		return v
	}
	return -1
}

// countDeterminers before "one" or "two" make it a reference or a pairing, not a count.
var countDeterminers = setOf(`the a an this that these those each every any no which whichever
	its his her their our your my another other only same either neither`)

func isNumberWord(w string) bool {
	_, u := unitWords[w]
	return u || tensWords[w] > 0 || w == "hundred" || scaleWords[w] > 0
}

// digitsValue is the value of a run of digits with "." separators; NaN when it is no number.
func digitsValue(s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

// spelledNumber reads the number spelled out at the start of ts (words joined by spaces or
// hyphens, "and" between them) and returns its value and how many tokens it took. A group of
// tens or teens followed by another is a year ("eighteen fifty" is 1850, "nineteen twenty-two"
// 1922, "twenty nineteen" 2019), as years are said; two units in a row are two numbers.
func spelledNumber(ts []tok) (float64, int) {
	total, cur := 0.0, 0.0
	n := 0
	for ; n < len(ts); n++ {
		t := ts[n]
		if n > 0 && t.sep != sepSpace && t.sep != sepJoin {
			break
		}
		w, c := t.word, int(cur)
		if w == "and" && n > 0 && n+1 < len(ts) && isNumberWord(ts[n+1].word) {
			continue
		}
		if v, ok := unitWords[w]; ok {
			switch {
			case c%100 == 0, c%100 >= 20 && c%10 == 0 && v < 10:
				cur += v
			case c%100 >= 10 && c < 100 && v >= 10:
				cur = cur*100 + v
			default:
				return total + cur, max(n, 1)
			}
			continue
		}
		if v := tensWords[w]; v > 0 {
			switch {
			case c%100 == 0:
				cur += v
			case c >= 10 && c < 100:
				cur = cur*100 + v
			default:
				return total + cur, max(n, 1)
			}
			continue
		}
		switch {
		case w == "hundred":
			cur = max(cur, 1) * 100
		case scaleWords[w] > 0:
			total += max(cur, 1) * scaleWords[w]
			cur = 0
		default:
			return total + cur, max(n, 1)
		}
	}
	return total + cur, max(n, 1)
}

// romanValue is the value of a well-formed roman numeral in lower case.
func romanValue(s string) float64 {
	vals := map[byte]int{'i': 1, 'v': 5, 'x': 10, 'l': 50, 'c': 100, 'd': 500, 'm': 1000}
	total := 0
	for i := 0; i < len(s); i++ {
		v := vals[s[i]]
		if i+1 < len(s) && vals[s[i+1]] > v {
			total -= v
		} else {
			total += v
		}
	}
	return float64(total)
}
