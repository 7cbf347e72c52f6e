package chat

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A generic chat model (an OpenAI-style assistant) answers a stage's prompt as it would answer
// a person: "Sure! Here's a friendly response:", a markdown heading, the text in bold or in
// quotes after a "Response:" label, a grade of its own ("Relevance: fine 100/100"), and "Let
// me know if you'd like me to adjust the tone!". Read as the reply, that was sent to the user
// whole, or, for a score or label line, refused whole (mpc and sicl answered "Sorry, I lost my
// train of thought"), and MSDP, which keeps the first line, answered with the preamble. The
// contentReader reads such an output for its content: it drops the lines and sentences that
// speak about the output instead of to the user, unwraps labels, markdown and quotes, and keeps
// the rest as written.
//
// It reads a stream as it arrives and passes on only what it has judged, sentence by sentence,
// so what streamed is never taken back: the reply read from a whole output and from the same
// output in any pieces are the same text (FuzzContentReader).

// contentReader reads one LLM output for its content. Set labels (and firstLine), call write
// with each piece of the output, then finish.
type contentReader struct {
	// labels reports whether a line label (lower case, without its colon) introduces the
	// content: "response" for a reply, "knowledge" for MSDP's knowledge. The text after such a
	// label is content; a line with another stage's label is dropped.
	labels func(label string) bool
	// firstLine ends the content with its first line (MSDP: the text before the first "\n").
	firstLine bool
	// emit, when set, receives the content as it is judged.
	emit func(string)

	partial string // the first bytes of a character or an escape sequence split across pieces
	buf     string // cleaned text not judged yet
	scanned int    // how far the current line of buf was searched for a sentence end
	out     strings.Builder
	// lineStart: buf starts a line (or the text after a line's label) not judged yet.
	lineStart bool
	// held: the current line is judged whole once complete (a quoted line); drop: it is a
	// stage's format line, dropped to its end.
	held, drop bool
	started    bool     // content has been emitted
	intro      []string // interjections before any content ("Sure!"), held until what follows tells
	gap        string   // the separator owed before the next content: "", " ", "\n" or "\n\n"
	stopped    bool
	over       bool     // the content reached MaxReplyBytes
	dropped    []string // what was left out, for the trace
}

func newContentReader(labels func(string) bool, firstLine bool) *contentReader {
	return &contentReader{labels: labels, firstLine: firstLine, lineStart: true}
}

// readContent reads a whole output; see contentReader.
func readContent(out string, labels func(string) bool, firstLine bool) (content string, dropped []string, err error) {
	r := newContentReader(labels, firstLine)
	r.write(out)
	content, err = r.finish(false)
	return content, r.dropped, err
}

// write takes the next piece of the output.
func (r *contentReader) write(s string) {
	if r.stopped {
		return
	}
	// Control characters go as text arrives; a character or escape sequence whose bytes have
	// not all arrived waits for the rest (as the stream filter of replies does), and invalid
	// bytes go before escapes are read, so that the pieces give what the whole gives.
	s = r.partial + s
	r.partial = ""
	i := len(s)
	for i > 0 && len(s)-i < utf8.UTFMax && !utf8.RuneStart(s[i-1]) {
		i--
	}
	if i > 0 && !utf8.FullRuneInString(s[i-1:]) {
		s, r.partial = s[:i-1], s[i-1:]
	}
	s = strings.ToValidUTF8(s, "")
	if k := incompleteEscape(s); k >= 0 {
		s, r.partial = s[:k], s[k:]+r.partial
	}
	r.buf += CleanControl(s)
	r.process(false)
	// Nothing held can be sent past MaxReplyBytes: an output that runs on without a line or
	// sentence end is unusable, and holding it would cost memory for nothing.
	if !r.stopped && len(r.buf) > MaxReplyBytes {
		r.over, r.stopped = true, true
	}
}

// finish reads what is left, the output being complete; truncated says the LLM was cut at its
// token limit, so the text after the last sentence or line end is a fragment and is dropped.
// The content is unusable when empty or over MaxReplyBytes.
func (r *contentReader) finish(truncated bool) (string, error) {
	if !r.stopped {
		if truncated {
			cut := lastBoundary(r.buf)
			if rest := strings.TrimSpace(r.buf[cut:]); rest != "" {
				r.dropped = append(r.dropped, "cut off at the token limit: "+rest)
			}
			r.buf = r.buf[:cut]
		}
		r.process(true)
	}
	if !r.started && len(r.intro) > 0 && !r.over {
		// "Sure!" and nothing else: the interjection is the reply.
		intro := r.intro
		r.intro = nil
		for _, s := range intro {
			r.send(s)
		}
	}
	switch {
	case r.over:
		return "", fmt.Errorf("%w: reply over %d bytes", ErrUnusable, MaxReplyBytes)
	case r.out.Len() == 0:
		return "", fmt.Errorf("%w: no content in the reply (left out: %q)", ErrUnusable, truncate(strings.Join(r.dropped, " | "), 200))
	}
	return r.out.String(), nil
}

func (r *contentReader) process(final bool) {
	for !r.stopped {
		var more bool
		if r.lineStart {
			more = r.judgeLineStart(final)
		} else {
			more = r.nextSentence(final)
		}
		if !more {
			return
		}
	}
}

// Kinds of line start (lineKind).
const (
	lineText  = iota
	lineMore  // more text is needed to tell
	lineLabel // a content label: the text after it is the line
	lineDrop  // a stage's format line, a heading or a code fence: dropped
	lineHeld  // a quoted line: judged whole
	lineStop  // a user turn: the model writes the dialogue on; the content ends
)

// judgeLineStart judges the start of the line buf begins with; it reports false when it
// needs more text.
func (r *contentReader) judgeLineStart(final bool) bool {
	t := ltrim(r.buf)
	if t == "" {
		// Only the line breaks of blank text count (noteGap): keep those, not the text.
		if n := strings.Count(r.buf, "\n"); n > 0 {
			r.buf = strings.Repeat("\n", min(2, n))
		} else if r.buf != "" {
			r.buf = " "
		}
		return false
	}
	r.noteGap(r.buf[:len(r.buf)-len(t)])
	r.buf, r.scanned = t, 0
	line, complete := t, final
	if i := strings.IndexByte(t, '\n'); i >= 0 {
		line, complete = t[:i], true
	}
	kind, n := r.lineKind(line, complete)
	switch kind {
	case lineMore:
		return false
	case lineStop:
		r.dropped = append(r.dropped, line)
		r.stopped = true
	case lineLabel:
		r.buf, r.scanned = t[n:], 0 // the rest of the line is judged as a line start again ("Response: Bot: ...")
	case lineDrop:
		r.drop, r.lineStart = true, false
	case lineHeld:
		r.held, r.lineStart = true, false
	default:
		r.lineStart = false
	}
	return true
}

var (
	// contentLabelRe is a label at the start of a line: "Response:", "**Response:**", "- Bot's
	// reply:"; its end is where the text after it starts.
	contentLabelRe = regexp.MustCompile(`^[#>*_\s-]*([A-Za-z][A-Za-z'’ \-]{0,30}?)[*_]*\s*[:：][*_]*[ \t]*`)
	// mayBeLabelRe is the start of a line that may still become a label once its colon comes.
	mayBeLabelRe = regexp.MustCompile(`^[#>*_\s-]*[A-Za-z][A-Za-z'’ \-]{0,30}[*_]*$`)
	// headingRe is a markdown heading or horizontal rule: never conversation.
	headingRe = regexp.MustCompile(`^\s{0,3}(?:#{1,6}(?:\s|$)|(?:[-*_]\s*){3,}$)`)
	// headingOpenRe is a heading told from its start.
	headingOpenRe = regexp.MustCompile(`^\s{0,3}#{1,6}\s`)
	// criterionStartRe is the start of a line that may be a grade without a colon
	// ("Relevance - fine 100/100"): it is judged whole (scoreRe).
	criterionStartRe = regexp.MustCompile(`(?i)^[\W_]*(?:relevan|natural|non[- ]?repetit|temporal)`)
)

func (r *contentReader) lineKind(line string, complete bool) (int, int) {
	c := cleanLine(line)
	trimmed := strings.TrimSpace(line)
	switch {
	case userTurnRe.MatchString(line), roleMarkerLineRe.MatchString(line):
		return lineStop, 0
	case strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~"):
		return lineDrop, 0
	case complete && headingRe.MatchString(line), !complete && headingOpenRe.MatchString(line):
		return lineDrop, 0
	case !complete && firstWordOpen(line):
		return lineMore, 0 // markdown, a bullet, punctuation, a word cut: the first word tells
	}
	if m := contentLabelRe.FindStringSubmatchIndex(line); m != nil {
		label := strings.ToLower(strings.Join(strings.Fields(line[m[2]:m[3]]), " "))
		switch {
		case !complete && m[1] == len(line):
			return lineMore, 0 // the label's closing emphasis may be split: "**Response:*" + "*"
		case strings.HasPrefix(label, "user") || strings.HasPrefix(label, "human"):
			return lineStop, 0
		case r.labels != nil && r.labels(label):
			return lineLabel, m[1]
		case !complete:
			return lineMore, 0 // another label: judged whole (a stage's, or prose like "Fun fact:")
		}
	} else if !complete && (mayBeLabelRe.MatchString(line) || criterionStartRe.MatchString(line) && len(line) < 120) {
		return lineMore, 0
	}
	if complete {
		if _, bad := stageFormatLine(line); bad || scoreRe.MatchString(c) {
			return lineDrop, 0
		}
	}
	if strings.HasPrefix(strings.TrimLeft(trimmed, "*_ "), `"`) || strings.HasPrefix(strings.TrimLeft(trimmed, "*_ "), "“") {
		return lineHeld, 0
	}
	return lineText, 0
}

// firstWordOpen reports whether the first word of a line may not have arrived whole: what a
// line is (a grade, a label, text) is told from its first word.
func firstWordOpen(line string) bool {
	const window = 120 // no label or grade opens later, or with a longer word
	if len(line) >= window {
		return false
	}
	word := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
	i := strings.IndexFunc(line, word)
	return i < 0 || strings.IndexFunc(line[i:], func(r rune) bool { return !word(r) }) < 0
}

// sentenceBreak returns the index of the first space (or tab) of line at or after from that
// ends a sentence: one after final punctuation, with closing quotes, brackets and emphasis
// between, and a period only where fullStop says it ends one ("Dr. Elmer McCollum", "St.
// Louis" and "No. 1" do not); -1 if none. Scanning from where the last call stopped keeps a
// stream linear.
func sentenceBreak(line string, from int) int {
	for i := from; i < len(line); i++ {
		if c := line[i]; c != ' ' && c != '\t' && c != '\f' && c != '\r' {
			continue
		}
		j := i
		for j > 0 {
			r, n := utf8.DecodeLastRuneInString(line[:j])
			if !strings.ContainsRune(`"'”’)]*_`, r) {
				break
			}
			j -= n
		}
		r, n := utf8.DecodeLastRuneInString(line[:j])
		if r == '.' && !fullStop(line, j-n, i) {
			continue
		}
		if strings.ContainsRune(".!?…", r) {
			return i
		}
	}
	return -1
}

// nextSentence judges the next sentence of the current line; it reports false when it needs
// more text.
func (r *contentReader) nextSentence(final bool) bool {
	line, complete := r.buf, final
	if i := strings.IndexByte(r.buf, '\n'); i >= 0 {
		line, complete = r.buf[:i], true
	}
	switch {
	case r.drop:
		if !complete {
			return false
		}
		if l := strings.TrimSpace(line); l != "" {
			r.dropped = append(r.dropped, l)
		}
		r.endLine(len(line))
		return true
	case r.held:
		if !complete {
			return false
		}
		sents := sentencesOf(unquoteLine(line))
		for i, s := range sents {
			r.judge(s, i == len(sents)-1)
			if r.stopped {
				return false
			}
		}
		r.endLine(len(line))
		return true
	}
	end := sentenceBreak(line, r.scanned)
	if end < 0 || strings.TrimSpace(line[end:]) == "" {
		if !complete {
			r.scanned = len(rtrim(line)) // the spaces before it ended no sentence; a space after it may
			return false
		}
		r.judge(line, true)
		r.endLine(len(line))
		return true
	}
	r.judge(line[:end], false)
	rest := r.buf[end:]
	r.buf, r.scanned = ltrim(rest), 0
	if r.started {
		r.noteGap(" ")
	}
	return true
}

// endLine consumes the current line (n bytes, its newline left for the next line's start).
func (r *contentReader) endLine(n int) {
	r.buf, r.scanned = r.buf[n:], 0
	r.held, r.drop, r.lineStart = false, false, true
	if r.firstLine && r.started && !r.stopped {
		r.stopped = true
		if rest := strings.TrimSpace(r.buf); rest != "" {
			r.dropped = append(r.dropped, "after the first line: "+truncate(rest, 80))
		}
	}
}

// noteGap records the whitespace between content: a blank line, a line break or a space.
func (r *contentReader) noteGap(ws string) {
	if !r.started || ws == "" {
		return
	}
	g := " "
	switch n := strings.Count(ws, "\n"); {
	case n >= 2:
		g = "\n\n"
	case n == 1:
		g = "\n"
	}
	if gapRank(g) > gapRank(r.gap) {
		r.gap = g
	}
}

// gapRank orders separators: a blank line over a line break over a space.
func gapRank(g string) int {
	return strings.Count(g, "\n")*2 + len(strings.TrimLeft(g, "\n"))
}

var (
	// interjectionRe is a sentence that only opens a reply ("Sure!", "Of course."): content
	// when content follows it, part of the preamble when a preamble does.
	interjectionRe = regexp.MustCompile(`(?i)^\W*(?:sure(?:\s+thing)?|certainly|of\s+course|absolutely|okay|ok|alright|all\s+right|great|got\s+it|no\s+problem|gladly|happy\s+to\s+help|definitely|yes|yeah)\W*$`)
	// announceRe opens a sentence that announces something ("Here's ...", "Below is ..."); it
	// announces the output when it names what was asked for (taskWordRe).
	announceRe = regexp.MustCompile(`(?i)^\W*(?:(?:sure(?:\s+thing)?|certainly|of\s+course|absolutely|okay|ok|alright|great|gladly)\b[!,.]*\s*)?` +
		`(?:here(?:'s|’s|\s+is|\s+are|\s+it\s+is)|below\s+(?:is|are)|the\s+following\s+(?:is|are)|this\s+is\s+(?:a|an|the|my)|i(?:'d|’d|\s+would)\s+(?:say|reply|respond|answer))\b`)
	// hereYouGoRe is an announcement that names nothing: always the output's.
	hereYouGoRe = regexp.MustCompile(`(?i)^\W*(?:(?:sure(?:\s+thing)?|certainly|of\s+course|absolutely|okay|ok|alright|great|gladly)\b[!,.]*\s*)?here\s+(?:you\s+go|goes|it\s+is)\W*$`)
	// taskWordRe names what a stage asked for, as a preamble speaks of it.
	taskWordRe = regexp.MustCompile(`(?i)\b(?:responses?|repl(?:y|ies)|answers?|turns?|versions?|sentences?|knowledge|rephras\w*|messages?|continuation|options?|facts?|summary|analysis|memor(?:y|ies)|clarifi\w*|utterances?)\b`)
	// closingRe is a sentence that speaks to the person who asked for the output, not to the
	// user of the chat: an offer to change it, a hope that it helps, a note about it. An offer
	// or a note about anything else is the bot's own ("Would you like me to give you a tour?",
	// "Note: the museum is closed on Mondays.").
	closingRe = regexp.MustCompile(`(?i)^\W*(?:` +
		`let\s+me\s+know\s+if\s+(?:you(?:'d|’d|\s+would)?\s+(?:like|want|need|prefer)\s+(?:me\s+to|any|another|a\s+different|more|changes|adjustments|anything\s+else|further|help)|` +
		`you\s+have\s+any\s+(?:other\s+|more\s+|further\s+)?(?:questions|requests|changes|feedback)|(?:this|that|it)\s+(?:works|helps|fits)|there(?:'s|’s|\s+is)\s+anything\s+else)|` +
		`i\s+hope\s+(?:this|that|it)\s+(?:helps|works|fits)|hope\s+(?:this|that)\s+helps|feel\s+free\s+to\s+(?:adjust|change|modify|tweak|edit)|` +
		`(?:would|do)\s+you\s+(?:like|want)\s+me\s+to\s+(?:adjust|modify|tweak|rewrite|rephrase|shorten|expand|revise|edit|` +
		`make\s+(?:it|this|the\s+(?:response|reply))|change\s+(?:it|this|the\s+(?:tone|response|reply))|` +
		`(?:write|generate|provide|try|give\s+you)\s+(?:another|a\s+different|more\s+(?:options|versions)|again))|` +
		`if\s+you(?:'d|’d|\s+would)?\s+(?:like|want|prefer|need)\b.*\b(?:adjust|change|modify|tweak|rewrite|rephrase|another|different|version|variation|tone|detail|shorter|longer)|` +
		`i\s+can\s+(?:also\s+)?(?:adjust|rewrite|rephrase|make|provide|give|generate|tweak)\b.*\b(?:versions?|tone|variations?|another|different|responses?|repl(?:y|ies))|` +
		`\(?\s*(?:note|explanation)\s*[:：].*(?:\b(?:response|reply|answer|tone|version|draft|revis\w*|rewr\w*|rephras\w*)\b|` +
		`\bi\s+(?:kept|made|used|added|removed|chose|tried|wrote|avoided|left)\b))`)
	// alternativeRe opens another version of the output after the first: the content ends.
	alternativeRe = regexp.MustCompile(`(?i)^\W*(?:alternatively|or\s*,?\s+(?:if|for|a)\b|here(?:'s|’s|\s+is|\s+are)\s+(?:another|a\s+(?:different|second|shorter|longer|more)|some\s+(?:other|more))|another\s+(?:option|version|way|possibility)|(?:option|version)\s+\d)`)
)

// preamble reports whether a sentence that introduces what follows (it ends its line with a
// colon) announces the output: "Sure! Here's a friendly response:", "Here you go:", "Option
// 1:", not "Here are my favourite books:" or "I have three cats:".
func preamble(t string) bool {
	return hereYouGoRe.MatchString(t) || taskWordRe.MatchString(t) && (announceRe.MatchString(t) || len(strings.Fields(t)) <= 3)
}

// judge decides whether one sentence is content; atLineEnd says that nothing follows it on
// its line.
func (r *contentReader) judge(s string, atLineEnd bool) {
	t := strings.TrimSpace(strings.NewReplacer("**", "", "__", "").Replace(s))
	if t == "" {
		return
	}
	introduces := atLineEnd && strings.HasSuffix(t, ":") && !strings.Contains(t[:len(t)-1], ":")
	if !r.started {
		switch {
		case interjectionRe.MatchString(t):
			r.intro = append(r.intro, t)
			return
		case introduces && preamble(t):
			r.dropped = append(r.dropped, strings.Join(append(r.intro, t), " "))
			r.intro = nil
			return
		}
	}
	if userTurnRe.MatchString(t) {
		r.dropped = append(r.dropped, t)
		r.stopped = true
		return
	}
	if _, bad := stageFormatLine(t); bad || closingRe.MatchString(t) {
		r.dropped = append(r.dropped, t)
		return
	}
	if r.started && introduces && alternativeRe.MatchString(t) {
		r.dropped = append(r.dropped, t)
		r.stopped = true
		return
	}
	intro := r.intro
	r.intro = nil
	for _, in := range intro {
		r.send(in)
		r.gap = " "
	}
	r.send(t)
}

// send appends content and passes it on, with the separator owed before it.
func (r *contentReader) send(t string) {
	if r.over {
		return
	}
	piece := t
	if r.out.Len() > 0 {
		piece = r.gap + t
		if r.gap == "" {
			piece = " " + t
		}
	}
	if r.out.Len()+len(piece) > MaxReplyBytes {
		r.over, r.stopped = true, true
		return
	}
	r.out.WriteString(piece)
	r.started, r.gap = true, ""
	if r.emit != nil {
		r.emit(piece)
	}
}

// sentencesOf cuts a line into its sentences (sentenceBreak).
func sentencesOf(line string) []string {
	var out []string
	for {
		i := sentenceBreak(line, 0)
		if i < 0 {
			break
		}
		out = append(out, line[:i])
		line = ltrim(line[i:])
	}
	if strings.TrimSpace(line) != "" {
		out = append(out, line)
	}
	return out
}

// unquoteLine removes the quotes that wrap a whole line (and the emphasis around them); a
// line with a quote inside is left as written.
func unquoteLine(line string) string {
	t := strings.Trim(strings.TrimSpace(line), "*_")
	for _, q := range [][2]string{{`"`, `"`}, {"“", "”"}} {
		inner, ok := strings.CutPrefix(t, q[0])
		if !ok {
			continue
		}
		inner, ok = strings.CutSuffix(inner, q[1])
		if ok && !strings.ContainsAny(inner, `"“”`) {
			return strings.TrimSpace(inner)
		}
	}
	return line
}

var sentencePunctRe = regexp.MustCompile(`[.!?…]+["'”’)\]*_]*`)

// lastBoundary is the end of the last whole sentence or line of s.
func lastBoundary(s string) int {
	end := strings.LastIndexByte(s, '\n') + 1
	for _, loc := range sentencePunctRe.FindAllStringIndex(s, -1) {
		end = max(end, loc[1])
	}
	return end
}

// Content labels of the stages: the labels a generic model writes before the text a stage
// asked for.

// replyLabel: a reply ("Response:", "Bot:", "Friendly reply:", "The bot's next turn:").
func replyLabel(l string) bool {
	switch l {
	case "bot", "assistant", "chatbot", "ai", "system", "system replies", "the bot", "teacher", "agent":
		return true
	}
	return lastWordIn(l, "response", "reply", "answer", "turn", "message", "utterance")
}

// knowledgeLabel: MSDP's knowledge sentence ("Knowledge:", "Fact:", "Knowledge sentence:").
func knowledgeLabel(l string) bool {
	return lastWordIn(l, "knowledge", "fact", "sentence", "answer", "response")
}

// clarifiedLabel: MPC's clarified turn ("Clarified:", "Rephrased turn:", "Clarified question:").
func clarifiedLabel(l string) bool {
	return strings.HasPrefix(l, "clarified") || strings.HasPrefix(l, "rephrased") ||
		lastWordIn(l, "clarified", "rephrasing", "question", "turn")
}

func lastWordIn(l string, words ...string) bool {
	f := strings.Fields(l)
	if len(f) == 0 {
		return false
	}
	last := f[len(f)-1]
	for _, w := range words {
		if last == w {
			return true
		}
	}
	return false
}
