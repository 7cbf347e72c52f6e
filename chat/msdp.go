package chat

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/search"
)

// MSDPOptions are the knobs of the msdp pipeline.
type MSDPOptions struct {
	KnowledgeExamples int // examples in the knowledge prompt, most similar first; default 10
	// ResponseExamples is how many examples the response prompt shows; default 20, the paper's
	// count. As in the paper they are drawn at random (with Seed) among the examples whose
	// overlap ratio is in range, once, independently of the dialogue.
	ResponseExamples int
	Seed             uint64 // for the draw of response examples; default 1
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
		o.ResponseExamples = 20
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.OverlapMin == 0 && o.OverlapMax == 0 {
		o.OverlapMin, o.OverlapMax = 0.6, 0.9
	}
	if o.Knowledge == "" {
		o.Knowledge = MSDPGenerate
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
	if o.Knowledge != MSDPGenerate && o.Knowledge != MSDPRetrieve {
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
	// respExamples are the response examples, drawn once; qualifying counts the candidates.
	respExamples []Scored
	qualifying   int
}

var _ Pipeline = (*MSDP)(nil)

// NewMSDP validates deps and options. A Retriever is optional (topic and "retrieve" knowledge).
func NewMSDP(d Deps, opts MSDPOptions) (*MSDP, error) {
	opts.setDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if err := d.check("msdp", opts.Knowledge == MSDPRetrieve, true, true); err != nil {
		return nil, err
	}
	m := &MSDP{d: d, opts: opts}
	m.drawResponseExamples()
	return m, nil
}

// drawResponseExamples picks the response examples as the paper does: filter the bank to the
// examples whose response uses its knowledge to a moderate degree (overlap ratio within
// [OverlapMin, OverlapMax]), then select n of them at random, "to ensure that our approach does
// not depend on the dialogue context".
func (m *MSDP) drawResponseExamples() {
	var cand []int
	for i, e := range m.d.Bank.Examples {
		if e.Knowledge == "" {
			continue
		}
		if r := OverlapRatio(e.Response, e.Knowledge); r >= m.opts.OverlapMin && r <= m.opts.OverlapMax {
			cand = append(cand, i)
		}
	}
	m.qualifying = len(cand)
	rng := rand.New(rand.NewPCG(m.opts.Seed, 0x6d736470))
	rng.Shuffle(len(cand), func(i, j int) { cand[i], cand[j] = cand[j], cand[i] })
	for _, i := range cand[:min(len(cand), m.opts.ResponseExamples)] {
		m.respExamples = append(m.respExamples, Scored{Index: i, ID: m.d.Bank.Examples[i].ID})
	}
}

// Name is "msdp".
func (m *MSDP) Name() string { return "msdp" }

// OverlapRatio is the MSDP paper's word overlap ratio (section 2.2, and ratio_knwl of its
// appendix): the share of the response's tokens, repeats counted, that occur in the knowledge.
func OverlapRatio(response, knowledge string) float64 {
	rw := Words(response)
	if len(rw) == 0 {
		return 0
	}
	kw := map[string]bool{}
	for _, w := range Words(knowledge) {
		kw[w] = true
	}
	hit := 0
	for _, w := range rw {
		if kw[w] {
			hit++
		}
	}
	return float64(hit) / float64(len(rw))
}

type msdpSelection struct {
	Topic             string   `json:"topic"`
	TopicSource       string   `json:"topic_source"`
	KnowledgeExamples []Scored `json:"knowledge_examples"`
	ResponseExamples  []Scored `json:"response_examples"`
	OverlapQualifying int      `json:"overlap_qualifying"`
}

// Grounded is false: the reply is not checked against retrieved passages.
func (*MSDP) Grounded() bool { return false }

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
		Topic: sel.Topic, LastTurn: message, SystemTurn: lastBotTurn(conv)}

	var knowledge string
	if m.opts.Knowledge == MSDPRetrieve {
		rec := tr.stage(StageRetrieve)
		q := strings.TrimSpace(sel.Topic + " " + message)
		res, err := m.d.Retriever.Retrieve(ctx, rerank.Query{Request: search.Request{Text: q, K: 1}})
		if err != nil {
			rec.end(nil)
			return "", fmt.Errorf("msdp: %w: retrieving knowledge: %w", ErrRetrieval, err)
		}
		rec.passages(StageRetrieve, q, res.Hits)
		if len(res.Hits) > 0 {
			knowledge = passageBody(res.Hits[0].Text)
			tr.cite(StageRetrieve, q, res.Hits[:1])
		}
		rec.end(knowledge)
	} else {
		rec := tr.stage(StageMSDPKnow)
		d := base
		d.Examples = m.examples(sel.KnowledgeExamples)
		knowledge, err = call(ctx, &m.d, rec, PromptMSDPKnow, d, parseKnowledgeContent)
		rec.end(knowledge)
		if err != nil && !soft(rec, err) {
			return "", err
		}
	}

	rec = tr.stage(StageMSDPResp)
	d := base
	d.Knowledge = knowledge
	d.KnowledgeRetrieved = m.opts.Knowledge == MSDPRetrieve
	d.Examples = m.examples(sel.ResponseExamples)
	// The paper keeps the generated text before the first newline: here the first line of
	// the content, a generic model's preamble line left out.
	rec.firstLine = true // the paper keeps the generated text before the first newline
	resp, err := finalReply(ctx, &m.d, rec, PromptMSDPResp, d)
	rec.end(resp)
	return resp, err
}

func (m *MSDP) selectExamples(ctx context.Context, conv *Conversation, message string, hist []string) (msdpSelection, error) {
	bank := m.d.Bank
	topic, source, err := m.topic(ctx, conv, message)
	if err != nil {
		return msdpSelection{}, err
	}
	vecs, err := m.d.Encoder.Encode(ctx, []string{ContextText(topic, hist)})
	if err != nil {
		return msdpSelection{}, fmt.Errorf("msdp: encoding the context: %w", err)
	}
	sel := msdpSelection{Topic: topic, TopicSource: source, ResponseExamples: m.respExamples, OverlapQualifying: m.qualifying}
	sel.KnowledgeExamples, err = bank.TopN(vecs[0], m.opts.KnowledgeExamples, func(i int) bool {
		return bank.Examples[i].Knowledge != ""
	})
	return sel, err
}

// Where a dialogue's topic came from (msdpSelection.TopicSource).
const (
	topicKept     = "kept: the dialogue's topic, set by an earlier turn"
	topicIndex    = "set: the title of the passage the index finds for the first turn that names a topic"
	topicWords    = "set: the content words of the first turn that names a topic (no index)"
	topicNotNamed = "none: no turn has named a topic yet"
)

// topic is the dialogue's topic, the paper's input t (section 2): given with the dialogue (each
// Wizard of Wikipedia dialogue has a chosen topic, a Wikipedia title) and the same for all its
// turns. Kairos is given none, so the first turn that names one sets it: the title of the
// passage the index finds for that turn, else the turn's content words; it is kept in the
// conversation (Conversation.Topic) and never recomputed, so a later "thanks" or a question
// on the side does not move it. A turn with no content word ("hi", "thanks") before then
// sets nothing, and its prompts go without a topic, as the paper's "w/o topic" input does. A
// topic the conversation already holds (commonsense's tracker writes the same field) is kept.
// It never comes from the bank: a bank example's topic describes another dialogue.
func (m *MSDP) topic(ctx context.Context, conv *Conversation, message string) (topic, source string, err error) {
	if conv.Topic != "" {
		return conv.Topic, topicKept, nil
	}
	words := keywords(message, 5)
	if words == "" {
		return "", topicNotNamed, nil
	}
	topic, source = words, topicWords
	if m.d.Retriever != nil {
		res, err := m.d.Retriever.Retrieve(ctx, rerank.Query{Request: search.Request{Text: message, K: 1}})
		if err != nil {
			return "", "", fmt.Errorf("msdp: %w: finding the topic: %w", ErrRetrieval, err)
		}
		if len(res.Hits) > 0 && strings.TrimSpace(res.Hits[0].Title) != "" {
			topic, source = oneLine(res.Hits[0].Title), topicIndex
		}
	}
	conv.Topic = topic
	return topic, source, nil
}

// keywords returns up to n content words of s (function words, greetings and thanks
// dropped), "" when it has none.
func keywords(s string, n int) string {
	var out []string
	for _, w := range Words(s) {
		if len([]rune(w)) < 3 || isFunctionWord(w) {
			continue
		}
		out = append(out, w)
		if len(out) == n {
			break
		}
	}
	return strings.Join(out, " ")
}

// isFunctionWord reports English words that carry no topic: function words, and the words of
// greetings, thanks and assent, which a turn that names no topic is made of.
func isFunctionWord(w string) bool {
	switch w {
	case "the", "and", "for", "are", "but", "not", "you", "all", "any", "can", "had", "her", "was", "one",
		"our", "out", "has", "have", "him", "his", "how", "its", "may", "who", "what", "when", "where", "why",
		"which", "did", "does", "doing", "yes", "yeah", "about", "that", "this", "these", "those", "with",
		"from", "they", "them", "their", "there", "then", "than", "been", "being", "were", "will", "would",
		"could", "should", "like", "know", "think", "just", "really", "very", "much", "many", "some", "more",
		"most", "tell", "also", "into", "your", "yours", "mine", "ever", "seen", "heard", "want", "get",
		"got", "say", "said", "let", "lets", "let's", "i'm", "it's", "don't", "didn't", "you're", "okay",
		"hi", "hello", "hey", "hiya", "thanks", "thank", "thx", "cheers", "bye", "goodbye", "please",
		"sure", "cool", "nice", "great", "wow", "lol", "haha", "hmm", "good", "morning", "afternoon", "evening",
		"night", "fine", "well", "yep", "nope", "right", "indeed", "interesting", "awesome", "oh", "ah":
		return true
	}
	return false
}

// examples turns selected bank entries into prompt examples, most similar last (closest to
// the live line, where few-shot examples weigh most).
func (m *MSDP) examples(sel []Scored) []PromptExample {
	out := make([]PromptExample, 0, len(sel))
	for i := len(sel) - 1; i >= 0; i-- {
		e := m.d.Bank.Examples[sel[i].Index]
		pe := PromptExample{Topic: e.Topic, LastTurn: e.LastTurn(), Knowledge: e.Knowledge, Response: e.Response}
		if len(e.History) >= 2 {
			pe.SystemTurn = e.History[len(e.History)-2]
		}
		out = append(out, pe)
	}
	return out
}

// lastBotTurn is the system's previous turn, which the paper's response prompt keeps.
func lastBotTurn(conv *Conversation) string {
	if len(conv.Turns) == 0 {
		return ""
	}
	return conv.Turns[len(conv.Turns)-1].Bot
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
