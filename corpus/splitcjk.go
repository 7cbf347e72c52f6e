package corpus

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Chinese and Japanese are written without spaces, so to strings.Fields a paragraph is one
// word, and a budget counted in words put whole articles into one passage. The splitter
// weighs such text instead: cjkRunesPerWord Han or kana characters count as one word, about
// the number of English words a Chinese text of that length translates to, so that a
// passage of 120 words holds about 240 characters. Korean, written with spaces, is counted
// as other languages are.
const cjkRunesPerWord = 2

// cjkSentenceEnds end a sentence (or, ；, a clause) of Chinese or Japanese text; cjkClosers
// may follow one (。」). The fullwidth full stop ．is left out: between digits it is a
// decimal point (３．１４), and prose ends its sentences with 。.
const (
	cjkSentenceEnds = "。！？；"
	cjkClosers      = "」』）】〉》〕" // with closers, the ASCII and Western ones
)

// cjkFrom is the first rune of the CJK radicals: below it no rune is Han or kana, a CJK
// sentence end or closer.
const cjkFrom = 0x2E80

// isCJK reports a Han or kana character; the prolonged sound mark (ー) is kana in all but
// its Unicode script (Common).
func isCJK(r rune) bool {
	if r < cjkFrom { // below the CJK radicals: Latin, Greek, Cyrillic, Arabic, ... at once
		return false
	}
	return r == 'ー' || unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana)
}

// WordWeight is what the word w (a field of strings.Fields) counts toward a passage's
// SplitOptions.MaxWords: 1, or for a word with Han or kana characters, one per two of them
// (rounded up). Generators of passages that must stay whole (synthcorpus) count with it.
func WordWeight(w string) int {
	if isASCII(w) {
		return 1
	}
	n := 0
	for _, r := range w {
		if isCJK(r) {
			n++
		}
	}
	return max(1, (n+cjkRunesPerWord-1)/cjkRunesPerWord)
}

func isASCII(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func wordsWeight(ws []string) int {
	n := 0
	for _, w := range ws {
		n += WordWeight(w)
	}
	return n
}

// cutCJK cuts each word of Chinese or Japanese text into pieces: after each sentence end
// (and the closers that follow it), and within a sentence where a piece would weigh more
// than budget. glued[i] says that words[i] continues the word before it, so that joining
// the pieces again writes no space between them; glued is nil when nothing was cut, the
// case of every text with spaces.
func cutCJK(words []string, budget int) (out []string, glued []bool) {
	for i, w := range words {
		if isASCII(w) || WordWeight(w) <= 1 && !strings.ContainsAny(w, cjkSentenceEnds) {
			if glued != nil {
				out, glued = append(out, w), append(glued, false)
			}
			continue
		}
		pieces := cjkPieces(w, budget)
		if len(pieces) == 1 {
			if glued != nil {
				out, glued = append(out, w), append(glued, false)
			}
			continue
		}
		if glued == nil {
			out = append(make([]string, 0, len(words)+len(pieces)), words[:i]...)
			glued = make([]bool, i, cap(out))
		}
		for j, p := range pieces {
			out, glued = append(out, p), append(glued, j > 0)
		}
	}
	if glued == nil {
		return words, nil
	}
	return out, glued
}

// cjkPieces cuts w after each CJK sentence end followed by more text, and before a Han or
// kana character that would take a piece over budget.
func cjkPieces(w string, budget int) []string {
	var out []string
	start, cjk := 0, 0
	for i := 0; i < len(w); {
		r, size := utf8.DecodeRuneInString(w[i:])
		if isCJK(r) {
			if cjk == budget*cjkRunesPerWord && i > start {
				out = append(out, w[start:i])
				start, cjk = i, 0
			}
			cjk++
		}
		i += size
		if strings.ContainsRune(cjkSentenceEnds, r) {
			for i < len(w) {
				c, n := utf8.DecodeRuneInString(w[i:])
				if !strings.ContainsRune(closers+cjkClosers, c) && !strings.ContainsRune(cjkSentenceEnds, c) {
					break
				}
				i += n
			}
			if i < len(w) {
				out = append(out, w[start:i])
				start, cjk = i, 0
			}
		}
	}
	return append(out, w[start:])
}
