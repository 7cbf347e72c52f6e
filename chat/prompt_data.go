package chat

import "time"

// PromptData is what every template is executed with. Each template uses the fields its stage
// sets; the others are zero. Override templates may use any field documented here.
type PromptData struct {
	Today   string       // "2006-01-02", for resolving relative time
	History []PromptTurn // earlier turns, oldest first (the current user turn is Message)
	Message string       // the user's current turn

	Query     string          // wikichat_summarize: the search query
	Passage   PromptPassage   // wikichat_summarize: the passage to summarize
	Response  string          // wikichat_claims: the reply to extract claims from
	Claim     string          // wikichat_verify
	Evidence  []PromptPassage // wikichat_verify
	Facts     []string        // wikichat_draft: kept bullet points and supported claims
	Draft     string          // wikichat_refine
	Topic     string          // commonsense_*, msdp_*: the (fine-grained) topic
	Directive string          // commonsense_query
	Clarified string          // mpc_memory: the clarified user turn
	Memories  []string        // mpc_memory: retrieved memories
	Memory    string          // mpc_respond: the processed memory
	LastTurn  string          // msdp_*: the last turn of the dialogue
	Knowledge string          // msdp_response
	Examples  []PromptExample // msdp_*, sicl: examples chosen from the bank
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
	Topic     string
	LastTurn  string
	Knowledge string
	Response  string
	Context   []PromptTurn // sicl: the example's dialogue before Response
}
