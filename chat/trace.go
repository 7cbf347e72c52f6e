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
	// onToken receives the final reply as it streams, when the pipeline's last stage can
	// stream it.
	onToken  func(string)
	mu       sync.Mutex
	stages   []StageTrace
	passages []PassageRef
	cited    []PassageRef
	// sources are the passages the draft prompt numbered, for binding the reply's markers.
	sources []citeSource
	// sent is the reply text onToken received, markers already bound.
	sent strings.Builder
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

// Citations returns the passages the reply was built from, each once, in the order cited.
func (t *Tracer) Citations() []PassageRef {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]PassageRef(nil), t.cited...)
}

// cite records passages the reply is built from; a passage already cited is not repeated.
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

// setSources records the passages the draft prompt numbered; the reply's markers bind to them.
func (t *Tracer) setSources(srcs []citeSource) {
	t.mu.Lock()
	t.sources = srcs
	t.mu.Unlock()
}

// bind rewrites the reply's citation markers (citer.rewrite) and returns the reply with the
// turn's citations: the passages its markers name, numbered as they first appear; without a
// marker, the passages the reply was built from, unnumbered.
func (t *Tracer) bind(reply string) (string, []PassageRef) {
	t.mu.Lock()
	srcs := t.sources
	t.mu.Unlock()
	c := newCiter(len(srcs))
	reply = c.rewrite(reply)
	if len(c.order) > 0 {
		return reply, c.citations(srcs)
	}
	cited := t.Citations()
	for _, s := range srcs {
		if !slices.ContainsFunc(cited, func(p PassageRef) bool { return p.ID == s.hit.ID }) {
			cited = append(cited, PassageRef{ID: s.hit.ID, Title: s.hit.Title, Section: s.hit.Section, URL: s.hit.URL,
				Text: s.hit.Text, Score: s.hit.Score, For: s.forQ, Stage: s.stage, Facts: s.facts})
		}
	}
	return reply, cited
}

// tokenSink returns where a streaming stage sends the reply: onToken, through a markerStream
// bound to the sources, recording what was sent. The returned flush ends the stream.
func (t *Tracer) tokenSink() (write func(string), flush func()) {
	t.mu.Lock()
	n := len(t.sources)
	t.mu.Unlock()
	m := &markerStream{c: newCiter(n), emit: func(s string) {
		t.mu.Lock()
		t.sent.WriteString(s)
		t.mu.Unlock()
		t.onToken(s)
	}}
	return m.write, m.flush
}

// sentText returns the reply text streamed so far.
func (t *Tracer) sentText() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sent.String()
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
	// wholeSentences makes an output cut at the token limit the complete sentences before the
	// cut, where there is one, instead of unusable: for a response whose length the paper caps
	// (the commonsense pipeline's 100 tokens), the cap is the design, and the cut sentence is
	// all it costs. A verdict, list or plan cut short stays unusable.
	wholeSentences bool
}

// Stage starts recording a stage; call end when it finishes.
func (t *Tracer) stage(name string) *stageRec {
	now := time.Now()
	return &stageRec{t: t, begin: now, idx: -1, st: StageTrace{Stage: name, Start: now.Sub(t.start)}}
}

// complete calls the LLM on behalf of the stage, accounting its time and tokens. An output the
// server cut at the token limit is unusable: parsing it as if complete is how a reasoning cut
// at "supports the first half but" became a verdict.
func (s *stageRec) complete(ctx context.Context, llm Completer, req CompletionRequest) (string, error) {
	req.Stage = s.st.Stage
	start := time.Now()
	out, err := llm.Complete(ctx, req)
	d := time.Since(start)
	s.mu.Lock()
	s.st.LLMTime += d
	s.st.Calls++
	s.st.Usage = s.st.Usage.Add(out.Usage)
	s.mu.Unlock()
	if err == nil && out.Truncated() {
		if kept := s.keepSentences(out); kept != "" {
			return kept, nil
		}
		return "", errTruncated(out)
	}
	return out.Text, err
}

// keepSentences returns, for a wholeSentences stage, the complete sentences of a truncated
// output (noting the cut in the trace), else "".
func (s *stageRec) keepSentences(out Completion) string {
	if !s.wholeSentences {
		return ""
	}
	kept := completeSentences(out.Text)
	if kept != "" {
		s.softError(fmt.Errorf("%w: output cut off (finish_reason %s), its complete sentences kept: %q dropped",
			ErrUnusable, out.FinishReason, truncate(strings.TrimSpace(out.Text[len(kept):]), 200)))
	}
	return kept
}

// errTruncated is the unusable-output error of a completion cut off (Completion.Truncated).
func errTruncated(out Completion) error {
	return fmt.Errorf("%w: output cut off (finish_reason %s): %q", ErrUnusable, out.FinishReason, truncate(out.Text, 200))
}

// completeReply is complete for a stage whose output is the turn's final reply. With a token
// sink and a streaming LLM the reply streams through a replyFilter, and the filter's output is
// the reply, so what was streamed and what is returned are the same text.
func (s *stageRec) completeReply(ctx context.Context, llm Completer, req CompletionRequest) (string, error) {
	st, ok := llm.(Streamer)
	if !ok || s.t.onToken == nil {
		out, err := s.complete(ctx, llm, req)
		if err != nil {
			return "", err
		}
		if s.firstLine {
			out = firstLine(out)
		}
		return ParseResponse(out)
	}
	f, out, err := s.stream(ctx, st, req, false)
	if err != nil {
		return "", err
	}
	if f.out.Len() == 0 && f.formatLine == "" {
		return "", unusable("reply text", out.Text)
	}
	// What was streamed cannot be taken back, but a reply cut at the token limit, cut at
	// MaxReplyBytes, or carrying a stage's format is not the turn's reply: the pipeline's
	// fallback is, and it is what the turn returns and stores (and the Service tells the
	// client that it replaces what streamed).
	text := f.out.String()
	if out.Truncated() {
		// What streamed past the last whole sentence is replaced (the Service says so).
		if text = s.keepSentences(Completion{Text: text, FinishReason: out.FinishReason}); text == "" {
			return "", fmt.Errorf("%w (withdrawn after streaming)", errTruncated(out))
		}
	}
	if f.over {
		return "", fmt.Errorf("%w: streamed reply over %d bytes (withdrawn after streaming)", ErrUnusable, MaxReplyBytes)
	}
	if f.formatLine != "" {
		return "", fmt.Errorf("%w (withdrawn after streaming)", errStageFormat(f.formatLine))
	}
	if l, bad := stageFormatLine(text); bad {
		return "", fmt.Errorf("%w (withdrawn after streaming)", errStageFormat(l))
	}
	return text, nil
}

// completeRefinement is complete for a refinement that is the turn's last stage: with a token
// sink and a streaming LLM, the text after its "Revised response:" label streams as the reply
// (through a replyFilter, so feedback lines after it are never shown), and the whole output is
// then parsed as it would be unstreamed. ParseRefinement's result is the reply; where it
// differs from what streamed, the Service announces the replacement.
func (s *stageRec) completeRefinement(ctx context.Context, llm Completer, req CompletionRequest) (Refinement, error) {
	st, ok := llm.(Streamer)
	if !ok || s.t.onToken == nil {
		out, err := s.complete(ctx, llm, req)
		if err != nil {
			return Refinement{}, err
		}
		return ParseRefinement(out)
	}
	_, out, err := s.stream(ctx, st, req, true)
	if err != nil {
		return Refinement{}, err
	}
	if out.Truncated() {
		return Refinement{}, fmt.Errorf("%w (withdrawn after streaming)", errTruncated(out))
	}
	return ParseRefinement(out.Text)
}

// stream runs one streamed LLM call of the stage into the tracer's token sink through a
// replyFilter; gated, only the text after a "Revised response:" label reaches the filter.
func (s *stageRec) stream(ctx context.Context, st Streamer, req CompletionRequest, gated bool) (*replyFilter, Completion, error) {
	sink, flush := s.t.tokenSink()
	f := &replyFilter{emit: sink, firstLine: s.firstLine}
	write := f.write
	if gated {
		write = (&revisionGate{next: f.write}).write
	}
	start := time.Now()
	req.Stage = s.st.Stage
	out, err := st.Stream(ctx, req, write)
	f.flush()
	flush()
	d := time.Since(start)
	s.mu.Lock()
	s.st.LLMTime += d
	s.st.Calls++
	s.st.Usage = s.st.Usage.Add(out.Usage)
	s.mu.Unlock()
	return f, out, err
}

// revisionGate holds a streamed refinement until its "Revised response:" label line is
// complete, then passes on what follows the label.
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

// firstLine returns s up to its first newline, leading blank lines skipped.
func firstLine(s string) string {
	s = strings.TrimLeft(s, " \t\r\n")
	line, _, _ := strings.Cut(s, "\n")
	return line
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
