package chat

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// sentenceEndRe finds a candidate end of a sentence: a terminator, closing quotes or brackets,
// and the citation markers that follow it ("in 1922. [1]"), before a space. A Chinese or
// Japanese full stop needs no space after it. A period is an end only where fullStop says so.
var sentenceEndRe = regexp.MustCompile(`[.!?]["'”’)\]]*(?:\s*\[\d+(?:\s*,\s*\d+)*\])*\s|[。！？][」』”’）\]]*(?:\[\d+\])*`)

// abbreviations are words a period follows inside a sentence ("St. Louis", "Dr. Smith",
// "vs. 330,000"), lower case.
var abbreviations = setOf(`mr mrs ms dr prof st mt ft jr sr vs etc univ inc ltd co corp gen col lt
	sgt capt rev fr no nos vol vols pp approx ca cf al fig figs dept est jan feb mar apr jun jul aug
	sep sept oct nov dec`)

// sentenceEnds returns the offsets just past each sentence end of s.
func sentenceEnds(s string) []int {
	var out []int
	for _, loc := range sentenceEndRe.FindAllStringIndex(s, -1) {
		if s[loc[0]] == '.' && !fullStop(s, loc[0], loc[1]) {
			continue
		}
		out = append(out, loc[1])
	}
	return out
}

// fullStop reports whether the period at dot, whose candidate end is end, ends a sentence: not
// after an abbreviation or an initial ("J. Smith", "e.g."), not after a list's number at the
// start of a line ("1. Yo-Yo Ma"), and not before a lower-case word.
func fullStop(s string, dot, end int) bool {
	start := dot
	for start > 0 {
		r := rune(s[start-1])
		if r >= 0x80 || !(unicode.IsLetter(r) || unicode.IsDigit(r)) {
			break
		}
		start--
	}
	word := strings.ToLower(s[start:dot])
	switch {
	case abbreviations[word], len(word) == 1 && word[0] >= 'a' && word[0] <= 'z':
		return false
	case word != "" && strings.Trim(word, "0123456789") == "" && strings.TrimLeft(s[strings.LastIndexByte(s[:start], '\n')+1:start], " \t-*•") == "":
		return false
	}
	next, _ := utf8.DecodeRuneInString(strings.TrimLeft(s[end:], " \t\r\n"))
	return !unicode.IsLower(next) // utf8.RuneError at the end of s: an end
}

// sentences cuts s into its sentences, each with the citation markers and the space after
// its end, and lines kept apart: concatenated, they are s.
func sentences(s string) []string {
	var out []string
	for _, line := range strings.SplitAfter(s, "\n") {
		from := 0
		for _, end := range sentenceEnds(line) {
			out = append(out, line[from:end])
			from = end
		}
		if from < len(line) {
			out = append(out, line[from:])
		}
	}
	return out
}
