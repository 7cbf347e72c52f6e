package corpus

import (
	"github.com/kairos-rag/kairos/corpus/timex"

	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// SplitOptions configures a Splitter.
type SplitOptions struct {
	// MaxWords bounds len(strings.Fields(Passage.Text)), title prefix included (its "|" and
	// ">" count as words). Default 120; at least 16, so that a prefix never crowds out text.
	// Text written without spaces (Chinese, Japanese) is weighed instead (WordWeight): two
	// Han or kana characters count as a word.
	MaxWords int
}

// DefaultMaxWords is the passage size of DPR-style retrieval corpora, which WikiChat uses.
const DefaultMaxWords = 120

const minMaxWords = 16

// SetDefaults sets the zero fields to their defaults (MaxWords: DefaultMaxWords).
func (o *SplitOptions) SetDefaults() {
	if o.MaxWords == 0 {
		o.MaxWords = DefaultMaxWords
	}
}

// Validate reports a MaxWords too small to hold a prefix and some text.
func (o SplitOptions) Validate() error {
	o.SetDefaults()
	if o.MaxWords < minMaxWords {
		return fmt.Errorf("MaxWords %d is below the minimum of %d", o.MaxWords, minMaxWords)
	}
	return nil
}

// Splitter cuts documents into title-prefixed passages. It holds no state between calls and
// is safe for concurrent use.
//
// Each section is split on its own, so a passage never mixes sections. Text is packed
// greedily by whole sentences; a paragraph that would not fit in the current passage starts
// a new one when the current passage is already a third full, so passages follow paragraphs
// where they can. A sentence longer than the budget is cut at word boundaries. When a
// section's last passage would hold less than a quarter of the budget, its sentences and
// those of the passage before are redistributed to even out the two. Whitespace inside
// passages is normalised to single spaces: the words, in order, are exactly the section's,
// except that a word of Chinese or Japanese text (a paragraph, to strings.Fields) may be cut
// where two passages meet (cutCJK).
type Splitter struct {
	maxWords int
}

// NewSplitter validates opts and returns a Splitter.
func NewSplitter(opts SplitOptions) (*Splitter, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts.SetDefaults()
	return &Splitter{maxWords: opts.MaxWords}, nil
}

// Split returns the passages of doc in reading order; Passage.ID is "<doc.ID>#<ordinal>".
// Text is prefix + body: "Title | body" for the lead section (Name ""), "Title > Section |
// body" otherwise, or without the title part when the document has no title. A prefix longer
// than half of MaxWords is shortened, the section name first, then the title: the kept words
// end in "…". Sections without words yield no passage.
func (s *Splitter) Split(doc Document) []Passage {
	var out []Passage
	title := strings.Fields(doc.Title)
	anchors := sectionAnchors{paths: map[string]string{}, count: map[string]int{}}
	for _, sec := range doc.Sections {
		secURL := anchors.url(doc.URL, sec.Name)
		prefix := s.prefix(title, strings.Fields(sec.Name))
		// prefix holds at most half of maxWords words; a CJK title may weigh more than it
		// counts, and is charged up to that half.
		budget := s.maxWords - min(wordsWeight(prefix), s.maxWords/2)
		prefixText := strings.Join(prefix, " ")
		if prefixText != "" {
			prefixText += " "
		}
		var one [1]string // the usual single passage, without an allocation
		texts := one[:0]
		if text, words, ok := wholeSection(prefixText, sec.Text, budget); ok {
			if words > 0 {
				texts = append(texts, text)
			}
		} else {
			for _, chunk := range packSection(sec.Text, budget) {
				texts = append(texts, joinUnits(prefixText, chunk))
			}
		}
		for _, text := range texts {
			n := len(out)
			out = append(out, Passage{
				ID:      doc.ID + "#" + strconv.Itoa(n),
				DocID:   doc.ID,
				Title:   doc.Title,
				Section: sec.Name,
				Text:    text,
				URL:     secURL,
				Date:    doc.Date,
				Source:  doc.Source,
				Ordinal: n,
				// Prose stays "" (Passage.Block reads it as text), so that passages of
				// inputs without tables are what they were before passages had a type.
				BlockType: sec.Block,
				// Years are extracted here, once, so rerankers never parse text.
				Years: timex.Extract(text),
			})
		}
	}
	return out
}

// sectionAnchors are the anchors given to a document's sections so far: a heading repeated
// in a page (two subsections named "Reception") is anchored "Reception_2" the second time, as
// Wikipedia does. A section path seen before (a table cut out of its section's prose) is the
// same heading and keeps its anchor. The zero value counts nothing.
type sectionAnchors struct {
	paths map[string]string // section path -> its anchor
	count map[string]int    // anchor -> headings given it
}

// url links a passage to its section, as Wikipedia's anchors and WikiChat's block URLs do
// (".../LLaMA#Llama_3"): the section's own heading (the last of its heading path, "History >
// Early life": Wikipedia anchors a subsection by its heading alone) with its runs of white
// space as one underscore, escaped as a URL fragment. The lead section, a document without a
// URL and a URL that already names a fragment keep the document's URL.
func (a sectionAnchors) url(docURL, section string) string {
	name := section
	if i := strings.LastIndex(name, " > "); i >= 0 {
		name = name[i+len(" > "):]
	}
	anchor := strings.Join(strings.Fields(name), "_")
	if docURL == "" || anchor == "" || strings.Contains(docURL, "#") {
		return docURL
	}
	if a.paths != nil {
		if got, ok := a.paths[section]; ok {
			anchor = got
		} else {
			a.count[anchor]++
			if n := a.count[anchor]; n > 1 {
				anchor += "_" + strconv.Itoa(n)
			}
			a.paths[section] = anchor
		}
	}
	return docURL + "#" + (&url.URL{Fragment: anchor}).EscapedFragment()
}

// prefix returns the prefix words for a section, at most half of maxWords.
func (s *Splitter) prefix(title, section []string) []string {
	half := s.maxWords / 2
	if len(title) == 0 {
		if len(section) == 0 {
			return nil
		}
		if len(section)+1 > half {
			section = shorten(section, half-1)
		}
		return append(append([]string(nil), section...), "|")
	}
	if len(section) == 0 {
		if len(title)+1 > half {
			title = shorten(title, half-1)
		}
		return append(append([]string(nil), title...), "|")
	}
	if len(title)+len(section)+2 > half {
		section = shorten(section, max(1, half-len(title)-2))
	}
	if len(title)+len(section)+2 > half {
		title = shorten(title, half-len(section)-2)
	}
	p := make([]string, 0, len(title)+len(section)+2)
	p = append(p, title...)
	p = append(p, ">")
	p = append(p, section...)
	return append(p, "|")
}

// shorten keeps the first n words and marks the cut with "…" on the last kept word.
func shorten(words []string, n int) []string {
	if n >= len(words) {
		return words
	}
	out := append([]string(nil), words[:n]...)
	out[n-1] += "…"
	return out
}

// unit is a run of words that stays together: a sentence, or a budget-sized piece of a
// longer one.
type unit struct {
	words     []string
	glued     []bool // glued[i]: words[i] continues words[i-1] (or the unit before) with no space; nil: none
	size      int    // the words' weight (WordWeight), what a passage's budget counts
	paraStart bool   // first unit of a paragraph
	paraWords int    // weight from this unit to the end of its paragraph (set on paraStart)
}

// joinUnits returns prefix followed by the units' words separated by single spaces.
func joinUnits(prefix string, units []unit) string {
	n := len(prefix)
	for _, u := range units {
		for _, w := range u.words {
			n += len(w) + 1
		}
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(prefix)
	first := true
	for _, u := range units {
		for i, w := range u.words {
			if !first && (u.glued == nil || !u.glued[i]) {
				b.WriteByte(' ')
			}
			first = false
			b.WriteString(w)
		}
	}
	return b.String()
}

// wholeSection returns what packSection and joinUnits make of a section whose words fit in
// its budget and weigh one each: prefix and the words of text separated by single spaces,
// one passage (none when words is 0). A collection already cut into passages is mostly such
// sections, and this makes them without the words' slice, the sentences and the units (the
// splitting fell from 17% to 9% of the CPU of building a BM25 index of a million such
// passages). ok is false when text needs the full splitting: more words than budget, or a
// rune from the CJK blocks on (a Han or kana word may weigh more than one and be cut, a CJK
// full stop glues).
func wholeSection(prefix, text string, budget int) (passage string, words int, ok bool) {
	// One pass: each word is found and copied whole. The buffer is sized for a text within
	// the budget, so that a long section refused at its budget's end allocates little.
	var b strings.Builder
	b.Grow(len(prefix) + min(len(text), 16*budget))
	b.WriteString(prefix)
	for i := 0; i < len(text); {
		if n, space, cjk := runeClass(text, i); cjk {
			return "", 0, false
		} else if space {
			i += n
			continue
		}
		if words++; words > budget {
			return "", 0, false
		}
		if words > 1 {
			b.WriteByte(' ')
		}
		j := i
		for j < len(text) {
			if c := text[j]; c < utf8.RuneSelf && !asciiSpace(c) {
				j++ // most bytes: an ASCII character of the word
				continue
			}
			n, space, cjk := runeClass(text, j)
			if cjk {
				return "", 0, false
			}
			if space {
				break
			}
			j += n
		}
		b.WriteString(text[i:j])
		i = j
	}
	if words == 0 {
		return "", 0, true
	}
	return b.String(), words, true
}

// asciiSpace reports the ASCII white space of unicode.IsSpace (and strings.Fields): the
// space and \t \n \v \f \r, which are consecutive.
func asciiSpace(c byte) bool { return c == ' ' || c-'\t' <= '\r'-'\t' }

// runeClass reads the rune at text[i]: its length, whether it is white space and whether
// it lies in the CJK blocks or beyond (cjkFrom; an invalid byte reads as U+FFFD).
func runeClass(text string, i int) (n int, space, cjk bool) {
	if c := text[i]; c < utf8.RuneSelf {
		return 1, asciiSpace(c), false
	}
	r, n := utf8.DecodeRuneInString(text[i:])
	return n, unicode.IsSpace(r), r >= cjkFrom
}

// packSection groups a section's units into passages of at most budget words each.
func packSection(text string, budget int) [][]unit {
	units := sectionUnits(text, budget)
	if len(units) == 0 {
		return nil
	}
	var chunks [][]unit
	var cur []unit
	curLen := 0
	for _, u := range units {
		if curLen > 0 {
			full := curLen+u.size > budget
			// Start a paragraph on a fresh passage rather than split it, unless that
			// would leave the current passage small.
			paraBreak := u.paraStart && curLen >= budget/3 && curLen+u.paraWords > budget
			if full || paraBreak {
				chunks = append(chunks, cur)
				cur, curLen = nil, 0
			}
		}
		cur = append(cur, u)
		curLen += u.size
	}
	chunks = append(chunks, cur)
	rebalanceTail(chunks, budget)
	return chunks
}

// rebalanceTail evens out the last two chunks when the last is under a quarter of the
// budget, moving whole units from the end of the second-to-last chunk.
func rebalanceTail(chunks [][]unit, budget int) {
	if len(chunks) < 2 {
		return
	}
	a, b := chunks[len(chunks)-2], chunks[len(chunks)-1]
	lenA, lenB := unitsLen(a), unitsLen(b)
	if lenB >= budget/4 {
		return
	}
	k := len(a) // units of a that stay in a
	for k > 1 {
		n := a[k-1].size
		// Move the unit only if it brings the two sizes closer and fits.
		if lenB+n > budget || abs((lenA-n)-(lenB+n)) >= abs(lenA-lenB) {
			break
		}
		lenA, lenB = lenA-n, lenB+n
		k--
	}
	if k == len(a) {
		return
	}
	moved := append(append([]unit(nil), a[k:]...), b...)
	chunks[len(chunks)-2] = a[:k]
	chunks[len(chunks)-1] = moved
}

func unitsLen(us []unit) int {
	n := 0
	for _, u := range us {
		n += u.size
	}
	return n
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// sectionUnits splits text into paragraphs ("\n\n"-separated; a single "\n", as between
// list items, ends a sentence) and paragraphs into units of at most budget weight.
func sectionUnits(text string, budget int) []unit {
	var units []unit
	for para := range strings.SplitSeq(text, "\n\n") {
		first := len(units)
		total := 0
		for line := range strings.SplitSeq(para, "\n") {
			words, glued := cutCJK(strings.Fields(line), budget)
			for _, sent := range sentences(words) {
				// A sentence heavier than the budget is cut where its weight reaches it.
				start, size := sent[0], 0
				for i := sent[0]; i < sent[1]; i++ {
					w := WordWeight(words[i])
					if size+w > budget && i > start {
						units = append(units, newUnit(words, glued, start, i, size))
						total += size
						start, size = i, 0
					}
					size += w
				}
				units = append(units, newUnit(words, glued, start, sent[1], size))
				total += size
			}
		}
		if len(units) > first {
			units[first].paraStart = true
			units[first].paraWords = total
		}
	}
	return units
}

// newUnit is words[from:to] weighing size, with their glue.
func newUnit(words []string, glued []bool, from, to, size int) unit {
	u := unit{words: words[from:to:to], size: size}
	if glued != nil {
		u.glued = glued[from:to:to]
	}
	return u
}

// sentences splits a run of words at sentence ends (see sentenceEnd), as [from, to) ranges.
func sentences(words []string) [][2]int {
	var out [][2]int
	start := 0
	for i, w := range words {
		next := ""
		if i+1 < len(words) {
			next = words[i+1]
		}
		if next == "" || sentenceEnd(w, next) {
			out = append(out, [2]int{start, i + 1})
			start = i + 1
		}
	}
	return out
}

// closers may follow a sentence's final punctuation: `end.)` `"end."` `end.”`.
const closers = `)]}"'”’»`

// sentenceEnd reports whether word w ends a sentence followed by word next: w ends in . ! ?
// or … (before any closing quotes/brackets), next starts (after opening quotes/brackets) with
// an upper-case letter or a digit, and w is not an abbreviation or an initial. CJK full stops
// end a sentence whatever follows.
func sentenceEnd(w, next string) bool {
	if n := len(w); n > 0 {
		if c := w[n-1]; c < utf8.RuneSelf && c != '.' && c != '!' && c != '?' && strings.IndexByte(closers, c) < 0 {
			return false // most words: nothing to trim (the cut set's runes beyond ASCII make that slow)
		}
	}
	return endsSentence(w, next)
}

// endsSentence is sentenceEnd without its shortcut.
func endsSentence(w, next string) bool {
	core := strings.TrimRight(w, closers+cjkClosers)
	last, _ := utf8.DecodeLastRuneInString(core)
	switch last {
	case '。', '！', '？':
		return true
	case '!', '?', '…':
	case '.':
		if isAbbreviation(core) {
			return false
		}
	default:
		return false
	}
	first, _ := utf8.DecodeRuneInString(strings.TrimLeft(next, `([{"'“‘«¿¡`))
	return unicode.IsUpper(first) || unicode.IsDigit(first)
}

// abbreviations end in "." without ending a sentence when followed by a capitalised word
// ("Dr. Smith", "et al. Smith"); compared lower-cased, without the dot.
var abbreviations = map[string]bool{
	"mr": true, "mrs": true, "ms": true, "dr": true, "prof": true, "sr": true, "jr": true,
	"st": true, "mt": true, "ft": true, "vs": true, "al": true, "fig": true, "figs": true,
	"eq": true, "no": true, "nos": true, "vol": true, "vols": true, "pp": true, "p": true,
	"ed": true, "eds": true, "inc": true, "ltd": true, "co": true, "corp": true, "approx": true,
	"ca": true, "cf": true, "gen": true, "gov": true, "sen": true, "rep": true, "rev": true,
	"col": true, "lt": true, "sgt": true, "capt": true, "cmdr": true, "adm": true, "gov't": true,
	"jan": true, "feb": true, "mar": true, "apr": true, "jun": true, "jul": true, "aug": true,
	"sep": true, "sept": true, "oct": true, "nov": true, "dec": true, "ref": true, "refs": true,
}

// isAbbreviation reports whether core (a word ending in ".") is an abbreviation or an
// initial: "Dr.", "A.", "e.g.", "U.S.".
func isAbbreviation(core string) bool {
	stem := strings.TrimLeft(strings.TrimSuffix(core, "."), `([{"'“‘«`)
	if stem == "" {
		return false
	}
	if utf8.RuneCountInString(stem) == 1 {
		r, _ := utf8.DecodeRuneInString(stem)
		return unicode.IsLetter(r) // an initial; a digit ("in 5.") still ends a sentence
	}
	if strings.Contains(stem, ".") && utf8.RuneCountInString(stem) <= 6 {
		return true // e.g, i.e, U.S, a.m
	}
	return abbreviations[strings.ToLower(stem)]
}
