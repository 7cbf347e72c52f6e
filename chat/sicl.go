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
	// ContextBytes bounds the inquiry, the whole dialogue (section 2.5: the last utterance
	// with the previous ones) as the prompt shows it; default DefaultSICLContextBytes. Past
	// it the oldest utterances are left out, and the trace says how many.
	ContextBytes int
	// SampleBytes bounds each sample, a bank example's dialogue and answer; default
	// DefaultSICLSampleBytes. Past it the example's oldest utterances are left out.
	SampleBytes int
	// SearchBytes bounds the dialogue text embedded to find the samples (section 2.4: the
	// concatenation of the utterances); default DefaultSICLSearchBytes. Past it the oldest
	// utterances are left out.
	SearchBytes int
}

// The byte budgets of the sicl prompt. The paper's LLM, gpt-3.5-turbo, read 4,096 tokens in
// 2023; the client's default reply of DefaultMaxTokens (512) leaves 3,584 for the prompt, about
// 14 KiB of English at OpenAI's rule of thumb of four bytes a token. The inquiry's 8 KiB, three
// samples of 1 KiB and the command (about 250 bytes) come to about 11.5 KiB, some 2,900 tokens,
// which leaves a fifth of the window for text that tokenizes more densely. The Service admits
// messages of up to 8 KiB, so a message that long is shown alone. The search text stays within
// the encoders Kairos runs: all-MiniLM-L6-v2 reads 256 word pieces, about 1 KiB of English, and
// cuts the rest from the end, which would drop the newest utterances, not the oldest.
const (
	DefaultSICLContextBytes = 8 << 10
	DefaultSICLSampleBytes  = 1 << 10
	DefaultSICLSearchBytes  = 1 << 10
)

func (o *SICLOptions) setDefaults() {
	if o.Approach == "" {
		o.Approach = SICLTop3
	}
	if o.ContextBytes == 0 {
		o.ContextBytes = DefaultSICLContextBytes
	}
	if o.SampleBytes == 0 {
		o.SampleBytes = DefaultSICLSampleBytes
	}
	if o.SearchBytes == 0 {
		o.SearchBytes = DefaultSICLSearchBytes
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
	if opts.ContextBytes < 0 || opts.SampleBytes < 0 || opts.SearchBytes < 0 {
		return nil, fmt.Errorf("sicl: SICLOptions ContextBytes, SampleBytes and SearchBytes must not be negative (0 takes the default)")
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

// siclSelection is the trace of the selection stage: the samples, and how much of the
// dialogue the prompt and the search saw.
type siclSelection struct {
	Approach string       `json:"approach"`
	Samples  []Scored     `json:"samples"`
	Context  budgetReport `json:"context"`
	Search   budgetReport `json:"search"`
	// SampleCut is how many of each sample's oldest utterances its budget left out.
	SampleCut []int `json:"sample_cut,omitempty"`
}

// budgetReport says how much of a dialogue a byte budget let through: the utterances shown
// (the message included), the oldest ones cut, and the turns the conversation store had
// already dropped.
type budgetReport struct {
	Utterances int `json:"utterances"`
	Cut        int `json:"cut_oldest"`
	Bytes      int `json:"bytes"`
	Budget     int `json:"budget"`
	StoreDrops int `json:"store_dropped_turns,omitempty"`
}

// Respond selects samples per the approach and asks for the next turn. The inquiry is the
// whole dialogue the conversation holds, within ContextBytes (section 2.5).
func (s *SICL) Respond(ctx context.Context, conv *Conversation, message string, tr *Tracer) (string, error) {
	hist := conv.history(0)
	shown, msg, cut := fitUtterances(hist, message, s.opts.ContextBytes)
	sel := siclSelection{Approach: s.opts.Approach,
		Context: budgetReport{Utterances: len(shown) + 1, Cut: cut, Bytes: utterancesBytes(shown, msg), Budget: s.opts.ContextBytes, StoreDrops: conv.Dropped}}
	rec := tr.stage(StageSICLSelect)
	var err error
	sel.Samples, sel.Search, err = s.selectSamples(ctx, conv, hist, message)
	sel.Search.StoreDrops = conv.Dropped
	if err != nil {
		rec.end(sel)
		return "", err
	}
	if s.opts.Approach == SICLSearch {
		rec.end(sel)
		// Approach 1: the answer of the most similar sample is the reply.
		if len(sel.Samples) == 0 {
			return DefaultNoReply, nil
		}
		return cleanResponse(s.d.Bank.Examples[sel.Samples[0].Index].Response), nil
	}
	d := PromptData{Today: s.d.today(), History: shown, Message: msg, Command: siclCommand(len(sel.Samples))}
	for _, sc := range sel.Samples {
		e := s.d.Bank.Examples[sc.Index]
		turns, cut := sampleTurns(e.History, e.Response, s.opts.SampleBytes)
		sel.SampleCut = append(sel.SampleCut, cut)
		d.Examples = append(d.Examples, PromptExample{Topic: e.Topic, Response: e.Response, Context: turns})
	}
	rec.end(sel)
	rec = tr.stage(StageSICL)
	resp, err := finalReply(ctx, &s.d, rec, PromptSICL, d)
	rec.end(resp)
	return resp, err
}

func (s *SICL) selectSamples(ctx context.Context, conv *Conversation, hist []PromptTurn, message string) ([]Scored, budgetReport, error) {
	switch s.opts.Approach {
	case SICLNone:
		return nil, budgetReport{}, nil
	case SICLFixed:
		i := s.opts.FixedExample
		return []Scored{{Index: i, ID: s.d.Bank.Examples[i].ID}}, budgetReport{}, nil
	}
	shown, msg, cut := fitUtterances(hist, message, s.opts.SearchBytes)
	rep := budgetReport{Utterances: len(shown) + 1, Cut: cut, Bytes: utterancesBytes(shown, msg), Budget: s.opts.SearchBytes}
	vecs, err := s.d.Encoder.Encode(ctx, []string{ContextText(conv.Topic, turnsText(shown, msg))})
	if err != nil {
		return nil, rep, fmt.Errorf("sicl: encoding the context: %w", err)
	}
	n := 3
	if s.opts.Approach == SICLTop1 || s.opts.Approach == SICLSearch {
		n = 1
	}
	top, err := s.d.Bank.TopN(vecs[0], n, nil)
	return top, rep, err
}

// utteranceBytes is what one utterance costs in the prompt: "Speaker: text" and its newline.
func utteranceBytes(t PromptTurn) int { return len(t.Speaker) + len(": \n") + len(oneLine(t.Text)) }

func utterancesBytes(turns []PromptTurn, message string) int {
	n := utteranceBytes(PromptTurn{"User", message})
	for _, t := range turns {
		n += utteranceBytes(t)
	}
	return n
}

// fitUtterances keeps the newest earlier utterances that fit budget beside the message, which
// is always shown (clipped to the budget if it alone exceeds it), and says how many of the
// oldest it cut.
func fitUtterances(turns []PromptTurn, message string, budget int) (kept []PromptTurn, msg string, cut int) {
	msg = oneLine(message)
	if over := utteranceBytes(PromptTurn{"User", msg}) - budget; over > 0 {
		msg = clip(msg, max(len("…"), len(msg)-over))
	}
	left := budget - utteranceBytes(PromptTurn{"User", msg})
	i := len(turns)
	for i > 0 && utteranceBytes(turns[i-1]) <= left {
		left -= utteranceBytes(turns[i-1])
		i--
	}
	return turns[i:], msg, i
}

// sampleTurns is a bank example's dialogue as its sample shows it: every utterance, labelled
// by speaker (exampleTurns), the oldest left out past budget beside the answer.
func sampleTurns(history []string, response string, budget int) ([]PromptTurn, int) {
	turns := exampleTurns(history)
	left := budget - utteranceBytes(PromptTurn{"Bot", response})
	i := len(turns)
	for i > 0 && utteranceBytes(turns[i-1]) <= left {
		left -= utteranceBytes(turns[i-1])
		i--
	}
	return turns[i:], i
}

// exampleTurns labels an example's history with alternating speakers ending on "User", since
// the response that follows it is the bot's.
func exampleTurns(history []string) []PromptTurn {
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
