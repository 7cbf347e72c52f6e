package timex

import "strings"

// Years a passage may plausibly mention. Four-digit numbers outside these bounds are not years
// ("3017 N Street", "4000 metres"); three-digit years are taken only with a cue (see Extract).
const (
	PlausibleMin = 1000
	PlausibleMax = 2100
)

// Extract returns the years and year ranges text mentions, in order of appearance, with the
// byte offset of each. It recognises
//
//	single years          "in 1994", "March 2019", "1 March 1943"
//	ranges                "1990 to 1998", "1990-98", "2006–07", "1959–1962", "2005/06",
//	                      "from 1994 until 2001", "between 1975 and 1982",
//	                      "September 8, 2005 – December 22, 2006"
//	decades               "the 1990s" (1990..1999); "the 1800s" is read as a century (1800..1899)
//	early years           "880 AD", "AD 880", "c. 880", "from 880 to 887", "in 880." (three
//	                      digits need such a cue, so "scored 300 goals" is not a year)
//
// and rejects numbers that only look like years: digit groups ("1,500", "2,000"), decimals
// ("1999.5"), amounts ("$1999", "1999 %"), counts followed by a unit or a countable noun
// ("2000 people", "1500 km"), numbered things ("No. 1999", "Route 1600"), codes ("978-1-4000")
// and BC years. "since 2010" gives the year 2010: a Mention is a closed range and an open
// one would have to be closed with a "now" that indexing does not know.
//
// Extract allocates only the result and runs in time linear in len(text): it is called for
// every passage at index time.
func Extract(text string) []Mention {
	var out []Mention
	for i := 0; i < len(text); {
		if !isDigit(text[i]) {
			i++
			continue
		}
		j := i
		for j < len(text) && isDigit(text[j]) {
			j++
		}
		if m, end, ok := mentionAt(text, i, j); ok {
			out = append(out, m)
			i = end
			continue
		}
		i = j
	}
	return out
}

// mentionAt tries to read a mention starting with the digit run text[i:j]. It returns the
// mention and the offset just after it.
func mentionAt(text string, i, j int) (Mention, int, bool) {
	n := j - i
	if n != 3 && n != 4 {
		return Mention{}, 0, false
	}
	y := atoi(text[i:j])
	if !standalone(text, i, j) {
		return Mention{}, 0, false
	}
	if n == 4 && (y < PlausibleMin || y > PlausibleMax) {
		return Mention{}, 0, false
	}
	if n == 3 && (y < 100 || !earlyYearCue(text, i, j)) {
		return Mention{}, 0, false
	}
	if isEraBC(text, j) {
		return Mention{}, 0, false
	}
	// Decades: "1990s", "1990's".
	if n == 4 && y%10 == 0 {
		k := j
		if k < len(text) && text[k] == '\'' {
			k++
		}
		if k < len(text) && text[k] == 's' && (k+1 == len(text) || !isWordByte(text[k+1])) {
			to := y + 9
			if y%100 == 0 && y < 1900 {
				to = y + 99
			}
			return Mention{From: y, To: to, Pos: i}, k + 1, true
		}
	}
	if j < len(text) && isLetter(text[j]) {
		return Mention{}, 0, false // "1990x", "1999th"
	}
	if to, end, ok := rangeEnd(text, i, j, y); ok {
		return Mention{From: y, To: to, Pos: i}, end, true
	}
	if followedByUnit(text, j) {
		return Mention{}, 0, false
	}
	return Mention{From: y, To: y, Pos: i}, j, true
}

// standalone rejects digit runs that are part of a larger number, an amount or a code.
func standalone(text string, i, j int) bool {
	return cleanBefore(text, i) && cleanAfter(text, j)
}

func cleanBefore(text string, i int) bool {
	if i > 0 {
		p := text[i-1]
		switch {
		case isLetter(p) || p == '$' || p == '#' || p == '_':
			return false
		case (p == ',' || p == '.' || p == '-' || p == '/' || p == ':') && i > 1 && isDigit(text[i-2]):
			return false // "1,500", "3.1415", "978-1-4000", "10/2019"? (dates in slashes are rare in prose)
		}
		if i >= 2 && (text[i-2:i] == "£" || text[i-2:i] == "¥") {
			return false
		}
		if i >= 3 && text[i-3:i] == "€" {
			return false
		}
		if w := wordBefore(text, i); w != "" && inFold(w, numberedThings) {
			return false
		}
	}
	return true
}

func cleanAfter(text string, j int) bool {
	if j < len(text) {
		switch c := text[j]; {
		case c == '%':
			return false
		case (c == ',' || c == '.') && j+1 < len(text) && isDigit(text[j+1]):
			// "2,000" or "1999.5"; but "in 1999,2000" is too rare to care about.
			return false
		}
		if j+1 < len(text) && text[j] == ' ' && text[j+1] == '%' {
			return false
		}
	}
	return true
}

// rangeEnd reads the second year of a range after the year text[i:j] (value y): a dash or slash
// with a two- or four-digit year, or a connecting word ("to", "until", "and" after "between")
// with a four-digit year, optionally preceded by a day and month.
func rangeEnd(text string, i, j, y int) (int, int, bool) {
	k := skipSpaces(text, j)
	dash := false
	var sep byte // the ASCII '-' or '/' after the year, which numeric dates use too
	switch {
	case strings.HasPrefix(text[k:], "-") || strings.HasPrefix(text[k:], "/"):
		sep = text[k]
		k++
		dash = true
	case strings.HasPrefix(text[k:], "–") || strings.HasPrefix(text[k:], "—"):
		k += len("–")
		dash = true
	default:
		w, end := wordAt(text, k)
		if w == "" {
			return 0, 0, false
		}
		switch {
		case inFold(w, rangeWords):
		case strings.EqualFold(w, "and") && betweenBefore(text, i):
		default:
			return 0, 0, false
		}
		k = end
	}
	k = skipSpaces(text, k)
	// A short year right after a dash: "1990-98", "2006–07".
	if dash {
		e := k
		for e < len(text) && isDigit(text[e]) {
			e++
		}
		if e-k == 2 && (e == len(text) || !isWordByte(text[e])) {
			if sep != 0 && k == j+1 && dateGoesOn(text, k, e, sep) {
				return 0, 0, false // "2001-09-11" is a day of 2001, not 2001 to 2009
			}
			to := y - y%100 + atoi(text[k:e])
			if to < y {
				to += 100
			}
			if to > y && to-y < 100 && to <= PlausibleMax && (e == len(text) || text[e] != ',' || e+1 == len(text) || !isDigit(text[e+1])) {
				return to, e, true
			}
			return 0, 0, false
		}
	}
	// Skip a day and a month name: "– December 22, 2006", "to 1 March 1943".
	for t := 0; t < 4; t++ {
		k = skipSpaces(text, k)
		if k < len(text) && text[k] == ',' {
			k++
			continue
		}
		if w, end := wordAt(text, k); w != "" && isMonth(w) {
			k = end
			if k < len(text) && text[k] == '.' {
				k++
			}
			continue
		}
		e := k
		for e < len(text) && isDigit(text[e]) {
			e++
		}
		if e-k >= 1 && e-k <= 2 {
			k = e
			continue
		}
		break
	}
	e := k
	for e < len(text) && isDigit(text[e]) {
		e++
	}
	// Three-digit ends only after a three-digit start: "from 880 to 887".
	if (e-k != 4 && (e-k != 3 || j-i != 3)) || !cleanAfter(text, e) || (e < len(text) && isLetter(text[e])) {
		return 0, 0, false
	}
	to := atoi(text[k:e])
	if to < y || to > PlausibleMax || to-y > 500 || isEraBC(text, e) {
		return 0, 0, false
	}
	return to, e, true
}

// dateGoesOn reports whether the two digits text[k:e], right after a year and the separator
// sep, are the month of a numeric date: a month number followed by the same separator and a
// day ("2001-09-11", "2001/09/11"). Without the day, "2001-09" stays the range it reads as in
// prose ("the 2001-09 seasons").
func dateGoesOn(text string, k, e int, sep byte) bool {
	if month := atoi(text[k:e]); month < 1 || month > 12 {
		return false
	}
	if e >= len(text) || text[e] != sep {
		return false
	}
	d := e + 1
	for d < len(text) && isDigit(text[d]) {
		d++
	}
	if n := d - (e + 1); n < 1 || n > 2 {
		return false
	}
	day := atoi(text[e+1 : d])
	return day >= 1 && day <= 31 && (d == len(text) || !isWordByte(text[d]))
}

// betweenBefore reports whether "between" is one of the three words before offset i
// ("between 1975 and", "between the years 1975 and", "between May 1975 and").
func betweenBefore(text string, i int) bool {
	for n := 0; n < 3; n++ {
		w := wordBefore(text, i)
		if w == "" {
			return false
		}
		if strings.EqualFold(w, "between") {
			return true
		}
		i = strings.LastIndex(text[:i], w)
	}
	return false
}

// earlyYearCue reports whether the three-digit number text[i:j] is marked as a year: an era
// ("880 AD", "AD 880"), "c. 880", or "in/from/since/until 880" followed by punctuation, the end,
// or a range word.
func earlyYearCue(text string, i, j int) bool {
	after, _ := wordAt(text, skipSpaces(text, j))
	if strings.EqualFold(after, "AD") || strings.EqualFold(after, "CE") {
		return true
	}
	before := wordBefore(text, i)
	if strings.EqualFold(before, "AD") || strings.EqualFold(before, "c.") || strings.EqualFold(before, "circa") {
		return true
	}
	if !inFold(before, earlyCueWords) {
		return false
	}
	k := skipSpaces(text, j)
	if k == len(text) || strings.IndexByte(",.;:)?!", text[k]) >= 0 {
		return true
	}
	if strings.HasPrefix(text[k:], "-") || strings.HasPrefix(text[k:], "–") {
		return true
	}
	return inFold(after, rangeWords) || strings.EqualFold(after, "and")
}

func isEraBC(text string, j int) bool {
	w, _ := wordAt(text, skipSpaces(text, j))
	return strings.EqualFold(w, "BC") || strings.EqualFold(w, "BCE") || strings.EqualFold(w, "B.C.")
}

// followedByUnit reports whether the number ending at j is followed by a unit or a countable
// noun, which makes it a quantity: "2000 people", "1500 km".
func followedByUnit(text string, j int) bool {
	k := skipSpaces(text, j)
	if k == j && k < len(text) && text[k] != ' ' {
		return false
	}
	w, _ := wordAt(text, k)
	return w != "" && inFold(w, units)
}

var (
	rangeWords     = []string{"to", "until", "till", "through", "thru"}
	earlyCueWords  = []string{"in", "from", "since", "until", "till", "to", "year"}
	numberedThings = []string{"no", "no.", "nos", "number", "route", "highway", "interstate", "page", "pages", "p.", "pp", "pp.", "isbn", "issn", "flight", "room", "rs", "rs.", "usd", "us$", "eur", "gbp", "inr", "rupees", "model", "type", "class", "hp", "sr"}
	units          = []string{
		"people", "persons", "men", "women", "children", "soldiers", "troops", "students", "employees",
		"workers", "members", "inhabitants", "residents", "households", "families", "votes", "seats",
		"copies", "units", "vehicles", "cars", "ships", "aircraft", "pages", "words", "goals", "yards", "km", "kilometres", "kilometers", "m", "metres",
		"meters", "mi", "miles", "ft", "feet", "cm", "mm", "kg", "kilograms", "tons", "tonnes", "lb",
		"lbs", "acres", "hectares", "ha", "sq", "square", "cc", "hp", "kw", "mw", "rpm", "dollars",
		"euros", "pounds", "rupees", "yen", "horses", "cattle", "sheep", "species", "hours", "minutes",
		"seconds", "days", "miles", "mph", "km/h", "volts", "watts", "°c", "°f",
	}
	months = []string{
		"january", "february", "march", "april", "may", "june", "july", "august", "september",
		"october", "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep",
		"sept", "oct", "nov", "dec",
	}
)

func isMonth(w string) bool { return inFold(w, months) }

func inFold(w string, list []string) bool {
	for _, s := range list {
		if len(s) == len(w) && strings.EqualFold(s, w) {
			return true
		}
	}
	return false
}

// wordAt returns the word (letters, digits after the first letter, '.', '$', '°', '/') starting
// at k and the offset after it; "" if text[k] does not start a word.
func wordAt(text string, k int) (string, int) {
	e := k
	for e < len(text) && (isLetter(text[e]) || text[e] == '.' || text[e] == '$' || (e > k && (text[e] == '/' || isDigit(text[e])))) {
		e++
	}
	if e == k && strings.HasPrefix(text[k:], "°") {
		e = k + len("°")
		for e < len(text) && isLetter(text[e]) {
			e++
		}
	}
	return text[k:e], e
}

// wordBefore returns the word that ends just before offset i (skipping spaces), or "".
func wordBefore(text string, i int) string {
	e := i
	for e > 0 && text[e-1] == ' ' {
		e--
	}
	s := e
	for s > 0 && (isLetter(text[s-1]) || text[s-1] == '.' || text[s-1] == '$') {
		s--
	}
	return text[s:e]
}

func skipSpaces(text string, k int) int {
	for k < len(text) && (text[k] == ' ' || text[k] == '\t' || text[k] == '\n') {
		k++
	}
	// A no-break space is common in Wikipedia dates ("1 March\u00a01943").
	if strings.HasPrefix(text[k:], "\u00a0") {
		return skipSpaces(text, k+len("\u00a0"))
	}
	return k
}

func isDigit(c byte) bool    { return c >= '0' && c <= '9' }
func isLetter(c byte) bool   { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isWordByte(c byte) bool { return isLetter(c) || isDigit(c) || c == '_' }

func atoi(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}
