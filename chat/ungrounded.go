package chat

import (
	"context"
	"errors"
	"fmt"
)

// ungroundedReply runs the last stage of mpc, msdp and sicl and reads its output for its
// content (contentReader, with the labels of a reply): streamed to the tracer's token sink
// sentence by sentence when the turn streams, so what the user saw is the reply. An output
// with no content, over MaxReplyBytes, or cut at the token limit before its first sentence
// ended is a trace note and DefaultNoReply, not a failed turn; a cut output keeps its whole
// sentences. firstLine keeps the first line of the content (MSDP).
func ungroundedReply(ctx context.Context, d *Deps, rec *stageRec, prompt string, data PromptData, firstLine bool) (string, error) {
	msgs, err := d.Templates.Render(prompt, data)
	if err != nil {
		return "", err
	}
	r := newContentReader(replyLabel, firstLine)
	llm := &rawCompleter{next: d.LLM}
	if st, ok := d.LLM.(Streamer); ok && rec.t.onToken != nil {
		sink, flush := rec.t.tokenSink()
		defer flush()
		r.emit = sink
		llm.stream, llm.onDelta = st, r.write
	}
	_, err = rec.complete(ctx, llm, d.request(prompt, msgs))
	out := llm.out
	if err != nil && !(out.Truncated() && errors.Is(err, ErrUnusable)) {
		return "", fmt.Errorf("stage %s: %w", rec.st.Stage, err)
	}
	if llm.stream == nil {
		r.write(out.Text)
	}
	reply, err := r.finish(out.Truncated())
	if len(r.dropped) > 0 {
		rec.softError(fmt.Errorf("not content, left out of the reply: %q", r.dropped))
	}
	if err != nil {
		rec.softError(fmt.Errorf("stage %s: %w", rec.st.Stage, err))
		return DefaultNoReply, nil
	}
	return reply, nil
}

// rawCompleter hands the stage the LLM's output as it came, streamed through onDelta when
// stream is set, and keeps the whole completion (its finish reason included) for the caller.
type rawCompleter struct {
	next    Completer
	stream  Streamer
	onDelta func(string)
	out     Completion
}

func (c *rawCompleter) Complete(ctx context.Context, req CompletionRequest) (Completion, error) {
	var err error
	if c.stream != nil {
		c.out, err = c.stream.Stream(ctx, req, c.onDelta)
	} else {
		c.out, err = c.next.Complete(ctx, req)
	}
	return c.out, err
}

// contentOf returns a labelled stage's value read for its content (a closing offer or a grade
// on the value's lines left out), or the value as parsed when nothing is left.
func contentOf(value string) string {
	if c, _, err := readContent(value, nil, false); err == nil {
		return c
	}
	return value
}

// parseLabeledContent reads a stage's "Label: value" output as ParseLabeled does, from the
// output as written or, failing that, from its content (a generic model's preamble, quotes or
// another label around the value left out); labels are the labels that may stand for label.
func parseLabeledContent(out, label string, labels func(string) bool) (string, error) {
	v, err := ParseLabeled(out, label)
	if err == nil {
		return contentOf(v), nil
	}
	c, _, cerr := readContent(out, labels, false)
	if cerr != nil {
		return "", err
	}
	if v, err2 := ParseLabeled(c, label); err2 == nil {
		return v, nil
	}
	return "", err
}

// parseClarified reads MPC's clarifier output.
func parseClarified(out string) (string, error) {
	return parseLabeledContent(out, "clarified", clarifiedLabel)
}

// parseMemory reads MPC's memory processor output: its "Memory:" line, after the reasoning.
func parseMemory(out string) (string, error) {
	return parseLabeledContent(out, "memory", func(l string) bool { return lastWordIn(l, "memory") })
}

// parseKnowledgeContent reads MSDP's knowledge output: the first line of its content, then as
// ParseKnowledge reads it.
func parseKnowledgeContent(out string) (string, error) {
	c, _, err := readContent(out, knowledgeLabel, true)
	if err != nil {
		return ParseKnowledge(out)
	}
	return ParseKnowledge(c)
}
