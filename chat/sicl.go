package chat

import (
	"context"
	"fmt"
	"strings"
)

// S-ICL approaches (Omidvar and An 2023, section 3.2), in the paper's order: (1) semantic search
// alone, the most similar sample's answer with no LLM call; (2) no samples; (3) one fixed sample;
// (4) the three most similar samples; (5) the most similar sample.
const (
	SICLSearch = "search"
	SICLNone   = "none"
	SICLFixed  = "fixed"
	SICLTop3   = "top3"
	SICLTop1   = "top1"
)

// siclCommand is the paper's command for n samples, with "the bot" for its "the teacher" (the
// speaker Kairos's dialogues use).
func siclCommand(n int) string {
	switch n {
	case 0:
		return "Complete the following conversation by giving an appropriate answer by the bot."
	case 1:
		return "Find the appropriate answer by the bot from sample 1 to complete the conversation 1."
	}
	samples := make([]string, n)
	for i := range samples {
		samples[i] = fmt.Sprintf("sample %d", i+1)
	}
	return "Find the appropriate answer by the bot from " + strings.Join(samples[:n-1], ", ") + " and " + samples[n-1] +
		" to complete the conversation 1."
}

// SICLOptions are the knobs of the sicl pipeline.
type SICLOptions struct {
	Approach     string // search, none, fixed, top1 or top3 (default)
	FixedExample int    // bank index of the fixed sample; default 0
	HistoryTurns int    // earlier turns embedded and shown; default 3
	// ContextTurns is how many turns of a bank example's history its sample shows; default 4.
	ContextTurns int
}

func (o *SICLOptions) setDefaults() {
	if o.Approach == "" {
		o.Approach = SICLTop3
	}
	if o.HistoryTurns == 0 {
		o.HistoryTurns = 3
	}
	if o.ContextTurns == 0 {
		o.ContextTurns = 4
	}
}

// SICL is semantic in-context learning: the prompt is a command, samples retrieved from a
// private example bank by similarity to the dialogue context, and the inquiry.
type SICL struct {
	d    Deps
	opts SICLOptions
}

var _ Pipeline = (*SICL)(nil)

// NewSICL validates deps and options.
func NewSICL(d Deps, opts SICLOptions) (*SICL, error) {
	opts.setDefaults()
	switch opts.Approach {
	case SICLSearch, SICLNone, SICLFixed, SICLTop1, SICLTop3:
	default:
		return nil, fmt.Errorf("sicl: approach %q (want search, none, fixed, top1 or top3)", opts.Approach)
	}
	needBank := opts.Approach != SICLNone
	needLLM := opts.Approach != SICLSearch
	if !needLLM && d.LLM == nil {
		d.LLM = noLLM{} // approach 1 never calls it; check wants one
	}
	if !needLLM && d.Templates == nil {
		d.Templates = &Templates{}
	}
	if err := d.check("sicl", false, needBank && opts.Approach != SICLFixed, needBank); err != nil {
		return nil, err
	}
	if opts.Approach == SICLFixed && (opts.FixedExample < 0 || opts.FixedExample >= len(d.Bank.Examples)) {
		return nil, fmt.Errorf("sicl: fixed example %d outside the bank's %d", opts.FixedExample, len(d.Bank.Examples))
	}
	return &SICL{d: d, opts: opts}, nil
}

// Name is "sicl".
func (s *SICL) Name() string { return "sicl" }

// Grounded is false: the reply is not checked against retrieved passages.
func (*SICL) Grounded() bool { return false }

// Respond selects samples per the approach and asks for the next turn.
func (s *SICL) Respond(ctx context.Context, conv *Conversation, message string, tr *Tracer) (string, error) {
	hist := conv.history(s.opts.HistoryTurns)
	rec := tr.stage(StageSICLSelect)
	sel, err := s.selectSamples(ctx, conv, turnsText(hist, message))
	rec.end(map[string]any{"approach": s.opts.Approach, "samples": sel})
	if err != nil {
		return "", err
	}
	if s.opts.Approach == SICLSearch {
		// Approach 1: the answer of the most similar sample is the reply.
		if len(sel) == 0 {
			return DefaultNoReply, nil
		}
		return cleanResponse(s.d.Bank.Examples[sel[0].Index].Response), nil
	}
	d := PromptData{Today: s.d.today(), History: hist, Message: message, Command: siclCommand(len(sel))}
	for _, sc := range sel {
		e := s.d.Bank.Examples[sc.Index]
		d.Examples = append(d.Examples, PromptExample{Topic: e.Topic, Response: e.Response, Context: exampleTurns(e.History, s.opts.ContextTurns)})
	}
	rec = tr.stage(StageSICL)
	resp, err := ungroundedReply(ctx, &s.d, rec, PromptSICL, d, false)
	rec.end(resp)
	return resp, err
}

func (s *SICL) selectSamples(ctx context.Context, conv *Conversation, turns []string) ([]Scored, error) {
	switch s.opts.Approach {
	case SICLNone:
		return nil, nil
	case SICLFixed:
		i := s.opts.FixedExample
		return []Scored{{Index: i, ID: s.d.Bank.Examples[i].ID}}, nil
	}
	vecs, err := s.d.Encoder.Encode(ctx, []string{ContextText(conv.Topic, turns)})
	if err != nil {
		return nil, fmt.Errorf("sicl: encoding the context: %w", err)
	}
	n := 3
	if s.opts.Approach == SICLTop1 || s.opts.Approach == SICLSearch {
		n = 1
	}
	return s.d.Bank.TopN(vecs[0], n, nil)
}

// exampleTurns labels an example's history with alternating speakers ending on "User", since
// the response that follows it is the bot's.
func exampleTurns(history []string, n int) []PromptTurn {
	if len(history) > n {
		history = history[len(history)-n:]
	}
	out := make([]PromptTurn, len(history))
	for i, h := range history {
		speaker := "User"
		if (len(history)-1-i)%2 == 1 {
			speaker = "Bot"
		}
		out[i] = PromptTurn{Speaker: speaker, Text: strings.TrimSpace(h)}
	}
	return out
}

// noLLM stands in for the LLM of a pipeline that never calls one.
type noLLM struct{}

func (noLLM) Complete(context.Context, CompletionRequest) (Completion, error) {
	return Completion{}, fmt.Errorf("sicl: approach %s makes no LLM call", SICLSearch)
}
