package chat

import (
	"context"
	"fmt"
	"strings"
)

// S-ICL prompt approaches (Jang et al. 2023): no samples, one fixed sample, the most similar
// sample, the three most similar samples.
const (
	SICLNone  = "none"
	SICLFixed = "fixed"
	SICLTop1  = "top1"
	SICLTop3  = "top3"
)

// SICLOptions are the knobs of the sicl pipeline.
type SICLOptions struct {
	Approach     string // none, fixed, top1 or top3 (default)
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
	case SICLNone, SICLFixed, SICLTop1, SICLTop3:
	default:
		return nil, fmt.Errorf("sicl: approach %q (want none, fixed, top1 or top3)", opts.Approach)
	}
	needBank := opts.Approach != SICLNone
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

// Respond selects samples per the approach and asks for the next turn.
func (s *SICL) Respond(ctx context.Context, conv *Conversation, message string, tr *Tracer) (string, error) {
	hist := conv.history(s.opts.HistoryTurns)
	rec := tr.stage(StageSICLSelect)
	sel, err := s.selectSamples(ctx, conv, turnsText(hist, message))
	rec.end(map[string]any{"approach": s.opts.Approach, "samples": sel})
	if err != nil {
		return "", err
	}
	d := PromptData{Today: s.d.today(), History: hist, Message: message}
	for _, sc := range sel {
		e := s.d.Bank.Examples[sc.Index]
		d.Examples = append(d.Examples, PromptExample{Topic: e.Topic, Response: e.Response, Context: exampleTurns(e.History, s.opts.ContextTurns)})
	}
	rec = tr.stage(StageSICL)
	resp, err := finalReply(ctx, &s.d, rec, PromptSICL, d)
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
	if s.opts.Approach == SICLTop1 {
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
