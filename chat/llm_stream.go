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

// roleMarkerLineRe is a role marker or an untrusted-data delimiter: what follows is another
// message, never the reply.
var roleMarkerLineRe = regexp.MustCompile(`(?i)^\s*(?:=+\s*(?:system|user|assistant)\s*=+|<<<UNTRUSTED|END UNTRUSTED>>>)`)

func ltrim(s string) string { return strings.TrimLeftFunc(s, unicode.IsSpace) }
func rtrim(s string) string { return strings.TrimRightFunc(s, unicode.IsSpace) }
