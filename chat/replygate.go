package chat

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// replyGate makes the turn's reply out of an LLM's text, one sentence at a time, and is the
// only way text reaches the user: streamed or not, a sentence is sent once it is complete and
// has passed, and nothing sent is ever taken back. For a grounded pipeline each sentence must
// pass the attribution check (attributor.check) and is sent with markers naming the passages
// that support it, numbered in the order the user reads them; the LLM's own markers only say
// which passages to try first. For every pipeline a repeated sentence is dropped, and the
// reply ends at the last whole sentence within its length budget.
type replyGate struct {
	attr *attributor // nil: the pipeline is not grounded; sentences are not checked
	// emit receives each piece of the reply as it is decided (a streaming client); may be nil.
	emit     func(string)
	maxBytes int
	// markers maps the numbers the LLM was shown for sources ([1] is markers[0]) to pool
	// passages: they are its citation markers' meaning.
	markers []int
	// holdChat holds chat sentences back until a fact is sent: a refinement that keeps only
	// its pleasantries gives way to its draft (refineOrDraft).
	holdChat bool
	// onDrop records a dropped sentence.
	onDrop func(DroppedSentence)

	stage   string          // the stage whose text is read, for onDrop
	buf     strings.Builder // text not yet cut into sentences
	out     strings.Builder
	held    []string // chat sentences held back (holdChat)
	heldNL  []bool
	keys    [][]string // the sentenceKey of each sentence sent or held
	order   []int      // pool passages in the order cited
	number  map[int]int
	facts   int  // fact sentences sent
	full    bool // the length budget is spent
	newline bool // the next sentence starts a line
	midLine bool // buf starts inside a line (after a sentence decided on it)
	dropped bool // the last sentence was dropped
	// lastFact is the last fact sent: a sentence that opens with a pronoun stands for its
	// subject (attributor.pronounCarries).
	lastFact *checked
}

// newReplyGate starts a gate. attr nil: an ungrounded pipeline.
func newReplyGate(attr *attributor, maxBytes int, emit func(string), onDrop func(DroppedSentence)) *replyGate {
	if maxBytes <= 0 || maxBytes > MaxReplyBytes {
		maxBytes = MaxReplyBytes
	}
	return &replyGate{attr: attr, emit: emit, maxBytes: maxBytes, onDrop: onDrop, number: map[int]int{}}
}

// write takes the next piece of the LLM's text and decides every sentence it completes. A
// sentence is complete once something other than spaces follows its end (the next sentence's
// first character), or at a line's end (sentences).
func (g *replyGate) write(ctx context.Context, stage, piece string) error {
	g.stage = stage
	g.buf.WriteString(piece)
	// A sentence decided mid-line leaves the rest of the line in buf: its start is no line
	// start ("000. " there is no list number), so the splitter is told with a word before it.
	const midLineMark = "\x00 "
	pre := ""
	if g.midLine {
		pre = midLineMark
	}
	pieces := sentences(pre + g.buf.String())
	pieces[0] = pieces[0][len(pre):]
	keep := 1
	if n := len(pieces); n >= 2 && strings.TrimSpace(pieces[n-1]) == "" && !strings.HasSuffix(pieces[n-2], "\n") {
		keep = 2 // only spaces follow it yet: the next word may still say it did not end ("A.  a")
	}
	if len(pieces) <= keep {
		return nil
	}
	for _, s := range pieces[:len(pieces)-keep] {
		if err := g.decide(ctx, s); err != nil {
			return err
		}
		g.midLine = !strings.HasSuffix(s, "\n")
	}
	rest := strings.Join(pieces[len(pieces)-keep:], "")
	g.buf.Reset()
	g.buf.WriteString(rest)
	return nil
}

// writeSentences takes text that is whole sentences (a contentReader passes on nothing else)
// and decides each at once: no need to wait for what follows.
func (g *replyGate) writeSentences(ctx context.Context, stage, text string) error {
	if err := g.write(ctx, stage, text); err != nil {
		return err
	}
	return g.flush(ctx, stage, false)
}

// flush decides the text's last sentence. truncated: the LLM was cut off at its token limit,
// so the last sentence is incomplete, and dropped.
func (g *replyGate) flush(ctx context.Context, stage string, truncated bool) error {
	g.stage = stage
	rest := g.buf.String()
	g.buf.Reset()
	if strings.TrimSpace(rest) == "" {
		return nil
	}
	if truncated {
		// Nothing followed it: even "It cost 3." may be "3.14" cut short.
		g.drop(strings.TrimSpace(rest), "cut off at the LLM's token limit")
		return nil
	}
	return g.decide(ctx, rest)
}

// decide checks one sentence (with the whitespace after it) and sends or drops it.
func (g *replyGate) decide(ctx context.Context, raw string) error {
	nl := g.newline
	g.newline = strings.HasSuffix(raw, "\n")
	text := strings.TrimSpace(raw)
	if stripMarkers(text) == "" {
		return nil // a blank line, or a marker the sentence splitter left on its own
	}
	var c checked
	pref := g.preferred(text)
	if g.attr == nil {
		// An ungrounded reply cites nothing: a marker in it names no passage.
		c = checked{kind: sentFact, text: stripMarkers(text)}
	} else {
		var err error
		if c, err = g.attr.check(ctx, text, pref); err != nil {
			return err
		}
	}
	switch {
	case c.kind == sentDropped:
		g.drop(text, c.reason)
		return nil
	case g.dropped && refersBack(c.text):
		g.drop(text, "it refers to a sentence that was dropped")
		return nil
	case c.kind == sentFact && g.attr != nil && g.lastFact != nil:
		if why := g.attr.pronounCarries(c, *g.lastFact); why != "" {
			g.drop(text, why)
			return nil
		}
	}
	key := sentenceKey(c.text)
	switch {
	case g.repeats(key):
		if c.kind == sentFact {
			g.dropped = false // a repeated fact leaves the sentence it repeats standing
		}
		g.report(text, "a repeat of an earlier sentence")
		return nil
	case g.full || g.out.Len()+len(c.text)+8*len(c.passages)+1 > g.maxBytes:
		g.full = true
		g.report(text, "past the reply's length limit")
		return nil
	}
	g.keys = append(g.keys, key)
	if c.kind == sentFact {
		g.dropped = false // chat between them ("Fun fact!") does not stand for a dropped fact
	}
	if c.kind == sentChat && g.holdChat && g.facts == 0 {
		g.held, g.heldNL = append(g.held, c.text), append(g.heldNL, nl)
		return nil
	}
	if c.kind == sentFact {
		g.releaseHeld()
		g.facts++
		g.lastFact = &c
	}
	g.send(g.cite(c, pref), nl)
	return nil
}

// drop records a dropped sentence; the next sentence may not lean on it (refersBack).
func (g *replyGate) drop(text, reason string) {
	g.dropped = true
	g.report(text, reason)
}

func (g *replyGate) report(text, reason string) {
	if g.onDrop != nil {
		g.onDrop(DroppedSentence{Stage: g.stage, Text: truncate(text, 300), Reason: reason})
	}
}

// restart starts reading another text: no sentence of it leans on the last one's.
func (g *replyGate) restart() {
	g.buf.Reset()
	g.dropped, g.newline, g.midLine = false, false, false
	g.lastFact = nil
}

// releaseHeld sends the chat sentences held back.
func (g *replyGate) releaseHeld() {
	for i, s := range g.held {
		g.send(s, g.heldNL[i])
	}
	g.held, g.heldNL = nil, nil
}

// discardHeld forgets the chat sentences held back.
func (g *replyGate) discardHeld() { g.held, g.heldNL = nil, nil }

func (g *replyGate) send(s string, newline bool) {
	if g.out.Len() > 0 {
		if newline {
			s = "\n" + s
		} else {
			s = " " + s
		}
	}
	g.out.WriteString(s)
	if g.emit != nil {
		g.emit(s)
	}
}

// sendFixed sends a reply of the pipeline's own (a fallback such as DefaultNotSure) when the
// LLM's text gave none: it is no LLM text and is not checked.
func (g *replyGate) sendFixed(s string) {
	g.releaseHeld()
	if g.out.Len() == 0 && strings.TrimSpace(s) != "" {
		g.send(strings.TrimSpace(s), false)
	}
}

// text is the reply sent so far.
func (g *replyGate) text() string { return g.out.String() }

// preferred returns the pool passages the sentence's markers name.
func (g *replyGate) preferred(s string) []int {
	var out []int
	for _, n := range markerNumbers(s) {
		if n >= 1 && n <= len(g.markers) {
			out = append(out, g.markers[n-1])
		}
	}
	return out
}

// trailingPunctRe is the end of a sentence a marker goes before.
var trailingPunctRe = regexp.MustCompile(`[.!?。！？]*["'”’)\]」』]*$`)

// cite returns the checked sentence with a marker naming its supporting passages: the first
// (the LLM's own choice, pref, when it supports the sentence, else the first that does), with
// the others of pref that support it too. A question asks, it is not cited.
func (g *replyGate) cite(c checked, pref []int) string {
	if len(c.passages) == 0 || strings.HasSuffix(strings.TrimRight(c.text, `"'”’) `), "?") {
		return c.text
	}
	cited := c.passages[:1]
	for _, p := range c.passages[1:] {
		if len(cited) < 3 && contains(pref, p) {
			cited = append(cited, p)
		}
	}
	var nums []string
	for _, p := range cited {
		n, ok := g.number[p]
		if !ok {
			n = len(g.order) + 1
			g.number[p] = n
			g.order = append(g.order, p)
		}
		nums = append(nums, strconv.Itoa(n))
	}
	cut := trailingPunctRe.FindStringIndex(c.text)[0]
	return strings.TrimRightFunc(c.text[:cut], unicode.IsSpace) + " [" + strings.Join(nums, ", ") + "]" + c.text[cut:]
}

func contains(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// refersBackRe is a sentence that opens by pointing at the one before it ("That emperor was
// Napoleon.", "He ...", "This ..."): when that one was dropped, it would say its claim
// through another ("It was first described by a French emperor. That emperor was Napoleon.").
var refersBackRe = regexp.MustCompile(`(?i)^\W*(?:th(?:at|is|ese|ose|en)|he|she|it|its|they|their|them|his|her|such|both|the\s+(?:latter|former|same)|(?:also|moreover|furthermore|however|but|and|so|therefore|thus))\b`)

func refersBack(s string) bool { return refersBackRe.MatchString(s) }

// sentenceKey is what a sentence says, for telling repeats: its content words' stems and its
// numbers; for a sentence with neither (chat), its words.
func sentenceKey(s string) []string {
	var out []string
	for _, t := range tokenize(s) {
		switch {
		case t.num:
			out = append(out, strconv.FormatFloat(t.value, 'g', -1, 64))
		case isContent(t):
			out = append(out, t.stem)
		}
	}
	if len(out) == 0 { // chat: the words themselves
		out = append(out, "\x00"+strings.Join(strings.Fields(foldText(s)), " "))
	}
	return out
}

// repeats reports whether a sentence saying key says nothing an earlier one did not: all of
// its words are one earlier sentence's ("It is produced in the skin" after "Vitamin D is
// produced in the skin"); chat ("Sure!") repeats only itself.
func (g *replyGate) repeats(key []string) bool {
	for _, k := range g.keys {
		all := true
		for _, w := range key {
			all = all && slices.Contains(k, w)
		}
		if all {
			return true
		}
	}
	return false
}

// markerNumbers returns the numbers of the citation markers of s, in order.
func markerNumbers(s string) []int {
	var out []int
	for _, m := range markerRe.FindAllString(s, -1) {
		body := strings.Trim(strings.TrimSpace(m), "[]【】［］")
		for _, f := range strings.FieldsFunc(body, func(r rune) bool { return r == ',' || r == '，' || r == '、' }) {
			if n, err := strconv.Atoi(asciiDigitsOf(strings.TrimSpace(f))); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// asciiDigitsOf rewrites the decimal digits of any script in s as ASCII digits.
func asciiDigitsOf(s string) string {
	return strings.Map(func(r rune) rune {
		if r > unicode.MaxASCII && unicode.IsDigit(r) {
			return '0' + digitValue(r)
		}
		return r
	}, s)
}
