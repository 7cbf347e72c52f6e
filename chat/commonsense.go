package chat

import (
	"context"
	"strings"
)

// Commonsense is commonsense-guided query generation for passive user turns: it tracks the
// fine-grained topic, asks for a commonsense directive (a plausible next move) from a short
// situation narrative that includes the topic, and turns directive plus topic into a search
// query. It is WikiChat's stage 1 when that pipeline runs with QueryGen "commonsense".
type Commonsense struct {
	d Deps
}

// IsPassive reports whether a user turn is passive in the paper's sense: it requests neither
// information nor an opinion, so the query stage has no question to search for, which is the
// case the commonsense directive exists for. The paper removes request turns with an intent
// detector and keeps everything else, long statements included ("Yes i have actually been on
// that newsletter for years, they also have an amazing app ..."); so does this: a turn is a
// request when it has a question mark, opens like a question, or asks ("tell me", "can you",
// "do you think"); anything else is passive.
func IsPassive(message string) bool {
	m := strings.ToLower(strings.TrimSpace(message))
	if m == "" || strings.ContainsAny(m, "?？") {
		return false
	}
	words := Words(m)
	if len(words) > 0 {
		switch words[0] {
		case "what", "who", "whom", "whose", "when", "where", "why", "how", "which", "is", "are", "was", "were",
			"do", "does", "did", "can", "could", "would", "will", "should", "shall", "may", "have", "has",
			"tell", "explain", "describe", "show", "give", "recommend", "suggest", "name", "list":
			return false
		}
	}
	for _, ask := range []string{"tell me", "can you", "could you", "would you", "do you know", "do you think",
		"what do you", "i want to know", "i'd like to know", "i would like to know", "i wonder", "any idea",
		"your opinion", "what about", "how about", "recommend"} {
		if strings.Contains(m, ask) {
			return false
		}
	}
	return true
}

// plan runs the topic tracker, then for a passive turn the directive and query stages; for an
// active turn it uses WikiChat's own query prompt, with the tracked topic kept in the state.
func (c *Commonsense) plan(ctx context.Context, conv *Conversation, base PromptData, tr *Tracer) (QueryPlan, error) {
	rec := tr.stage(StageCSTopic)
	d := base
	d.Topic = conv.Topic
	topic, err := call(ctx, &c.d, rec, PromptCSTopic, d, func(s string) (string, error) { return ParseLabeled(s, "topic") })
	rec.end(topic)
	if err != nil && !soft(rec, err) {
		return QueryPlan{}, err
	}
	if topic != "" {
		conv.Topic = topic
	}
	if !IsPassive(base.Message) || conv.Topic == "" {
		rec := tr.stage(StageQuery)
		plan, err := call(ctx, &c.d, rec, PromptQuery, base, ParseQueryPlan)
		rec.end(plan)
		if err != nil && soft(rec, err) {
			return QueryPlan{Search: true, Query: base.Message}, nil
		}
		return plan, err
	}

	rec = tr.stage(StageCSDirect)
	d.Topic = conv.Topic
	directive, err := call(ctx, &c.d, rec, PromptCSDirective, d, func(s string) (string, error) { return ParseLabeled(s, "directive") })
	rec.end(directive)
	if err != nil {
		if !soft(rec, err) {
			return QueryPlan{}, err
		}
		directive = "Say something interesting about " + conv.Topic + "."
	}
	rec = tr.stage(StageCSQuery)
	d.Directive = directive
	plan, err := call(ctx, &c.d, rec, PromptCSQuery, d, ParseQueryPlan)
	if err != nil && soft(rec, err) {
		plan, err = QueryPlan{Search: true, Query: conv.Topic}, nil
	}
	rec.end(plan)
	return plan, err
}
