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
// case the commonsense directive exists for. The paper (section 3.1) removes the turns an
// intent detector (Khatri et al. 2018) calls information or opinion requests and keeps
// everything else, long statements included ("Yes i have actually been on that newsletter for
// years, they also have an amazing app ..."); so does this: a turn is a request when it has a
// question mark, opens like a question or a command ("who", "is", "tell", "please", "any"),
// or asks in so many words ("I was wondering", "let me know", "your thoughts on", "I'm looking
// for"), matched as whole words; anything else is passive. TestIsPassive holds the paper's
// passive turns and requests of both kinds.
func IsPassive(message string) bool {
	m := strings.ToLower(strings.TrimSpace(strings.NewReplacer("’", "'", "‘", "'").Replace(message)))
	if m == "" || strings.ContainsAny(m, "?？") {
		return false
	}
	words := Words(m)
	if len(words) == 0 {
		return true
	}
	next := ""
	if len(words) > 1 {
		next = words[1]
	}
	switch {
	case requestOpeners[words[0]]:
		return false
	case questionAfter[words[0]] && subjects[next]:
		// "Have you seen it", "was it good"; not "had a great time", "was a blast".
		return false
	case requestPairs[words[0]+" "+next]:
		return false
	}
	text := " " + strings.Join(words, " ") + " "
	for _, ask := range requestPhrases {
		if strings.Contains(text, " "+ask+" ") {
			return false
		}
	}
	return true
}

// requestOpeners are first words that make a turn a question or a command: question words,
// auxiliaries that open a yes/no question, and the verbs of a request.
var requestOpeners = setOf(`what what's whats who who's whos whom whose when when's where where's
	which why why's how how's is isn't are aren't do does did don't doesn't can can't could would
	will won't should shall tell explain describe show give recommend suggest name list please
	search find define compare thoughts`)

// questionAfter are first words that open a question only before a subject ("have you"); a
// statement with its subject left out starts with them too ("had a great time").
var questionAfter = setOf(`have has had was were`)

var subjects = setOf(`you they he she it we i there the this that these those anyone anybody
	someone somebody your their his her its any`)

// requestPairs are first two words of requests whose first word alone is not one ("any good
// trails", "ever been to", "look up"; not "any time I hear them", "ever since").
var requestPairs = setOf(`any_good any_idea any_ideas any_tips any_suggestions any_recommendations
	any_news any_info any_information any_thoughts ever_been ever_heard ever_seen ever_tried
	ever_watched ever_played ever_visited ever_read look_up`)

// requestPhrases ask for information or an opinion anywhere in a turn, matched as whole words.
// Each is one no statement says in passing: not "explain" ("that would explain it"), "find
// out" ("I was shocked to find out"), "suggest" ("I suggest you listen") or "look up" ("I look
// up to him").
var requestPhrases = strings.Split(`tell me|can you|could you|would you|will you|do you know|do you think|`+
	`do you like|do you prefer|have you ever|what do you|what's your|what is your|your opinion|your thoughts|`+
	`your take|your view|your favorite|your favourite|thoughts on|what about|how about|i want to know|`+
	`i'd like to know|i would like to know|i'd love to know|i would love to know|i'd love to hear about|`+
	`i want to learn|i'd like to learn|i wonder|i was wondering|i'm wondering|i am wondering|i'm curious|`+
	`i am curious|curious to know|let me know|any idea|any ideas|i need information|i need some information|`+
	`i need to know|i want to find out|i'm looking for|i am looking for|looking for information|recommend me|`+
	`you recommend|you suggest|any recommendations|any suggestions|is there any|are there any`, "|")

// plan runs the topic tracker, then for a passive turn the directive and query stages; for an
// active turn it uses WikiChat's own query prompt, with the tracked topic kept in the state.
func (c *Commonsense) plan(ctx context.Context, conv *Conversation, base PromptData, tr *Tracer) (QueryPlan, error) {
	rec := tr.stage(StageCSTopic)
	d := base
	d.Topic = conv.Topic
	topic, err := call(ctx, &c.d, rec, PromptCSTopic, d, parseTopic)
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

// respondCommonsense is the commonsense pipeline's response as the paper's section 3.1 makes
// it: one call, given the conversation and the top search result of the commonsense query
// (temperature 0.7, top-p 0.9, at most 100 tokens: DefaultStageOptions). Its sentences stream
// through the reply gate, each checked against that passage; "I'm not sure" when none passes
// or nothing was found.
func (w *WikiChat) respondCommonsense(ctx context.Context, conv *Conversation, base PromptData, attr *attributor, tr *Tracer) (string, error) {
	plan, err := w.cs.plan(ctx, conv, base, tr)
	if err != nil {
		return "", err
	}
	if plan.Search {
		res, err := w.retrieve(ctx, plan, 1, tr)
		if err != nil {
			return "", err
		}
		if len(res.Hits) > 0 {
			tr.replyGate().markers = attr.add(res.Hits[0])
			d := base
			d.Passage = toPromptPassages(res.Hits)[0]
			return w.lastStage(ctx, tr, StageCSResponse, PromptCSResponse, d)
		}
	}
	return w.opts.NotSure, nil // nothing to answer from: the Service sends it whole
}
