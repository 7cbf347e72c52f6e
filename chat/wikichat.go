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
	StageCSResponse = "cs_response"
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
	// CommonsenseResponse is how the commonsense pipeline answers: CommonsensePaper (the
	// default, the paper's section 3.1: one call on the top search result) or
	// CommonsenseWikiChat (WikiChat's stages 2-7 on the commonsense query). Either way every
	// sentence is checked against the passages retrieved.
	CommonsenseResponse string
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

// Commonsense responses (WikiChatOptions.CommonsenseResponse).
const (
	CommonsensePaper    = "paper"
	CommonsenseWikiChat = "wikichat"
)

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
	if o.CommonsenseResponse == "" {
		o.CommonsenseResponse = CommonsensePaper
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
	if o.CommonsenseResponse != CommonsensePaper && o.CommonsenseResponse != CommonsenseWikiChat {
		return fmt.Errorf("commonsense: response %q (want %s or %s; --commonsense-response)", o.CommonsenseResponse, CommonsensePaper, CommonsenseWikiChat)
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

// Respond runs stages 1-2 and 3-4 in parallel, then verification, draft and refinement. Every
// text the LLM adds is checked against the turn's passages (attribution.go): the summary
// bullets and the claims the verifier kept before the draft is given them as facts, the draft
// sentence by sentence, and the refinement sentence by sentence as it streams to the user.
func (w *WikiChat) Respond(ctx context.Context, conv *Conversation, message string, tr *Tracer) (string, error) {
	base := PromptData{Today: w.d.today(), History: conv.history(w.opts.HistoryTurns), Message: message,
		EarlierQueries: conv.earlierQueries(w.opts.HistoryTurns)}
	short := base // for claims, draft and refine
	short.History = conv.history(w.opts.ShortHistoryTurns)
	attr := w.attributor(conv, message)
	tr.ground(attr)
	if w.cs != nil && w.opts.CommonsenseResponse == CommonsensePaper {
		return w.respondCommonsense(ctx, conv, base, attr, tr)
	}
	var (
		plan    QueryPlan
		bullets []string
		sources []rerank.Hit // the passage each bullet came from
		hits    []rerank.Hit // everything stage 2 retrieved
		gen     generated
	)
	err := parallel(2, func(i int) error {
		var err error
		if i == 0 && !w.opts.skips(StageRetrieve) {
			plan, bullets, sources, hits, err = w.retrieveAndSummarize(ctx, conv, base, tr)
		}
		if i == 1 && !w.opts.skips(StageGenerate) {
			gen, err = w.generateAndExtract(ctx, base, short, tr)
		}
		return err
	})
	if err != nil {
		return "", err
	}
	attr.add(hits...)
	for _, ev := range gen.evidence {
		attr.add(ev...)
	}
	b := base
	b.Response = gen.reply // the verifier is shown the reply the claims came from (Table 21)
	kept, support, err := w.verify(ctx, b, gen.claims, gen.evidence, tr)
	if err != nil {
		return "", err
	}
	cands := make([]factCandidate, 0, len(bullets)+len(kept))
	for i, b := range bullets {
		cands = append(cands, factCandidate{text: b, stage: StageSummarize, forQ: plan.Query, from: sources[i : i+1]})
	}
	for i, c := range kept {
		cands = append(cands, factCandidate{text: c, stage: StageVerify, forQ: c, from: support[i]})
	}
	from, err := checkFacts(ctx, attr, cands, tr)
	if err != nil {
		return "", err
	}
	facts, from := dedupeFacts(from)
	g := tr.replyGate()
	var checkedDraft string
	var draftOrder []int // pool passages in the order the checked draft cites them
	if len(facts) > 0 {
		// Each fact is listed with its passage's number, and the draft cites it with that
		// number (cite.go): the numbers say which passages to check its sentences against first.
		lines, srcs := numberFacts(facts, from)
		tr.setSources(srcs)
		marks := make([]int, len(srcs))
		for i, s := range srcs {
			marks[i] = attr.add(s.hit)[0]
		}
		d := short
		d.Facts = lines
		if w.opts.skips(StageRefine) {
			g.markers = marks
			return w.lastStage(ctx, tr, StageDraft, PromptDraft, d)
		}
		rec := tr.stage(StageDraft)
		dg := newReplyGate(attr, tr.maxReplyBytes, nil, tr.drop)
		dg.markers = marks
		msgs, err := w.d.Templates.Render(PromptDraft, d)
		var out Completion
		if err == nil {
			out, err = rec.writeReply(ctx, w.d.LLM, w.d.request(PromptDraft, msgs), dg, false)
		}
		if err != nil {
			rec.end(nil)
			return "", fmt.Errorf("stage %s: %w", StageDraft, err)
		}
		checkedDraft, draftOrder = dg.text(), dg.order
		if checkedDraft == "" {
			rec.softError(unusable("draft sentence that the passages support", out.Text))
		}
		rec.end(checkedDraft)
	}
	// With nothing retrieved and verified, as in the paper (section 3.2), the draft is skipped
	// and "I'm not sure" goes to the refinement, which dresses it up for the conversation.
	// The stage-3 reply is never delivered as it is, not even when the planner saw no need
	// to search and the claims stage found no claim: both are the LLM's own judgement of
	// its own output, and a hallucinating model says "no search" and "None" as readily.
	draft := checkedDraft
	if draft == "" {
		draft = w.opts.NotSure
	}
	if w.opts.skips(StageRefine) {
		g.sendFixed(draft)
		return g.text(), nil
	}
	return w.refine(ctx, short, draft, checkedDraft, draftOrder, tr)
}

// lastStage writes the turn's reply with one LLM stage, streamed sentence by sentence through
// the reply gate; "I'm not sure" when none of it passes.
func (w *WikiChat) lastStage(ctx context.Context, tr *Tracer, stage, prompt string, d PromptData) (string, error) {
	g := tr.replyGate()
	rec := tr.stage(stage)
	_, err := reply(ctx, &w.d, rec, prompt, d)
	rec.end(g.text())
	if err != nil && !soft(rec, err) {
		return "", err
	}
	if g.text() == "" {
		g.sendFixed(w.opts.NotSure)
	}
	return g.text(), nil
}

// attributor starts the turn's attribution check: the user's message and every earlier turn
// of the conversation are never support.
func (w *WikiChat) attributor(conv *Conversation, message string) *attributor {
	texts := []string{message}
	for _, t := range conv.history(0) {
		texts = append(texts, t.Text)
	}
	return newAttributor(w.d.Terms, texts...)
}

// factCandidate is a text an LLM stage offers as a fact for the draft: a summary bullet or a
// claim the verifier kept, with the passages it came from.
type factCandidate struct {
	text, stage, forQ string
	from              []rerank.Hit
}

// checkFacts keeps the candidates the attribution check finds supported, each with the
// passage that supports it (the one it came from when that one does); the others are dropped
// and recorded. A verifier's SUPPORTS is not enough: the claim must stand in its passage.
func checkFacts(ctx context.Context, attr *attributor, cands []factCandidate, tr *Tracer) ([]citeSource, error) {
	var out []citeSource
	for _, c := range cands {
		ch, err := attr.check(ctx, c.text, attr.add(c.from...))
		if err != nil {
			return nil, err
		}
		switch ch.kind {
		case sentFact:
			out = append(out, citeSource{hit: attr.passage(ch.passages[0]), stage: c.stage, forQ: c.forQ, facts: []string{ch.text}})
		case sentChat:
			tr.drop(DroppedSentence{Stage: c.stage, Text: truncate(c.text, 300), Reason: "no fact to check"})
		default:
			tr.drop(DroppedSentence{Stage: c.stage, Text: truncate(c.text, 300), Reason: ch.reason})
		}
	}
	return out, nil
}

// retrieveAndSummarize is stages 1-2: plan a query, retrieve, summarize each passage. It
// returns the plan, the bullets with the passage each came from, and the passages retrieved.
func (w *WikiChat) retrieveAndSummarize(ctx context.Context, conv *Conversation, base PromptData, tr *Tracer) (QueryPlan, []string, []rerank.Hit, []rerank.Hit, error) {
	var plan QueryPlan
	var err error
	if w.cs != nil {
		plan, err = w.cs.plan(ctx, conv, base, tr)
	} else {
		plan, err = w.planQuery(ctx, base, tr)
	}
	if err != nil || !plan.Search || w.opts.PassagesPerQuery == 0 {
		return plan, nil, nil, nil, err
	}
	res, err := w.retrieve(ctx, plan, w.opts.PassagesPerQuery, tr)
	if err != nil {
		return plan, nil, nil, nil, err
	}
	rec := tr.stage(StageSummarize)
	per := make([][]string, len(res.Hits))
	passages := toPromptPassages(res.Hits)
	err = parallel(len(passages), func(i int) error {
		d := base
		d.Query, d.Passage = plan.Query, passages[i]
		b, err := call(ctx, &w.d, rec, PromptSummarize, d, ParseList)
		if err != nil && !soft(rec, err) {
			return err
		}
		// A bullet that speaks to the bot restates an order written in the passage, not a
		// fact; the attribution check reads the passage without its orders too.
		for _, x := range b {
			if addressesBot(x) {
				rec.softError(fmt.Errorf("%w: summary bullet of passage %s speaks to the bot, no fact: %q",
					ErrUnusable, res.Hits[i].ID, truncate(x, 200)))
			} else {
				per[i] = append(per[i], x)
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
	return plan, bullets, sources, res.Hits, err
}

// planQuery is stage 1: the query plan; an unreadable plan searches with the user's own words
// rather than not at all.
func (w *WikiChat) planQuery(ctx context.Context, base PromptData, tr *Tracer) (QueryPlan, error) {
	rec := tr.stage(StageQuery)
	plan, err := call(ctx, &w.d, rec, PromptQuery, base, ParseQueryPlan)
	if err != nil && soft(rec, err) {
		plan, err = QueryPlan{Search: true, Query: base.Message, Time: timex.Spec{Kind: timex.KindAuto}}, nil
	}
	rec.end(plan)
	return plan, err
}

// retrieve runs the plan's query for k passages.
func (w *WikiChat) retrieve(ctx context.Context, plan QueryPlan, k int, tr *Tracer) (rerank.Result, error) {
	rec := tr.stage(StageRetrieve)
	res, err := w.d.Retriever.Retrieve(ctx, w.query(plan.Query, plan.Time, k))
	if err != nil {
		rec.end(nil)
		return res, fmt.Errorf("%w: retrieving for %q: %w", ErrRetrieval, plan.Query, err)
	}
	rec.passages(StageRetrieve, plan.Query, res.Hits)
	rec.end(map[string]any{"query": plan.Query, "time": res.Time, "hits": len(res.Hits)})
	return res, nil
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
			return fmt.Errorf("%w: retrieving evidence for claim %d: %w", ErrRetrieval, i+1, err)
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

// refine is stage 7, the turn's last word: the revision streams to the user sentence by
// sentence through the reply gate, each sentence checked as the draft's were. The paper always
// revises; a revision of which no fact passes (unusable, all its facts dropped, or only its
// pleasantries left, which the gate holds back until a fact passes) gives way to the checked
// draft; on the not-sure path its pleasantries and whatever facts pass are the reply, and
// "I'm not sure" when nothing does.
func (w *WikiChat) refine(ctx context.Context, base PromptData, draft, checkedDraft string, draftOrder []int, tr *Tracer) (string, error) {
	rec := tr.stage(StageRefine)
	d := base
	d.Draft = draft
	msgs, err := w.d.Templates.Render(PromptRefine, d)
	if err != nil {
		rec.end(nil)
		return "", err
	}
	g := tr.replyGate()
	g.markers, g.holdChat = draftOrder, true
	out, err := rec.writeReply(ctx, w.d.LLM, w.d.request(PromptRefine, msgs), g, true)
	g.holdChat = false
	r := refineOut{Final: g.text(), Revised: g.facts > 0 || checkedDraft == "" && g.text() != ""}
	if err != nil {
		rec.end(r)
		return "", fmt.Errorf("stage %s: %w", StageRefine, err)
	}
	if parsed, perr := ParseRefinement(out.Text); perr == nil || len(parsed.Scores) > 0 {
		r.Scores = parsed.Scores
	}
	switch {
	case g.facts > 0:
	case checkedDraft != "":
		g.discardHeld()
		rec.softError(fmt.Errorf("%w: no fact of the revision passed; the checked draft is sent", ErrUnusable))
		g.restart()
		if err := g.write(ctx, StageDraft, checkedDraft); err != nil {
			rec.end(r)
			return "", err
		}
		if err := g.flush(ctx, StageDraft, false); err != nil {
			rec.end(r)
			return "", err
		}
	default:
		g.releaseHeld()
	}
	if g.text() == "" {
		g.sendFixed(w.opts.NotSure)
	}
	r.Final = g.text()
	rec.end(r)
	return g.text(), nil
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
