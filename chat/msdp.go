package chat

import (
	"context"
	"fmt"
	"strings"

	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/search"
)

// MSDPOptions are the knobs of the msdp pipeline.
type MSDPOptions struct {
	KnowledgeExamples int // examples in the knowledge prompt; default 10
	ResponseExamples  int // examples in the response prompt; default 6
	// OverlapMin and OverlapMax bound the word-overlap ratio between an example's response and
	// its knowledge for the example to teach "use the knowledge, but do not copy it";
	// defaults 0.6 and 0.9.
	OverlapMin, OverlapMax float64
	// Knowledge is "generate" (default: the knowledge prompt) or "retrieve" (the top passage).
	Knowledge    string
	HistoryTurns int // earlier turns embedded with the context; default 2
}

func (o *MSDPOptions) setDefaults() {
	if o.KnowledgeExamples == 0 {
		o.KnowledgeExamples = 10
	}
	if o.ResponseExamples == 0 {
		o.ResponseExamples = 6
	}
	if o.OverlapMin == 0 && o.OverlapMax == 0 {
		o.OverlapMin, o.OverlapMax = 0.6, 0.9
	}
	if o.Knowledge == "" {
		o.Knowledge = "generate"
	}
	if o.HistoryTurns == 0 {
		o.HistoryTurns = 2
	}
}

func (o *MSDPOptions) validate() error {
	if o.KnowledgeExamples < 0 || o.ResponseExamples < 0 {
		return fmt.Errorf("msdp: example counts must not be negative")
	}
	if o.OverlapMin < 0 || o.OverlapMax > 1 || o.OverlapMin > o.OverlapMax {
		return fmt.Errorf("msdp: overlap range [%v, %v] is not within [0, 1]", o.OverlapMin, o.OverlapMax)
	}
	if o.Knowledge != "generate" && o.Knowledge != "retrieve" {
		return fmt.Errorf("msdp: knowledge %q (want generate or retrieve)", o.Knowledge)
	}
	return nil
}

// MSDP is multi-stage dialogue prompting (Liu et al. 2022): a knowledge prompt from the most
// similar bank examples, then a response prompt from examples whose responses use their
// knowledge to a moderate degree.
type MSDP struct {
	d    Deps
	opts MSDPOptions
}

var _ Pipeline = (*MSDP)(nil)

// NewMSDP validates deps and options. A Retriever is optional (topic and "retrieve" knowledge).
func NewMSDP(d Deps, opts MSDPOptions) (*MSDP, error) {
	opts.setDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if err := d.check("msdp", opts.Knowledge == "retrieve", true, true); err != nil {
		return nil, err
	}
	return &MSDP{d: d, opts: opts}, nil
}

// Name is "msdp".
func (m *MSDP) Name() string { return "msdp" }

// OverlapRatio is the share of the response's distinct words that also occur in the knowledge.
func OverlapRatio(response, knowledge string) float64 {
	rw := Words(response)
	if len(rw) == 0 {
		return 0
	}
	kw := map[string]bool{}
	for _, w := range Words(knowledge) {
		kw[w] = true
	}
	seen := map[string]bool{}
	hit := 0
	for _, w := range rw {
		if seen[w] {
			continue
		}
		seen[w] = true
		if kw[w] {
			hit++
		}
	}
	return float64(hit) / float64(len(seen))
}

type msdpSelection struct {
	Topic             string   `json:"topic"`
	KnowledgeExamples []Scored `json:"knowledge_examples"`
	ResponseExamples  []Scored `json:"response_examples"`
	OverlapQualifying int      `json:"overlap_qualifying"`
}

// Respond selects examples, generates (or retrieves) knowledge, then the response.
func (m *MSDP) Respond(ctx context.Context, conv *Conversation, message string, tr *Tracer) (string, error) {
	hist := turnsText(conv.history(m.opts.HistoryTurns), message)
	rec := tr.stage(StageMSDPSelect)
	sel, err := m.selectExamples(ctx, conv, message, hist)
	rec.end(sel)
	if err != nil {
		return "", err
	}
	base := PromptData{Today: m.d.today(), History: conv.history(m.opts.HistoryTurns), Message: message,
		Topic: sel.Topic, LastTurn: message}

	var knowledge string
	if m.opts.Knowledge == "retrieve" {
		rec := tr.stage(StageRetrieve)
		q := strings.TrimSpace(sel.Topic + " " + message)
		res, err := m.d.Retriever.Retrieve(ctx, rerank.Query{Request: search.Request{Text: q, K: 1}})
		if err != nil {
			rec.end(nil)
			return "", fmt.Errorf("msdp: retrieving knowledge: %w", err)
		}
		rec.passages(StageRetrieve, q, res.Hits)
		if len(res.Hits) > 0 {
			knowledge = passageBody(res.Hits[0].Text)
		}
		rec.end(knowledge)
	} else {
		rec := tr.stage(StageMSDPKnow)
		d := base
		d.Examples = m.examples(sel.KnowledgeExamples)
		knowledge, err = call(ctx, &m.d, rec, PromptMSDPKnow, d, ParseKnowledge)
		rec.end(knowledge)
		if err != nil && !soft(rec, err) {
			return "", err
		}
	}

	rec = tr.stage(StageMSDPResp)
	d := base
	d.Knowledge = knowledge
	d.Examples = m.examples(sel.ResponseExamples)
	resp, err := finalReply(ctx, &m.d, rec, PromptMSDPResp, d)
	rec.end(resp)
	return resp, err
}

func (m *MSDP) selectExamples(ctx context.Context, conv *Conversation, message string, hist []string) (msdpSelection, error) {
	bank := m.d.Bank
	topic := conv.Topic
	vecs, err := m.d.Encoder.Encode(ctx, []string{ContextText(topic, hist)})
	if err != nil {
		return msdpSelection{}, fmt.Errorf("msdp: encoding the context: %w", err)
	}
	if topic == "" {
		// No tracked topic: borrow the nearest example's, so that the prompt line reads
		// "( turn ) topic =>" as the examples do.
		top, err := bank.TopN(vecs[0], 1, nil)
		if err != nil {
			return msdpSelection{}, err
		}
		if len(top) > 0 {
			topic = bank.Examples[top[0].Index].Topic
			vecs, err = m.d.Encoder.Encode(ctx, []string{ContextText(topic, hist)})
			if err != nil {
				return msdpSelection{}, fmt.Errorf("msdp: encoding the context: %w", err)
			}
		}
	}
	sel := msdpSelection{Topic: topic}
	if sel.KnowledgeExamples, err = bank.TopN(vecs[0], m.opts.KnowledgeExamples, func(i int) bool {
		return bank.Examples[i].Knowledge != ""
	}); err != nil {
		return sel, err
	}
	qualifies := func(i int) bool {
		e := bank.Examples[i]
		if e.Knowledge == "" {
			return false
		}
		r := OverlapRatio(e.Response, e.Knowledge)
		return r >= m.opts.OverlapMin && r <= m.opts.OverlapMax
	}
	for i := range bank.Examples {
		if qualifies(i) {
			sel.OverlapQualifying++
		}
	}
	sel.ResponseExamples, err = bank.TopN(vecs[0], m.opts.ResponseExamples, qualifies)
	return sel, err
}

// examples turns selected bank entries into prompt examples, most similar last (closest to
// the live line, where few-shot examples weigh most).
func (m *MSDP) examples(sel []Scored) []PromptExample {
	out := make([]PromptExample, 0, len(sel))
	for i := len(sel) - 1; i >= 0; i-- {
		e := m.d.Bank.Examples[sel[i].Index]
		out = append(out, PromptExample{Topic: e.Topic, LastTurn: e.LastTurn(), Knowledge: e.Knowledge, Response: e.Response})
	}
	return out
}

// turnsText is the dialogue history as plain turns, the current message last.
func turnsText(h []PromptTurn, message string) []string {
	out := make([]string, 0, len(h)+1)
	for _, t := range h {
		out = append(out, t.Text)
	}
	return append(out, message)
}

// passageBody drops the "Title | " prefix of a passage.
func passageBody(text string) string {
	if _, body, ok := strings.Cut(text, " | "); ok {
		return body
	}
	return text
}
