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
	return c.withRetries(ctx, req.Stage, func() (Completion, time.Duration, error) {
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
		text   strings.Builder
		usage  Usage
		done   bool
		finish string
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
			usage = *ch.Usage
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
	return Completion{Text: text.String(), Usage: usage, FinishReason: finish}, 0, nil
}

// replyFilter cleans a streamed reply the way ParseResponse cleans a whole one, without ever
// taking back text it has passed on: it holds the start until a leading speaker label ("Bot:")
// can be recognised, holds a line start until it cannot be "User:" (a model continuing the
// dialogue on its own), and holds trailing whitespace. What it emits is the reply, exactly.
type replyFilter struct {
	emit    func(string)
	out     strings.Builder
	pending string
	partial string // the first bytes of a character split across pieces
	started bool
	stopped bool
	over    bool // the reply reached MaxReplyBytes and was cut there
	// firstLine stops the reply at its first newline (MSDP keeps the text before it).
	firstLine bool
}

const (
	labelWindow   = 24 // characters held at the start to recognise a speaker label
	lineStartHold = 8  // characters held after a newline to recognise "User:"
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
	if f.out.Len() == 0 {
		f.pending = ltrim(f.pending) // the reply starts at its first visible character
	}
	if f.firstLine {
		if i := strings.IndexByte(f.pending, '\n'); i >= 0 {
			f.send(rtrim(f.pending[:i]))
			f.pending, f.stopped = "", true
			return
		}
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

func (f *replyFilter) drain(final bool) {
	// Stop at a line that starts a user turn.
	for i := strings.IndexByte(f.pending, '\n'); i >= 0; {
		if userTurnRe.MatchString(f.pending[i+1:]) {
			f.send(rtrim(f.pending[:i]))
			f.stopped = true
			return
		}
		j := strings.IndexByte(f.pending[i+1:], '\n')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	cut := len(f.pending)
	if i := strings.LastIndexByte(f.pending, '\n'); !final && i >= 0 && len(f.pending)-i-1 < lineStartHold {
		cut = i
	}
	cut = len(rtrim(f.pending[:cut]))
	f.send(f.pending[:cut])
	f.pending = f.pending[cut:]
	if final {
		f.pending = ""
	}
}

func ltrim(s string) string { return strings.TrimLeftFunc(s, unicode.IsSpace) }
func rtrim(s string) string { return strings.TrimRightFunc(s, unicode.IsSpace) }

func (f *replyFilter) send(s string) {
	if s == "" {
		return
	}
	if f.out.Len()+len(s) > MaxReplyBytes {
		f.over, f.stopped = true, true
		return
	}
	f.out.WriteString(s)
	f.emit(s)
}
