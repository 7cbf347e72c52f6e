package chat

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Streamer is a Completer that can also deliver a completion as it is generated.
type Streamer interface {
	Completer
	// Stream calls onDelta with each piece of text as it arrives and returns the whole.
	Stream(ctx context.Context, req CompletionRequest, onDelta func(string)) (Completion, error)
}

var _ Streamer = (*Client)(nil)

// Stream is Complete with "stream": true. Failures before the first piece of text are retried
// like Complete's; after it they are not, since delivered text cannot be taken back. A server
// that ignores "stream" and answers with one JSON body is handled: its text is one piece.
func (c *Client) Stream(ctx context.Context, req CompletionRequest, onDelta func(string)) (Completion, error) {
	body, err := c.encode(req, true)
	if err != nil {
		return Completion{}, err
	}
	out, err := c.withRetries(ctx, req.Stage, func() (Completion, time.Duration, error) {
		delivered := false
		out, retryAfter, err := c.streamAttempt(ctx, body, func(s string) {
			delivered = true
			onDelta(s)
		})
		var re *retryableError
		if err != nil && delivered && errors.As(err, &re) {
			err = fmt.Errorf("stream broken after partial output: %w", re.err)
		}
		return out, retryAfter, err
	})
	if err != nil {
		return out, err
	}
	return c.account(req, out), nil
}

type streamChunk struct {
	Choices []struct {
		Delta struct {
			Content string `json:"content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *Usage `json:"usage"`
}

func (c *Client) streamAttempt(ctx context.Context, body []byte, onDelta func(string)) (Completion, time.Duration, error) {
	actx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	resp, retryAfter, err := c.post(ctx, actx, body)
	if err != nil {
		return Completion{}, retryAfter, err
	}
	defer resp.Body.Close()
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
		if err != nil {
			return Completion{}, 0, c.transportErr(ctx, actx, fmt.Errorf("reading response: %w", err))
		}
		out, ra, err := c.decode(raw)
		if err == nil && out.Text != "" {
			onDelta(out.Text)
		}
		return out, ra, err
	}
	var (
		text     strings.Builder
		usage    Usage
		reported bool // a usage chunk came (servers that ignore stream_options send none)
		done     bool
		finish   string
	)
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for line := 1; sc.Scan(); line++ {
		data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data:"))
		if !ok {
			continue // blank separators, comments (": ping"), event names
		}
		data = bytes.TrimSpace(data)
		if string(data) == "[DONE]" {
			done = true
			break
		}
		var ch streamChunk
		if err := json.Unmarshal(data, &ch); err != nil {
			return Completion{}, 0, fmt.Errorf("stream event %d: %w", line, err)
		}
		if ch.Usage != nil {
			usage, reported = *ch.Usage, true
		}
		for _, choice := range ch.Choices[:min(1, len(ch.Choices))] {
			if choice.FinishReason != nil && *choice.FinishReason != "" {
				finish = *choice.FinishReason
			}
			if d := choice.Delta.Content; d != "" {
				text.WriteString(d)
				onDelta(d)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return Completion{}, 0, c.transportErr(ctx, actx, fmt.Errorf("reading stream: %w", err))
	}
	if !done {
		return Completion{}, 0, &retryableError{errors.New("stream ended without [DONE]")}
	}
	usage.Calls = 1
	if !reported {
		usage.EstimatedCalls = 1 // account estimates it
	}
	return Completion{Text: text.String(), Usage: usage, FinishReason: finish}, 0, nil
}

// replyFilter reads a reply for its content as it streams, without ever taking back text it
// has passed on: it holds the start until a leading speaker label ("Bot:") can be recognised,
// holds each line's start until it is known not to be a user turn ("User:", a role marker: a
// model continuing the dialogue on its own, where the reply ends) or a stage's format line
// ("Relevance: ... 90/100", "Verdict:", a preamble such as "Here's my reply:"), which is left
// out, a response label's text ("Response: ...") kept; and it holds trailing whitespace.
// ParseResponse runs it over a whole reply.
type replyFilter struct {
	emit    func(string)
	out     strings.Builder
	pending string
	partial string // the first bytes of a character split across pieces
	started bool
	stopped bool
	over    bool // the reply reached MaxReplyBytes and was cut there
	// judged says that the line pending starts in has been let through.
	judged bool
	// firstLine stops the reply at its first newline (MSDP keeps the text before it).
	firstLine bool
}

const (
	labelWindow = 24 // characters held at the start to recognise a speaker label
	// formatHold is how much of a line that starts with a label's first word is held to
	// see its colon: the longest label, "Revised response after applying this feedback:",
	// fits.
	formatHold = 64
)

func (f *replyFilter) write(s string) {
	if f.stopped {
		return
	}
	// Control characters are removed as text arrives; a character whose bytes have not all
	// arrived, or an escape sequence not yet complete, waits for the rest, or cleaning would
	// drop it as invalid or leave the sequence's tail visible.
	s = f.partial + s
	f.partial = ""
	if k := incompleteEscape(s); k >= 0 {
		s, f.partial = s[:k], s[k:]
	} else {
		i := len(s)
		for i > 0 && len(s)-i < utf8.UTFMax && !utf8.RuneStart(s[i-1]) {
			i--
		}
		if i > 0 && !utf8.FullRuneInString(s[i-1:]) {
			s, f.partial = s[:i-1], s[i-1:]
		}
	}
	f.pending += CleanControl(s)
	if !f.started {
		t := ltrim(f.pending)
		if len(t) < labelWindow && !strings.Contains(t, "\n") {
			f.pending = t
			return
		}
		f.pending = ltrim(speakerPrefixRe.ReplaceAllString(t, ""))
		f.started = true
	}
	f.drain(false)
}

func (f *replyFilter) flush() {
	if f.stopped {
		return
	}
	if !f.started {
		f.pending = ltrim(speakerPrefixRe.ReplaceAllString(ltrim(f.pending), ""))
		f.started = true
	}
	f.drain(true)
}

// drain emits what pending holds that is known to be reply: line by line, each line's start
// judged before any of it goes out. The whitespace before a line goes out with the line.
func (f *replyFilter) drain(final bool) {
	if f.out.Len() == 0 {
		f.pending = ltrim(f.pending) // the reply starts at its first visible character
	}
	for !f.stopped {
		// A line judged earlier continues at pending's start, whitespace and all; a new
		// line starts after the whitespace (blank lines included) that pending starts with.
		lead := 0
		if !f.judged {
			lead = len(f.pending) - len(ltrim(f.pending))
			line, complete := f.pending[lead:], final
			if i := strings.IndexByte(line, '\n'); i >= 0 {
				line, complete = line[:i], true
			}
			switch judgeLine(line, complete) {
			case lineWait:
				return
			case lineUser:
				f.pending, f.stopped = "", true
				return
			case lineFormat:
				if !complete {
					return // the whole line is left out, or its label: wait for its end
				}
				keep := formatLineContent(line)
				rest := f.pending[lead+len(line):]
				if keep == "" {
					f.pending = f.pending[:lead] + strings.TrimPrefix(rest, "\n")
					if f.pending[:lead] != "" && strings.TrimSpace(f.pending) == "" && !final {
						return // the whitespace waits for the next line
					}
					continue
				}
				f.pending = f.pending[:lead] + keep + rest
			}
			f.judged = true
		}
		i := strings.IndexByte(f.pending[lead:], '\n')
		if i < 0 {
			// Mid-line: everything but trailing whitespace, which waits for what follows.
			cut := len(rtrim(f.pending))
			if final {
				f.send(f.pending[:cut])
				f.pending = ""
				return
			}
			f.send(f.pending[:cut])
			f.pending = f.pending[cut:]
			return
		}
		end := lead + i
		f.send(rtrim(f.pending[:end]))
		if f.firstLine {
			f.pending, f.stopped = "", true
			return
		}
		f.pending = f.pending[len(rtrim(f.pending[:end])):]
		f.judged = false
	}
}

// Verdicts of judgeLine.
const (
	lineOK = iota
	lineWait
	lineUser
	lineFormat
)

// labelFirstWordRe matches the first word of a line that may start a user turn or a stage's
// format line (userTurnRe, stageFormatRe, scoreRe); a line starting otherwise is reply text.
var labelFirstWordRe = regexp.MustCompile(`(?i)^[#>*_\s-]*(?:search|query|reasoning|verdict|claims?|evidence|relevan\w*|natural\w*|non\w*|` +
	`temporal\w*|revised|improved|final|verified|memor\w*|clarified|knowledge|topic|directive|passage|draft|reply|response|` +
	`conversation|user|human|time|let'?s|lets|=|<|end|here'?s?|sure|okay|ok|certainly|of|absolutely|below)`)

// judgeLine says whether a line (its start so far; complete when its end is known) is reply
// text, a user turn, a stage's format line, or cannot be told yet.
func judgeLine(line string, complete bool) int {
	c := cleanLine(line)
	switch {
	case userTurnRe.MatchString(line) || roleMarkerLineRe.MatchString(line):
		return lineUser
	case stageFormatRe.MatchString(line) || scoreRe.MatchString(c) || preambleRe.MatchString(c):
		return lineFormat
	case complete:
		return lineOK
	}
	// The first word decides, once it is whole.
	t := strings.TrimLeft(line, "#>*_ \t-")
	w := strings.IndexFunc(t, func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' && r != '=' && r != '<' })
	if w < 0 {
		if len(line) < formatHold {
			return lineWait
		}
		return lineOK
	}
	if !labelFirstWordRe.MatchString(t[:w+1]) {
		return lineOK
	}
	// A label's first word: its colon (or the score at the end) decides.
	if len(line) < formatHold && !strings.ContainsAny(line, ":：") {
		return lineWait
	}
	return lineOK
}

// roleMarkerLineRe is a role marker or an untrusted-data delimiter: what follows is another
// message, never the reply.
var roleMarkerLineRe = regexp.MustCompile(`(?i)^\s*(?:=+\s*(?:system|user|assistant)\s*=+|<<<UNTRUSTED|END UNTRUSTED>>>)`)

// preambleRe is a line that introduces the reply instead of being part of it: "Sure! Here's a
// revised response:", "Here is my reply:".
var preambleRe = regexp.MustCompile(`(?i)^\W*(?:(?:sure|okay|ok|certainly|of course|absolutely)\W+)?(?:here(?:'s|’s| is| are)|below is)\b[^:：]{0,60}[:：]\s*$`)

// responseLabelRe is a label whose text is the reply: "Response:", "Revised response after
// applying this feedback:", "Final answer:".
var responseLabelRe = regexp.MustCompile(`(?i)^[#>*_\s-]*(?:(?:revised|improved|final)\s+)?(?:response|reply|answer)(?:\s+after\s+applying\s+\w+\s+feedback)?[*_]*\s*[:：][*_]*\s*`)

// formatLineContent returns what of a stage's format line is reply: the text after a response
// label, else nothing (a score line, another stage's label, a preamble).
func formatLineContent(line string) string {
	if loc := responseLabelRe.FindStringIndex(line); loc != nil && !scoreRe.MatchString(cleanLine(line)) {
		return strings.TrimSpace(line[loc[1]:])
	}
	return ""
}

func ltrim(s string) string { return strings.TrimLeftFunc(s, unicode.IsSpace) }
func rtrim(s string) string { return strings.TrimRightFunc(s, unicode.IsSpace) }

func (f *replyFilter) send(s string) {
	if s == "" {
		return
	}
	if f.out.Len()+len(s) > MaxReplyBytes {
		// What fits goes on (cut at a character's start); the reply's gate keeps its whole
		// sentences.
		n := MaxReplyBytes - f.out.Len()
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n]
		f.over, f.stopped = true, true
		if s == "" {
			return
		}
	}
	f.out.WriteString(s)
	f.emit(s)
}
