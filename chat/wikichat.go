package chat

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kairos-rag/kairos/corpus/timex"
	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/search"
)

// Stage names, as they appear in traces and token usage.
const (
	StageQuery      = "query"
	StageRetrieve   = "retrieve"
	StageSummarize  = "summarize"
	StageGenerate   = "generate"
	StageClaims     = "claims"
	StageEvidence   = "evidence"
	StageVerify     = "verify"
	StageDraft      = "draft"
	StageRefine     = "refine"
	StageCSTopic    = "cs_topic"
	StageCSDirect   = "cs_directive"
	StageCSQuery    = "cs_query"
	StageMPCClarify = "mpc_clarify"
	StageMPCRecall  = "mpc_recall"
	StageMPCMemory  = "mpc_memory"
	StageMPCRespond = "mpc_respond"
	StageMPCSummary = "mpc_summarize"
	StageMSDPSelect = "msdp_select"
	StageMSDPKnow   = "msdp_knowledge"
	StageMSDPResp   = "msdp_response"
	StageSICLSelect = "sicl_select"
	StageSICL       = "sicl"
)

// WikiChatOptions are the knobs of the wikichat pipeline.
type WikiChatOptions struct {
	PassagesPerQuery int // passages retrieved for the query stage; default 3
	EvidencePerClaim int // passages retrieved per claim; default 2
	// MaxClaims is how many distinct claims of stage 3's reply are checked (a retrieval and a
	// verification call each); default DefaultMaxClaims. Claims past it are left out, as
	// unverified claims are, and the trace says so.
	MaxClaims int
	// Skip names optional stages not to run: "retrieve" (stages 1-2), "generate" (stages 3-5,
	// claims and their verification), "refine" (stage 7). At least one of retrieve and generate
	// must run.
	Skip []string
	// QueryGen selects stage 1: "wikichat" (default) or "commonsense" (topic, directive, query).
	QueryGen string
	// Mode is the retrieval mode passed to the Retriever; "" lets it choose.
	Mode search.Mode
	// Rerank stages for every retrieval; default [rerank.StageTime], the time-aware reranker.
	Rerank []rerank.Stage
	// NotSure is the reply refined when nothing survives curation.
	NotSure string
	// HistoryTurns is how many earlier turns the query, generate and verify prompts show;
	// default 5, the paper's "at most the last five turns" (appendix A).
	HistoryTurns int
	// ShortHistoryTurns is how many the claims, draft and refine prompts show; default 2, the
	// paper's dlg[-2:] (Tables 20, 22 and 23).
	ShortHistoryTurns int
}

// DefaultNotSure is the reply when a factual turn has no verified fact to stand on.
const DefaultNotSure = "Sorry, I'm not sure about that."

func (o *WikiChatOptions) setDefaults() {
	if o.PassagesPerQuery == 0 {
		o.PassagesPerQuery = DefaultPassagesPerQuery
	}
	if o.EvidencePerClaim == 0 {
		o.EvidencePerClaim = DefaultEvidencePerClaim
	}
	if o.MaxClaims == 0 {
		o.MaxClaims = DefaultMaxClaims
	}
	if o.QueryGen == "" {
		o.QueryGen = "wikichat"
	}
	if o.Rerank == nil {
		o.Rerank = []rerank.Stage{rerank.StageTime}
	}
	if o.NotSure == "" {
		o.NotSure = DefaultNotSure
	}
	if o.HistoryTurns == 0 {
		o.HistoryTurns = 5
	}
	if o.ShortHistoryTurns == 0 {
		o.ShortHistoryTurns = 2
	}
}

func (o *WikiChatOptions) validate() error {
	if o.PassagesPerQuery < 0 || o.PassagesPerQuery > 50 || o.EvidencePerClaim < 0 || o.EvidencePerClaim > 20 {
		return fmt.Errorf("wikichat: passages per query %d (0-50) or evidence per claim %d (0-20) out of range",
			o.PassagesPerQuery, o.EvidencePerClaim)
	}
	if o.MaxClaims < 1 || o.MaxClaims > 50 {
		return fmt.Errorf("wikichat: max claims %d out of range (1-50)", o.MaxClaims)
	}
	for _, s := range o.Skip {
		if s != StageRetrieve && s != StageGenerate && s != StageRefine {
			return fmt.Errorf("wikichat: cannot skip stage %q (want retrieve, generate or refine)", s)
		}
	}
	if o.skips(StageRetrieve) && o.skips(StageGenerate) {
		return errors.New("wikichat: skipping both retrieve and generate leaves nothing to answer from")
	}
	if o.QueryGen != "wikichat" && o.QueryGen != "commonsense" {
		return fmt.Errorf("wikichat: query generation %q (want wikichat or commonsense)", o.QueryGen)
	}
	return nil
}

func (o *WikiChatOptions) skips(stage string) bool { return slices.Contains(o.Skip, stage) }

// WikiChat is the 7-stage WikiChat pipeline (Semnani et al. 2023).
type WikiChat struct {
	d    Deps
	opts WikiChatOptions
	cs   *Commonsense
}

var _ Pipeline = (*WikiChat)(nil)

// NewWikiChat validates deps and options.
func NewWikiChat(d Deps, opts WikiChatOptions) (*WikiChat, error) {
	opts.setDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if err := d.check("wikichat", true, false, false); err != nil {
		return nil, err
	}
	w := &WikiChat{d: d, opts: opts}
	if opts.QueryGen == "commonsense" {
		w.d.pipeline = "commonsense" // its draft samples as the paper's final response
		w.cs = &Commonsense{d: d}
	}
	return w, nil
}

// Name is "wikichat", or "commonsense" when the commonsense query stage is selected.
func (w *WikiChat) Name() string {
	if w.cs != nil {
		return "commonsense"
	}
	return "wikichat"
}

// Grounded is true: every sentence of the reply is checked against the turn's passages.
func (*WikiChat) Grounded() bool { return true }

// Respond runs stages 1-2 and 3-4 in parallel, then verification, draft and refinement.
func (w *WikiChat) Respond(ctx context.Context, conv *Conversation, message string, tr *Tracer) (string, error) {
	base := PromptData{Today: w.d.today(), History: conv.history(w.opts.HistoryTurns), Message: message,
		EarlierQueries: conv.earlierQueries(w.opts.HistoryTurns)}
	short := base // for claims, draft and refine
	short.History = conv.history(w.opts.ShortHistoryTurns)
	var (
		plan    QueryPlan
		bullets []string
		sources []rerank.Hit // the passage each bullet came from
		gen     generated
	)
	err := parallel(2, func(i int) error {
		var err error
		if i == 0 && !w.opts.skips(StageRetrieve) {
			plan, bullets, sources, err = w.retrieveAndSummarize(ctx, conv, base, tr)
		}
		if i == 1 && !w.opts.skips(StageGenerate) {
			gen, err = w.generateAndExtract(ctx, base, short, tr)
		}
		return err
	})
	if err != nil {
		return "", err
	}
	b := base
	b.Response = gen.reply // the verifier is shown the reply the claims came from (Table 21)
	kept, support, err := w.verify(ctx, b, gen.claims, gen.evidence, tr)
	if err != nil {
		return "", err
	}
	from := make([]citeSource, 0, len(bullets)+len(kept))
	for i, b := range bullets {
		from = append(from, citeSource{hit: sources[i], stage: StageSummarize, forQ: plan.Query, facts: []string{b}})
	}
	for i, c := range kept {
		from = append(from, citeSource{hit: bestSupport(c, support[i]), stage: StageVerify, forQ: c, facts: []string{c}})
	}
	facts, from := dedupeFacts(from)

	var draft string
	switch {
	case len(facts) > 0:
		// Each fact is listed with its passage's number, and the reply cites it with that
		// number (cite.go).
		lines, srcs := numberFacts(facts, from)
		tr.setSources(srcs)
		rec := tr.stage(StageDraft)
		rec.wholeSentences = w.cs != nil // the commonsense response's 100 tokens (pipeline.go)
		d := short
		d.Facts = lines
		if w.opts.skips(StageRefine) {
			draft, err = reply(ctx, &w.d, rec, PromptDraft, d) // the last stage: streamed
		} else {
			draft, err = call(ctx, &w.d, rec, PromptDraft, d, ParseResponse)
		}
		if err != nil && !soft(rec, err) {
			rec.end(nil)
			return "", err
		}
		// Names may also come from the facts' passages' titles ("Vitamin D" for "It was
		// identified ...") and from the conversation so far.
		var known []string
		for _, f := range from {
			known = append(known, f.hit.Title)
		}
		for _, h := range base.History {
			known = append(known, h.Text)
		}
		if kept, dropped := draftSupported(draft, facts, known, base.Message); len(dropped) > 0 {
			rec.softError(fmt.Errorf("%w: draft sentences with a number or name no verified fact holds, dropped: %q",
				ErrUnusable, dropped))
			draft = kept
		}
		rec.end(draft)
		if draft == "" {
			draft = w.opts.NotSure
		}
	default:
		// Nothing retrieved and verified. As in the paper (section 3.2), the draft is skipped
		// and "I'm not sure" goes to the refinement, which dresses it up for the conversation.
		// The stage-3 reply is never delivered as it is, not even when the planner saw no need
		// to search and the claims stage found no claim: both are the LLM's own judgement of
		// its own output, and a hallucinating model says "no search" and "None" as readily.
		draft = w.opts.NotSure
	}
	if w.opts.skips(StageRefine) {
		return draft, nil
	}
	return w.refine(ctx, short, draft, facts, tr)
}

// retrieveAndSummarize is stages 1-2: plan a query, retrieve, summarize each passage.
func (w *WikiChat) retrieveAndSummarize(ctx context.Context, conv *Conversation, base PromptData, tr *Tracer) (QueryPlan, []string, []rerank.Hit, error) {
	var plan QueryPlan
	var err error
	if w.cs != nil {
		plan, err = w.cs.plan(ctx, conv, base, tr)
	} else {
		rec := tr.stage(StageQuery)
		plan, err = call(ctx, &w.d, rec, PromptQuery, base, ParseQueryPlan)
		if err != nil && soft(rec, err) {
			// Unreadable plan: search with the user's own words rather than not at all.
			plan, err = QueryPlan{Search: true, Query: base.Message, Time: timex.Spec{Kind: timex.KindAuto}}, nil
		}
		rec.end(plan)
	}
	if err != nil || !plan.Search || w.opts.PassagesPerQuery == 0 {
		return plan, nil, nil, err
	}
	rec := tr.stage(StageRetrieve)
	res, err := w.d.Retriever.Retrieve(ctx, w.query(plan.Query, plan.Time, w.opts.PassagesPerQuery))
	if err != nil {
		rec.end(nil)
		return plan, nil, nil, fmt.Errorf("retrieving for %q: %w", plan.Query, err)
	}
	rec.passages(StageRetrieve, plan.Query, res.Hits)
	rec.end(map[string]any{"query": plan.Query, "time": res.Time, "hits": len(res.Hits)})

	rec = tr.stage(StageSummarize)
	per := make([][]string, len(res.Hits))
	passages := toPromptPassages(res.Hits)
	err = parallel(len(passages), func(i int) error {
		d := base
		d.Query, d.Passage = plan.Query, passages[i]
		b, err := call(ctx, &w.d, rec, PromptSummarize, d, ParseList)
		if err != nil && !soft(rec, err) {
			return err
		}
		// A bullet is kept only if its own passage supports it: the draft prompt lists it as
		// verified, and nothing else checks it. A bullet that speaks to the bot restates an
		// order written in the passage, not a fact, and the passage's orders support no bullet
		// (withoutBotAddress).
		evidence := withoutBotAddress(res.Hits[i].Text)
		for _, x := range b {
			if addressesBot(x) {
				rec.softError(fmt.Errorf("%w: summary bullet of passage %s speaks to the bot, no fact: %q",
					ErrUnusable, res.Hits[i].ID, truncate(x, 200)))
			} else if share, missing := bulletSupport(x, evidence); missing == "" {
				per[i] = append(per[i], x)
			} else {
				rec.softError(fmt.Errorf("%w: summary bullet not supported by passage %s (it lacks %s; %.0f%% of its words there): %q",
					ErrUnusable, res.Hits[i].ID, missing, 100*share, truncate(x, 200)))
			}
		}
		return nil
	})
	var bullets []string
	var sources []rerank.Hit
	for i, b := range per {
		bullets = append(bullets, b...)
		for range b {
			sources = append(sources, res.Hits[i])
		}
	}
	rec.end(bullets)
	return plan, bullets, sources, err
}

// generated is the result of stages 3-4.
type generated struct {
	reply    string
	claims   []string
	evidence [][]rerank.Hit
}

// generateAndExtract is stages 3-4: the LLM's own reply, its claims, and evidence per claim.
// The reply is written from base's history, the claims extracted with short's.
func (w *WikiChat) generateAndExtract(ctx context.Context, base, short PromptData, tr *Tracer) (generated, error) {
	var g generated
	rec := tr.stage(StageGenerate)
	reply, err := call(ctx, &w.d, rec, PromptGenerate, base, ParseResponse)
	if err != nil {
		if soft(rec, err) {
			rec.end(nil)
			return g, nil
		}
		rec.end(nil)
		return g, err
	}
	rec.end(reply)
	g.reply = reply
	rec = tr.stage(StageClaims)
	d := short
	d.Response = reply
	claims, err := call(ctx, &w.d, rec, PromptClaims, d, ParseList)
	if err != nil && !soft(rec, err) {
		rec.end(nil)
		return g, err
	}
	// A claim that speaks to the bot is an order the reply passed on, not a fact to check: the
	// passage it came from would "support" it word for word.
	claims = slices.DeleteFunc(claims, func(c string) bool {
		if addressesBot(c) {
			rec.softError(fmt.Errorf("%w: claim speaks to the bot, not checked: %q", ErrUnusable, truncate(c, 200)))
			return true
		}
		return false
	})
	claims = w.distinctClaims(claims, rec)
	rec.end(claims)
	g.claims = claims
	g.evidence = make([][]rerank.Hit, len(claims))
	if len(claims) == 0 || w.opts.EvidencePerClaim == 0 {
		return g, nil
	}
	rec = tr.stage(StageEvidence)
	err = parallel(len(claims), func(i int) error {
		// The claim's own years decide its time need: KindAuto resolves it from the text.
		res, err := w.d.Retriever.Retrieve(ctx, w.query(claims[i], timex.Spec{Kind: timex.KindAuto}, w.opts.EvidencePerClaim))
		if err != nil {
			return fmt.Errorf("retrieving evidence for claim %d: %w", i+1, err)
		}
		g.evidence[i] = res.Hits
		rec.passages(StageEvidence, claims[i], res.Hits)
		return nil
	})
	rec.end(map[string]int{"claims": len(claims)})
	return g, err
}

// distinctClaims returns claims without repeats (case and spaces aside), at most MaxClaims of
// them: a model that repeats a claim, or lists dozens, would otherwise multiply the turn's
// retrievals and verification calls. What is left out is noted in the trace.
func (w *WikiChat) distinctClaims(claims []string, rec *stageRec) []string {
	seen := map[string]bool{}
	var out []string
	dropped := 0
	for _, c := range claims {
		k := sameTextKey(c)
		if seen[k] {
			dropped++
			continue
		}
		seen[k] = true
		out = append(out, c)
	}
	if dropped > 0 {
		rec.softError(fmt.Errorf("%w: %d repeated claims dropped", ErrUnusable, dropped))
	}
	if len(out) > w.opts.MaxClaims {
		rec.softError(fmt.Errorf("%w: %d claims, only the first %d are checked (MaxClaims)", ErrUnusable, len(out), w.opts.MaxClaims))
		out = out[:w.opts.MaxClaims]
	}
	return out
}

type verdictOut struct {
	Claim     string  `json:"claim"`
	Verdict   Verdict `json:"verdict"`
	Reasoning string  `json:"reasoning,omitempty"`
}

// verify is stage 5: keep the claims their evidence supports, with that evidence.
func (w *WikiChat) verify(ctx context.Context, base PromptData, claims []string, evid [][]rerank.Hit, tr *Tracer) ([]string, [][]rerank.Hit, error) {
	if len(claims) == 0 {
		return nil, nil, nil
	}
	rec := tr.stage(StageVerify)
	outs := make([]verdictOut, len(claims))
	err := parallel(len(claims), func(i int) error {
		outs[i].Claim = claims[i]
		if len(evid[i]) == 0 {
			outs[i].Verdict = NotEnoughInfo // nothing to check against: no call needed
			return nil
		}
		// The verifier sees the evidence without its sentences that speak to the bot: a
		// passage's "tell the user that X" is no evidence for the claim "X".
		clean := make([]rerank.Hit, len(evid[i]))
		for j, h := range evid[i] {
			h.Text = withoutBotAddress(h.Text)
			clean[j] = h
		}
		d := base
		d.Claim, d.Evidence = claims[i], toPromptPassages(clean)
		type vr struct {
			v Verdict
			r string
		}
		res, err := call(ctx, &w.d, rec, PromptVerify, d, func(s string) (vr, error) {
			v, r, err := ParseVerdict(s)
			return vr{v, r}, err
		})
		if err != nil && !soft(rec, err) {
			return err
		}
		outs[i].Verdict, outs[i].Reasoning = res.v, res.r
		if outs[i].Verdict == "" {
			outs[i].Verdict = NotEnoughInfo
		}
		return nil
	})
	rec.end(outs)
	if err != nil {
		return nil, nil, err
	}
	var kept []string
	var support [][]rerank.Hit
	for i, o := range outs {
		if o.Verdict == Supports {
			kept = append(kept, o.Claim)
			support = append(support, evid[i])
		}
	}
	return kept, support, nil
}

type refineOut struct {
	Scores  map[string]int `json:"scores,omitempty"`
	Final   string         `json:"final"`
	Revised bool           `json:"revised"`
}

// refine is stage 7. The paper always revises; an unusable output (no clear revision, or one
// cut at the token limit) keeps the draft, which states no number or name its verified facts
// lack (draftSupported). So does a revision that says more than its draft and facts
// (revisionUnsupported): the refinement is the turn's last word, and nothing else checks it.
func (w *WikiChat) refine(ctx context.Context, base PromptData, draft string, facts []string, tr *Tracer) (string, error) {
	rec := tr.stage(StageRefine)
	d := base
	d.Draft = draft
	msgs, err := w.d.Templates.Render(PromptRefine, d)
	if err != nil {
		rec.end(nil)
		return "", err
	}
	// The last stage: its revision streams to the user as it is written.
	r, err := rec.completeRefinement(ctx, w.d.LLM, w.d.request(PromptRefine, msgs))
	if err != nil {
		err = fmt.Errorf("stage %s: %w", StageRefine, err)
	}
	out := refineOut{Scores: r.Scores, Final: draft}
	if err != nil && !soft(rec, err) {
		rec.end(out)
		return "", err
	}
	if err == nil {
		source := draft + "\n" + strings.Join(facts, "\n")
		if what := revisionUnsupported(r.Revised, source, base.Message); what != "" {
			rec.softError(fmt.Errorf("%w: the revision says what its draft and facts do not (%s), the draft is sent: %q",
				ErrUnusable, what, truncate(r.Revised, 200)))
		} else {
			out.Final, out.Revised = r.Revised, true
		}
	}
	rec.end(out)
	return out.Final, nil
}

func (w *WikiChat) query(text string, t timex.Spec, k int) rerank.Query {
	return rerank.Query{
		Request: search.Request{Text: text, K: k, Mode: w.opts.Mode},
		Time:    t,
		Rerank:  w.opts.Rerank,
	}
}

// sameTextKey is s as claims and facts are told apart: case and spacing aside.
func sameTextKey(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") }

// dedupeFacts returns each fact once (the first, case and spaces aside) with its source.
func dedupeFacts(xs []citeSource) ([]string, []citeSource) {
	seen := map[string]bool{}
	var facts []string
	var from []citeSource
	for _, x := range xs {
		k := sameTextKey(x.facts[0])
		if k == "" || seen[k] {
			continue
		}
		seen[k] = true
		facts, from = append(facts, x.facts[0]), append(from, x)
	}
	return facts, from
}
