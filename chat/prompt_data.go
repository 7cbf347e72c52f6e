package chat

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// PromptData is what every template is executed with. Each template uses the fields its stage
// sets; the others are zero. Override templates may use any field documented here.
type PromptData struct {
	Today   string       // "2006-01-02", for resolving relative time
	History []PromptTurn // earlier turns, oldest first (the current user turn is Message)
	Message string       // the user's current turn

	Query string // wikichat_summarize: the search query
	// EarlierQueries are the searches of earlier turns, oldest first (wikichat_query), so the
	// planner can follow up on them as the paper's query stage does.
	EarlierQueries []string
	Passage        PromptPassage   // wikichat_summarize: the passage to summarize
	Response       string          // wikichat_claims: the reply to extract claims from
	Claim          string          // wikichat_verify
	Evidence       []PromptPassage // wikichat_verify
	Facts          []string        // wikichat_draft: kept bullet points and supported claims
	Draft          string          // wikichat_refine
	Topic          string          // commonsense_*, msdp_*: the (fine-grained) topic
	Directive      string          // commonsense_query
	Clarified      string          // mpc_memory: the clarified user turn
	Memories       []string        // mpc_memory: retrieved memories
	Memory         string          // mpc_respond: the processed memory
	LastTurn       string          // msdp_*: the last turn of the dialogue
	Knowledge      string          // msdp_response
	Examples       []PromptExample // msdp_*, sicl: examples chosen from the bank
	Command        string          // sicl: the paper's command for the chosen approach
	// SystemTurn is the bot's previous turn (msdp_response), "" on the first turn.
	SystemTurn string
	// KnowledgeRetrieved marks Knowledge as a retrieved passage (msdp_response shows it as
	// untrusted data) rather than generated text.
	KnowledgeRetrieved bool
}

// PromptTurn is one turn of dialogue as shown to the model.
type PromptTurn struct {
	Speaker string // "User" or "Bot"
	Text    string
}

// PromptPassage is a retrieved passage as shown to the model (always through `untrusted`).
type PromptPassage struct {
	ID    string
	Title string
	Text  string
	Date  time.Time
}

// Dated is " (dated YYYY-MM-DD)" when the passage has a date, else "".
func (p PromptPassage) Dated() string {
	if p.Date.IsZero() {
		return ""
	}
	return " (dated " + p.Date.Format("2006-01-02") + ")"
}

// PromptExample is one bank example as shown in few-shot prompts.
type PromptExample struct {
	SystemTurn string // msdp_response: the system turn before LastTurn, "" if none
	Topic      string
	LastTurn   string
	Knowledge  string
	Response   string
	Context    []PromptTurn // sicl: the example's dialogue before Response
}

// sanitized returns a copy whose free-text fields are each one line with no control or
// line-separator characters. Prompts show dialogue as "User: ..." / "Bot: ..." lines and ask for
// labeled lines back, so a newline inside a user turn, a memory, a claim or a bank example could
// forge a turn or a label; on one line it cannot. Passages keep their lines: they are shown
// inside the untrusted block, which defuses its own delimiters.
func (d PromptData) sanitized() PromptData {
	d.Message = oneLine(d.Message)
	d.History = sanitizeTurns(d.History)
	d.Query, d.Response, d.Claim, d.Draft = oneLine(d.Query), oneLine(d.Response), oneLine(d.Claim), oneLine(d.Draft)
	d.Topic, d.Directive, d.Clarified = oneLine(d.Topic), oneLine(d.Directive), oneLine(d.Clarified)
	d.Memory, d.LastTurn, d.Knowledge = oneLine(d.Memory), oneLine(d.LastTurn), oneLine(d.Knowledge)
	d.SystemTurn, d.Command = oneLine(d.SystemTurn), oneLine(d.Command)
	d.Facts = oneLines(d.Facts)
	d.Memories = oneLines(d.Memories)
	for i, m := range d.Memories {
		d.Memories[i] = clip(m, MaxMemoryBytes)
	}
	d.Memory = clip(d.Memory, MaxMemoryBytes)
	d.EarlierQueries = oneLines(d.EarlierQueries)
	d.Passage = sanitizePassage(d.Passage)
	ev := make([]PromptPassage, len(d.Evidence))
	for i, p := range d.Evidence {
		ev[i] = sanitizePassage(p)
	}
	d.Evidence = ev
	ex := make([]PromptExample, len(d.Examples))
	for i, e := range d.Examples {
		ex[i] = PromptExample{SystemTurn: oneLine(e.SystemTurn), Topic: oneLine(e.Topic), LastTurn: oneLine(e.LastTurn), Knowledge: oneLine(e.Knowledge),
			Response: oneLine(e.Response), Context: sanitizeTurns(e.Context)}
	}
	d.Examples = ex
	return d
}

func sanitizePassage(p PromptPassage) PromptPassage {
	p.ID, p.Title = oneLine(p.ID), oneLine(p.Title)
	return p
}

func sanitizeTurns(ts []PromptTurn) []PromptTurn {
	out := make([]PromptTurn, len(ts))
	for i, t := range ts {
		out[i] = PromptTurn{Speaker: oneLine(t.Speaker), Text: clip(oneLine(t.Text), MaxHistoryTurnBytes)}
	}
	return out
}

func oneLines(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = oneLine(x)
	}
	return out
}

// oneLine replaces every control, line or paragraph separator and format character by a space
// and collapses runs of spaces.
func oneLine(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == utf8.RuneError
	}), " ")
}
