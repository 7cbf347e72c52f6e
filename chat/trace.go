package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kairos-rag/kairos/rerank"
)

// StageTrace records one stage of one turn. A stage that made several LLM calls (one per
// passage or claim) has them summed; LLMTime is the sum of their durations, so for stages whose
// calls overlap it can exceed Duration.
type StageTrace struct {
	Stage    string          `json:"stage"`
	Start    time.Duration   `json:"start_ns"` // offset from the start of the turn
	Duration time.Duration   `json:"duration_ns"`
	LLMTime  time.Duration   `json:"llm_ns"`
	Calls    int             `json:"calls"`
	Usage    Usage           `json:"usage"`
	Output   json.RawMessage `json:"output,omitempty"` // the parsed result of the stage
	Errors   []string        `json:"errors,omitempty"` // unusable outputs that were skipped
}

// PassageRef is a passage a turn retrieved, for the trace and transcripts.
type PassageRef struct {
	// N is the number of the reply's inline marker ("[N]") bound to this passage, in a
	// turn's Citations; 0 for a passage the reply was built from without a marker (MSDP's
	// knowledge, a WikiChat reply whose LLM wrote no markers).
	N       int     `json:"n,omitempty"`
	ID      string  `json:"passage_id"`
	Title   string  `json:"title"`
	Section string  `json:"section,omitempty"`
	URL     string  `json:"url,omitempty"`
	Text    string  `json:"text"`
	Score   float64 `json:"score"`
	For     string  `json:"for"` // the query or claim it was retrieved for
	Stage   string  `json:"stage"`
	// Facts are the verified facts (summary bullets, supported claims) of this passage that
	// the draft was given under its number.
	Facts []string `json:"facts,omitempty"`
}

// Tracer collects the stages of one turn. Safe for concurrent stages.
type Tracer struct {
	start time.Time
	// onToken receives the reply as its gate decides it, sentence by sentence.
	onToken func(string)
	// maxReplyBytes bounds the reply (the gate's length budget); 0: MaxReplyBytes.
	maxReplyBytes int
	mu            sync.Mutex
	stages        []StageTrace
	passages      []PassageRef
	cited         []PassageRef
	// sources are the passages the draft prompt numbered, with the facts each carried.
	sources []citeSource
	// attr checks the turn's LLM text against its passages (grounded pipelines); nil else.
	attr *attributor
	// gate makes the reply (replyGate); created by the first stage that writes it.
	gate    *replyGate
	dropped []DroppedSentence
}

// NewTracer starts a trace at now.
func NewTracer() *Tracer { return &Tracer{start: time.Now()} }

// Stages returns the finished stages in completion order.
func (t *Tracer) Stages() []StageTrace {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]StageTrace(nil), t.stages...)
}

// Passages returns the passages retrieved so far.
func (t *Tracer) Passages() []PassageRef {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]PassageRef(nil), t.passages...)
}

// Dropped returns the sentences the attribution check and the reply's gate dropped.
func (t *Tracer) Dropped() []DroppedSentence {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]DroppedSentence(nil), t.dropped...)
}

func (t *Tracer) drop(d DroppedSentence) {
	t.mu.Lock()
	t.dropped = append(t.dropped, d)
	t.mu.Unlock()
}

// cite records passages the reply is built from without markers (MSDP's knowledge); a
// passage already cited is not repeated.
func (t *Tracer) cite(stage, forText string, hits []rerank.Hit) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, h := range hits {
		if slices.ContainsFunc(t.cited, func(p PassageRef) bool { return p.ID == h.ID }) {
			continue
		}
		t.cited = append(t.cited, PassageRef{ID: h.ID, Title: h.Title, Section: h.Section, URL: h.URL, Text: h.Text,
			Score: h.Score, For: forText, Stage: stage})
	}
}

// setSources records the passages the draft prompt numbered, for the citations' facts.
func (t *Tracer) setSources(srcs []citeSource) {
	t.mu.Lock()
	t.sources = srcs
	t.mu.Unlock()
}

// ground makes the turn grounded: every sentence of its reply is checked by attr.
func (t *Tracer) ground(attr *attributor) {
	t.mu.Lock()
	t.attr = attr
	t.mu.Unlock()
}

// replyGate returns the turn's reply gate, creating it on first use.
func (t *Tracer) replyGate() *replyGate {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.gate == nil {
		t.gate = newReplyGate(t.attr, t.maxReplyBytes, t.onToken, func(d DroppedSentence) {
			t.mu.Lock()
			t.dropped = append(t.dropped, d)
			t.mu.Unlock()
		})
	}
	return t.gate
}

// reply returns the turn's reply and its citations: the passages its markers name, numbered
// as the user reads them; without a marker, the passages it was built from, unnumbered.
func (t *Tracer) reply() (string, []PassageRef) {
	g := t.replyGate()
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(g.order) == 0 {
		return g.text(), append([]PassageRef(nil), t.cited...)
	}
	out := make([]PassageRef, 0, len(g.order))
	for i, p := range g.order {
		h := g.attr.passage(p)
		ref := PassageRef{N: i + 1, ID: h.ID, Title: h.Title, Section: h.Section, URL: h.URL, Text: h.Text, Score: h.Score}
		for _, s := range t.sources {
			if s.hit.ID == h.ID {
				ref.For, ref.Stage, ref.Facts = s.forQ, s.stage, s.facts
			}
		}
		if ref.Stage == "" {
			for _, r := range t.passages {
				if r.ID == h.ID {
					ref.For, ref.Stage = r.For, r.Stage
					break
				}
			}
		}
		out = append(out, ref)
	}
	return g.text(), out
}

// Usage sums token usage over all stages.
func (t *Tracer) Usage() Usage {
	var u Usage
	for _, s := range t.Stages() {
		u = u.Add(s.Usage)
	}
	return u
}

// stageRec measures one running stage.
type stageRec struct {
	t     *Tracer
	mu    sync.Mutex
	st    StageTrace
	begin time.Time
	idx   int // index in t.stages once ended, else -1
	// firstLine makes the stage's reply the text before the output's first newline (MSDP:
	// the prompts are separated by newlines, so what follows one is another turn).
	firstLine bool
}

// Stage starts recording a stage; call end when it finishes.
func (t *Tracer) stage(name string) *stageRec {
	now := time.Now()
	return &stageRec{t: t, begin: now, idx: -1, st: StageTrace{Stage: name, Start: now.Sub(t.start)}}
}

// complete calls the LLM on behalf of the stage, accounting its time and tokens. An output the
// server cut at the token limit is unusable: parsing it as if complete is how a reasoning cut
// at "supports the first half but" became a verdict. (A reply's cut is the reply gate's to
// handle: writeReply keeps its whole sentences.)
func (s *stageRec) complete(ctx context.Context, llm Completer, req CompletionRequest) (string, error) {
	out, err := s.call(ctx, llm, req, nil)
	if err == nil && out.Truncated() {
		return "", errTruncated(out)
	}
	return out.Text, err
}

// call makes the stage's LLM call, streamed into onDelta when it is given and the LLM can
// stream, and accounts its time and tokens.
func (s *stageRec) call(ctx context.Context, llm Completer, req CompletionRequest, onDelta func(string)) (Completion, error) {
	req.Stage = s.st.Stage
	start := time.Now()
	var out Completion
	var err error
	if st, ok := llm.(Streamer); ok && onDelta != nil {
		out, err = st.Stream(ctx, req, onDelta)
	} else {
		out, err = llm.Complete(ctx, req)
		if err == nil && onDelta != nil {
			onDelta(out.Text)
		}
	}
	d := time.Since(start)
	s.mu.Lock()
	s.st.LLMTime += d
	s.st.Calls++
	s.st.Usage = s.st.Usage.Add(out.Usage)
	s.mu.Unlock()
	return out, err
}

// errTruncated is the unusable-output error of a completion cut off (Completion.Truncated).
func errTruncated(out Completion) error {
	return fmt.Errorf("%w: output cut off (finish_reason %s): %q", ErrUnusable, out.FinishReason, truncate(out.Text, 200))
}

// writeReply makes the stage's LLM call and writes its text into g, which decides the reply
// sentence by sentence (replyGate): streamed as the LLM writes it when g sends to a client and
// the LLM streams, else whole; either way read for its content (contentReader: a preamble, a
// stage's format lines, a closing offer and a user turn are no reply) and, revision set,
// through a revisionGate (only the text after the refinement's "Revised response:" label is).
// An output cut at the token limit keeps its whole sentences. It returns the completion, whose
// text is the LLM's whole output.
func (s *stageRec) writeReply(ctx context.Context, llm Completer, req CompletionRequest, g *replyGate, revision bool) (Completion, error) {
	var gerr error
	r := newContentReader(replyLabel, s.firstLine)
	r.emit = func(p string) {
		if gerr == nil {
			gerr = g.writeSentences(ctx, s.st.Stage, p)
		}
	}
	write := r.write
	var rg *revisionGate
	if revision {
		rg = &revisionGate{next: r.write}
		write = rg.write
	}
	var onDelta func(string)
	if g.emit != nil {
		onDelta = write // a client waits: the output is read as it streams
	}
	out, err := s.call(ctx, llm, req, onDelta)
	if err != nil {
		return out, err
	}
	if onDelta == nil {
		write(out.Text)
	}
	if rg != nil && !rg.flush() {
		s.softError(unusable("revised response (a Revised response line, or a reply without feedback lines)", out.Text))
	}
	if rg != nil && len(revisedLineRe.FindAllStringIndex(out.Text, 2)) > 1 {
		s.softError(fmt.Errorf("%w: several Revised response lines, each sentence after the first checked as the reply's", ErrUnusable))
	}
	if _, err := r.finish(out.Truncated()); err != nil {
		s.softError(err)
	}
	if len(r.dropped) > 0 {
		s.softError(fmt.Errorf("%w: not the reply's content, left out: %q", ErrUnusable, r.dropped))
	}
	return out, gerr
}

// revisionGate holds a refinement until its "Revised response:" label line is complete, then
// passes on what follows the label.
type revisionGate struct {
	raw  strings.Builder
	open bool
	next func(string)
}

func (g *revisionGate) write(s string) {
	if g.open {
		g.next(s)
		return
	}
	g.raw.WriteString(s)
	t := g.raw.String()
	// The label is complete once something follows its colon (and the markdown after it).
	loc := revisedLineRe.FindStringIndex(t)
	if loc == nil || loc[1] == len(t) {
		return
	}
	g.open = true
	g.next(t[loc[1]:])
}

// flush ends the refinement. Without a label, an output that gives no feedback (no stage's
// format line: the model answered with its revision alone) is the revision; one that gave
// feedback and no revision has none, and flush reports false.
func (g *revisionGate) flush() bool {
	if g.open {
		return true
	}
	t := g.raw.String()
	if _, feedback := stageFormatLine(t); feedback || strings.TrimSpace(t) == "" {
		return false
	}
	g.open = true
	g.next(t)
	return true
}

// softError records an unusable output the stage chose to skip. It may come after end (a
// stage ended with its fallback output, then noted why), so it then updates the stored stage.
func (s *stageRec) softError(err error) {
	s.mu.Lock()
	s.st.Errors = append(s.st.Errors, err.Error())
	idx := s.idx
	s.mu.Unlock()
	if idx >= 0 {
		s.t.mu.Lock()
		s.t.stages[idx].Errors = append(s.t.stages[idx].Errors, err.Error())
		s.t.mu.Unlock()
	}
}

func (s *stageRec) passages(stage, forText string, hits []rerank.Hit) {
	refs := make([]PassageRef, len(hits))
	for i, h := range hits {
		refs[i] = PassageRef{ID: h.ID, Title: h.Title, Text: h.Text, Score: h.Score, For: forText, Stage: stage}
	}
	s.t.mu.Lock()
	s.t.passages = append(s.t.passages, refs...)
	s.t.mu.Unlock()
}

// end finishes the stage with its parsed output (any JSON-marshalable value, or nil).
func (s *stageRec) end(output any) {
	s.mu.Lock()
	s.st.Duration = time.Since(s.begin)
	if output != nil {
		if b, err := json.Marshal(output); err == nil {
			s.st.Output = b
		}
	}
	st := s.st
	st.Errors = append([]string(nil), s.st.Errors...)
	s.t.mu.Lock()
	s.idx = len(s.t.stages)
	s.t.stages = append(s.t.stages, st)
	s.t.mu.Unlock()
	s.mu.Unlock()
}
