package chat

import (
	"encoding/json"
	"slices"
)

// capConversation applies a store's size caps: the oldest turns go first, past MaxTurns or
// MaxHistoryBytes, then the oldest summarised memories past MaxMemoryBytes. The pipelines
// read only the last few turns and the best-matching memories, so what goes is what they
// would have read least; the latest turn is always kept.
func capConversation(c *Conversation, o StoreOptions) {
	drop := max(0, len(c.Turns)-o.MaxTurns)
	size := 0
	sizes := make([]int, len(c.Turns))
	for i, t := range c.Turns {
		b, _ := json.Marshal(t)
		sizes[i] = len(b)
		size += len(b)
	}
	for i := 0; i < drop; i++ {
		size -= sizes[i]
	}
	for drop < len(c.Turns)-1 && size > o.MaxHistoryBytes {
		size -= sizes[drop]
		drop++
	}
	if drop > 0 {
		c.Turns = slices.Delete(c.Turns, 0, drop)
		c.Dropped += drop
		// MPC's summarizer counts the turns it has read in the slice: keep it pointing at
		// the same turns.
		c.SummarizedThrough = max(0, c.SummarizedThrough-drop)
	}
	mem := 0
	for _, it := range c.Memory {
		mem += memoryItemBytes(it)
	}
	for mem > o.MaxMemoryBytes {
		i := slices.IndexFunc(c.Memory, func(it MemoryItem) bool { return it.About != "persona" })
		if i < 0 {
			break // only the persona is left, and it is the bot's identity
		}
		mem -= memoryItemBytes(c.Memory[i])
		c.Memory = slices.Delete(c.Memory, i, i+1)
	}
}

// memoryItemBytes is what one memory costs: its text and its vector (4 bytes a dimension).
func memoryItemBytes(it MemoryItem) int { return len(it.About) + len(it.Text) + 4*len(it.Vector) }
