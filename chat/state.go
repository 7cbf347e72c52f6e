package chat

import (
	"encoding/json"
	"time"
)

// Conversation is the state of one dialogue, kept per conversation id.
type Conversation struct {
	ID      string    `json:"id"`
	Created time.Time `json:"created"`
	Turns   []Turn    `json:"turns"`
	// Memory is MPC's memory pool: persona lines and summarised facts, with their embeddings.
	Memory []MemoryItem `json:"memory,omitempty"`
	// SummarizedThrough is how many turns MPC's summarizer has already read.
	SummarizedThrough int `json:"summarized_through,omitempty"`
	// Topic is the fine-grained topic the commonsense stage tracks.
	Topic string `json:"topic,omitempty"`
	// Dropped counts the oldest turns the store's size caps removed: Turns[0] is turn
	// number Dropped.
	Dropped int `json:"dropped,omitempty"`
	// Usage sums the LLM usage and cost of every turn, dropped ones included.
	Usage Usage `json:"usage"`
}

// Turn is one user message and the bot's reply, with everything behind the reply.
type Turn struct {
	Index    int           `json:"index"` // 0-based
	Pipeline string        `json:"pipeline"`
	User     string        `json:"user"`
	Bot      string        `json:"bot"`
	Time     time.Time     `json:"time"`
	Duration time.Duration `json:"duration_ns"`
	Stages   []StageTrace  `json:"stages"`
	Passages []PassageRef  `json:"passages,omitempty"`
	// Citations are the passages the reply was built from (the facts a WikiChat draft used,
	// MSDP's retrieved knowledge), each once; Passages has everything retrieved.
	Citations []PassageRef `json:"citations,omitempty"`
	// Grounded says that every sentence of Bot passed the attribution check against this
	// turn's passages (wikichat, commonsense); mpc, msdp and sicl replies are not checked.
	Grounded bool `json:"grounded"`
	// Dropped are the sentences the LLM wrote that the attribution check removed, at every
	// stage (summary bullets, claims, draft, refinement, reply).
	Dropped []DroppedSentence `json:"dropped,omitempty"`
	Usage   Usage             `json:"usage"`
}

// DroppedSentence is one sentence of an LLM's text that no passage of the turn supports.
type DroppedSentence struct {
	Stage  string `json:"stage"`
	Text   string `json:"text"`
	Reason string `json:"reason"`
}

// MemoryItem is one entry of MPC's memory pool.
type MemoryItem struct {
	About  string    `json:"about"` // "persona", "user" or "bot"
	Text   string    `json:"text"`
	Turn   int       `json:"turn"` // the turn after which it was written; -1 for the persona
	Vector []float32 `json:"vector,omitempty"`
}

// history returns the last n turns as prompt turns (n <= 0: all). The bot's citation markers
// are left out: their numbers named that turn's passages, and a model shown them reuses them.
func (c *Conversation) history(n int) []PromptTurn {
	turns := c.Turns
	if n > 0 && len(turns) > n {
		turns = turns[len(turns)-n:]
	}
	out := make([]PromptTurn, 0, 2*len(turns))
	for _, t := range turns {
		out = append(out, PromptTurn{"User", clip(t.User, MaxHistoryTurnBytes)}, PromptTurn{"Bot", clip(stripMarkers(t.Bot), MaxHistoryTurnBytes)})
	}
	return out
}

// earlierQueries returns the searches the query stage planned in the last n turns, oldest first,
// read back from their traces.
func (c *Conversation) earlierQueries(n int) []string {
	turns := c.Turns
	if n > 0 && len(turns) > n {
		turns = turns[len(turns)-n:]
	}
	var out []string
	for _, t := range turns {
		for _, st := range t.Stages {
			if st.Stage != StageQuery || len(st.Output) == 0 {
				continue
			}
			var p QueryPlan
			if json.Unmarshal(st.Output, &p) == nil && p.Search && p.Query != "" {
				out = append(out, p.Query)
			}
		}
	}
	return out
}
