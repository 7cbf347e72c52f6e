// Package chat is Kairos's thin chat layer: it drives a remote OpenAI-compatible LLM through the
// prompt stages of published knowledge-grounded chatbots, with Kairos supplying retrieval,
// prompts, parsing and orchestration. Retrieval and embeddings come in through the small
// Retriever and Encoder interfaces, so this package builds and tests without an index or cgo.
//
// Pipelines (Pipeline, selected by name in a Service):
//   - wikichat: query (+ time need) -> retrieve -> summarize  ||  generate -> claims -> evidence,
//     then verify -> draft -> refine; a summary bullet or a verified claim is a fact of the
//     draft only if a passage of the turn supports it (attribution.go), and "I'm not sure" goes
//     to the refinement whenever nothing is verified: the stage-3 reply itself is never
//     delivered; every sentence of the draft and the refinement is checked the same way, and
//     one that no passage of the turn supports is not sent.
//   - commonsense: wikichat whose query stage tracks the topic and, for passive user turns,
//     plans the search from a commonsense directive.
//   - mpc: clarify -> recall memories -> memory processor -> respond; a summarizer writes
//     facts about the user and bot into the conversation's memory pool every few turns.
//   - msdp: knowledge from bank examples most similar to the context, then a response from
//     examples whose response/knowledge word overlap is in [0.6, 0.9].
//   - sicl: semantic in-context learning (Omidvar and An 2023): the most similar bank sample's
//     answer with no LLM call (search), or a prompt with none, a fixed, the top 1 or top 3
//     samples by similarity to the dialogue, each with the paper's command.
//
// Prompts are text/template files embedded from prompts/; LoadTemplates(dir) replaces any of
// them by dir/<name>.tmpl (names: PromptNames; fields: PromptData). Role marker lines
// ("=== system ===", "=== user ===", "=== assistant ===") split a template's source into chat
// messages before any data is substituted, and every substituted text is one line, so no user
// turn, passage, memory or bank example can add a message or change a role; retrieved text
// always goes through the template function untrusted.
//
// The layer fails closed: every parser treats unclear, negated, contradictory, empty or
// truncated (finish_reason "length" or "content_filter") output as unusable, a claim reaches the draft only with an
// explicit SUPPORTS verdict, and replies are cleaned of control characters.
//
// Every turn records a Turn: per-stage timings (wall and LLM time), token usage, parsed stage
// outputs, unusable outputs that were skipped, the passages retrieved with their ids, and the
// passages the reply cites: WikiChat's draft is given its verified facts numbered by passage,
// and the reply's inline [n] markers are bound to those passages, renumbered in reading order,
// with markers that name no passage removed (cite.go).
//
// A turn given a Stream receives its reply as the last LLM stage writes it (WikiChat's
// refinement, the text after its "Revised response:" label; the draft when refine is skipped;
// the reply stage of the others), cleaned as it goes: a line that starts a stage's format or a
// user turn ends it unseen, and each sentence is sent once the checks have passed it
// (replyGate), so nothing sent is taken back.
// Example banks (BuildBank, ReadBank) are a format of this package: a JSON header line with
// format, version, encoder, dimension, count and the SHA-256 of the body, then one JSON line
// per example with its unit vector.
package chat

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kairos-rag/kairos/rerank"
)

// ErrRetrieval is wrapped by the error of a turn whose retrieval failed. The error's text
// quotes the query, which an LLM may have written: it is for the log, not the user.
var ErrRetrieval = errors.New("retrieval failed")

// Retriever finds passages; rerank.Retriever satisfies it.
type Retriever interface {
	Retrieve(ctx context.Context, q rerank.Query) (rerank.Result, error)
}

// RetrieverFunc adapts a function to Retriever, e.g. chat.RetrieverFunc(engine.Search) for a
// rerank.Retriever.
type RetrieverFunc func(ctx context.Context, q rerank.Query) (rerank.Result, error)

// Retrieve calls f.
func (f RetrieverFunc) Retrieve(ctx context.Context, q rerank.Query) (rerank.Result, error) {
	return f(ctx, q)
}

// Encoder embeds texts (sentence embeddings); embed's encoder satisfies it through an adapter.
type Encoder interface {
	Encode(ctx context.Context, texts []string) ([][]float32, error)
}

// Deps are what pipelines are built from. Which fields a pipeline needs is checked when it is
// built: wikichat needs Retriever, mpc/msdp/sicl need Encoder, msdp/sicl need Bank.
type Deps struct {
	LLM       Completer
	Templates *Templates
	Retriever Retriever
	Encoder   Encoder
	Bank      *Bank
	// Terms tells which words are rare in the index (the attribution check of wikichat and
	// commonsense); nil makes every word rare: every content word of a reply must then be in
	// its passage, or be a synonym of one of its words.
	Terms TermStats
	// Now gives today's date for prompts; default time.Now.
	Now func() time.Time
	// StageOptions are per-prompt sampling settings, keyed by prompt name (PromptNames), or by
	// "pipeline/prompt" for one pipeline's use of a shared prompt ("commonsense/wikichat_draft");
	// a prompt not listed takes DefaultStageOptions' entry, else the client's defaults.
	StageOptions map[string]CallOptions
	// pipeline names the pipeline these deps were given to, for "pipeline/prompt" options.
	pipeline string
}

// CallOptions are the sampling settings of one stage; nil and zero fields take the client's.
type CallOptions struct {
	Temperature *float64 `json:"temperature,omitempty"`
	TopP        *float64 `json:"top_p,omitempty"`
	MaxTokens   int      `json:"max_tokens,omitempty"`
}

// DefaultStageOptions are the settings the papers give for their stages: commonsense-guided
// query generation (section 3.1) samples its query with nucleus sampling, top-p 0.9 and
// temperature 0.7, at most 40 tokens, and its final response likewise at most 100 tokens: here
// the directive, the query, and the response (commonsense_response; the draft when the
// pipeline answers WikiChat's way, CommonsenseWikiChat). Every other stage decodes greedily
// (the client's default) so that its structured output parses reproducibly; WikiChat's own
// draft among them.
func DefaultStageOptions() map[string]CallOptions {
	t, p := 0.7, 0.9
	return map[string]CallOptions{
		PromptCSDirective:            {Temperature: &t, TopP: &p},
		PromptCSQuery:                {Temperature: &t, TopP: &p, MaxTokens: 40},
		PromptCSResponse:             {Temperature: &t, TopP: &p, MaxTokens: 100},
		"commonsense/" + PromptDraft: {Temperature: &t, TopP: &p, MaxTokens: 100},
	}
}

// request builds the LLM request of a prompt with its stage options: the pipeline's own entry
// for the prompt, else the prompt's, first in StageOptions, then in DefaultStageOptions.
func (d *Deps) request(prompt string, msgs []Message) CompletionRequest {
	var o CallOptions
	found := false
	for _, m := range []map[string]CallOptions{d.StageOptions, DefaultStageOptions()} {
		for _, k := range []string{d.pipeline + "/" + prompt, prompt} {
			if v, ok := m[k]; ok && !found {
				o, found = v, true
			}
		}
	}
	return CompletionRequest{Messages: msgs, Temperature: o.Temperature, TopP: o.TopP, MaxTokens: o.MaxTokens}
}

func (d *Deps) today() string {
	now := time.Now
	if d.Now != nil {
		now = d.Now
	}
	return now().Format("2006-01-02")
}

func (d *Deps) check(pipeline string, needRetriever, needEncoder, needBank bool) error {
	var missing []string
	if d.LLM == nil {
		missing = append(missing, "LLM")
	}
	if d.Templates == nil {
		missing = append(missing, "templates")
	}
	if needRetriever && d.Retriever == nil {
		missing = append(missing, "retriever (an index)")
	}
	if needEncoder && d.Encoder == nil {
		missing = append(missing, "encoder")
	}
	if needBank && d.Bank == nil {
		missing = append(missing, "example bank")
	}
	if len(missing) > 0 {
		return fmt.Errorf("pipeline %s needs: %v", pipeline, missing)
	}
	return nil
}

// Pipeline produces the bot's reply to one user message. It may update conv (memory, topic);
// the Service appends the turn itself.
type Pipeline interface {
	Name() string
	// Grounded reports whether every sentence the pipeline replies with is checked against
	// the turn's retrieved passages (attribution): wikichat and commonsense are; mpc, msdp
	// and sicl answer from the LLM, a memory pool or an example bank, and are not.
	Grounded() bool
	Respond(ctx context.Context, conv *Conversation, message string, tr *Tracer) (string, error)
}

// call renders a prompt, calls the LLM, and parses the output. An unusable output is returned as
// an error wrapping ErrUnusable so callers can decide whether it is fatal.
func call[T any](ctx context.Context, d *Deps, rec *stageRec, prompt string, data PromptData, parse func(string) (T, error)) (T, error) {
	var zero T
	msgs, err := d.Templates.Render(prompt, data)
	if err != nil {
		return zero, err
	}
	out, err := rec.complete(ctx, d.LLM, d.request(prompt, msgs))
	if err != nil {
		return zero, err
	}
	v, err := parse(out)
	if err != nil {
		return zero, fmt.Errorf("stage %s: %w", rec.st.Stage, err)
	}
	return v, nil
}

// reply is call for the stage that writes the turn's reply: its text goes through the turn's
// reply gate (Tracer.replyGate), streamed to the client when it streams, and the reply is what
// the gate let through. A text of which nothing passes is unusable.
func reply(ctx context.Context, d *Deps, rec *stageRec, prompt string, data PromptData) (string, error) {
	msgs, err := d.Templates.Render(prompt, data)
	if err != nil {
		return "", err
	}
	g := rec.t.replyGate()
	out, err := rec.writeReply(ctx, d.LLM, d.request(prompt, msgs), g, false)
	if err != nil {
		return "", fmt.Errorf("stage %s: %w", rec.st.Stage, err)
	}
	if g.text() == "" {
		return "", fmt.Errorf("stage %s: %w", rec.st.Stage, unusable("sentence the reply's checks let through", out.Text))
	}
	return g.text(), nil
}

// DefaultNoReply is what mpc, msdp and sicl answer when their last stage gives no usable reply
// (empty, or cut at the token limit): the turn still succeeds, and its trace says why.
const DefaultNoReply = "Sorry, I lost my train of thought. Could you say that again?"

// finalReply is reply for a pipeline's last stage: an unusable output is a trace note and the
// fallback reply, not a failed turn; any other error is returned.
func finalReply(ctx context.Context, d *Deps, rec *stageRec, prompt string, data PromptData) (string, error) {
	out, err := reply(ctx, d, rec, prompt, data)
	if err != nil {
		if soft(rec, err) {
			return DefaultNoReply, nil
		}
		return "", err
	}
	return out, nil
}

// soft turns an unusable-output error into a trace note and reports whether it was soft; any
// other error (LLM down, cancelled) is hard and must stop the turn.
func soft(rec *stageRec, err error) bool {
	if errors.Is(err, ErrUnusable) {
		rec.softError(err)
		return true
	}
	return false
}

// parallel runs f(0..n-1) concurrently (the LLM client bounds real concurrency) and returns the
// first hard error. A panic in f is recovered and reported as an error.
func parallel(n int, f func(i int) error) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for i := range n {
		wg.Go(func() {
			err := func() (err error) {
				defer func() {
					if r := recover(); r != nil {
						err = fmt.Errorf("panic in stage worker %d: %v", i, r)
					}
				}()
				return f(i)
			}()
			if err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return first
}

func toPromptPassages(hits []rerank.Hit) []PromptPassage {
	out := make([]PromptPassage, len(hits))
	for i, h := range hits {
		out[i] = PromptPassage{ID: h.ID, Title: h.Title, Text: h.Text, Date: h.Date}
	}
	return out
}
