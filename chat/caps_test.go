package chat

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCapConversation(t *testing.T) {
	turns := func(n int) []Turn {
		out := make([]Turn, n)
		for i := range out {
			out[i] = Turn{Index: i, User: strings.Repeat("u", 100), Bot: strings.Repeat("b", 100)}
		}
		return out
	}
	mem := func(abouts ...string) []MemoryItem {
		var out []MemoryItem
		for i, a := range abouts {
			out = append(out, MemoryItem{About: a, Text: strings.Repeat("m", 96), Turn: i, Vector: make([]float32, 25)}) // 1+96+100 ~ 200 bytes
		}
		return out
	}
	b, _ := json.Marshal(turns(1)[0])
	one := len(b) // the JSON of one turn, what MaxHistoryBytes counts
	big := StoreOptions{MaxTurns: 1000, MaxHistoryBytes: 1 << 20, MaxMemoryBytes: 1 << 20}
	for _, tt := range []struct {
		name                   string
		conv                   Conversation
		o                      StoreOptions
		wantTurns, wantDropped int
		wantSummarized         int
		wantMemory             string // About of the items kept
	}{
		{"under every cap", Conversation{Turns: turns(3), SummarizedThrough: 3, Memory: mem("persona", "user")}, big, 3, 0, 3, "persona user"},
		{"max turns", Conversation{Turns: turns(5), SummarizedThrough: 3}, StoreOptions{MaxTurns: 2, MaxHistoryBytes: 1 << 20, MaxMemoryBytes: 1}, 2, 3, 0, ""},
		{"history bytes keep the latest turn", Conversation{Turns: turns(4), SummarizedThrough: 4}, StoreOptions{MaxTurns: 10, MaxHistoryBytes: 1, MaxMemoryBytes: 1}, 1, 3, 1, ""},
		{"history bytes keep what fits", Conversation{Turns: turns(4), Dropped: 2}, StoreOptions{MaxTurns: 10, MaxHistoryBytes: 2*one + 1, MaxMemoryBytes: 1}, 2, 4, 0, ""},
		{"memory drops oldest facts, never the persona", Conversation{Turns: turns(1), Memory: mem("persona", "user", "bot", "user")}, StoreOptions{MaxTurns: 10, MaxHistoryBytes: 1 << 20, MaxMemoryBytes: 500}, 1, 0, 0, "persona user"},
		{"persona over the cap stays", Conversation{Turns: turns(1), Memory: mem("persona", "persona", "user")}, StoreOptions{MaxTurns: 10, MaxHistoryBytes: 1 << 20, MaxMemoryBytes: 1}, 1, 0, 0, "persona persona"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.conv
			capConversation(&c, tt.o)
			var abouts []string
			for _, m := range c.Memory {
				abouts = append(abouts, m.About)
			}
			if len(c.Turns) != tt.wantTurns || c.Dropped != tt.wantDropped || c.SummarizedThrough != tt.wantSummarized || strings.Join(abouts, " ") != tt.wantMemory {
				t.Errorf("turns %d dropped %d summarized %d memory %q; want %d %d %d %q", len(c.Turns), c.Dropped, c.SummarizedThrough, abouts,
					tt.wantTurns, tt.wantDropped, tt.wantSummarized, tt.wantMemory)
			}
			if len(c.Turns) > 0 && c.Turns[len(c.Turns)-1].Index != len(tt.conv.Turns)-1 {
				t.Errorf("the latest turn was dropped")
			}
		})
	}
}
