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

// IsPassive reports whether a user turn gives the bot nothing to answer: no question and few
// words ("yeah it was good", "ok", "haha nice"). Such turns leave the query stage without a
// question to search for, which is the case the commonsense directive exists for.
func IsPassive(message string) bool {
	m := strings.TrimSpace(message)
	if strings.Contains(m, "?") {
		return false
	}
	words := strings.Fields(strings.ToLower(m))
	if len(words) > 8 {
		return false
	}
	for _, w := range words {
		switch strings.Trim(w, ".,!") {
		case "what", "who", "when", "where", "why", "how", "which", "tell", "explain":
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
