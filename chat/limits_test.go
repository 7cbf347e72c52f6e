package chat

import (
	"strings"
	"testing"
)

// Earlier turns and memories reach prompts clipped, whatever was stored.
func TestPromptsClipHistoryAndMemory(t *testing.T) {
	conv := &Conversation{Turns: []Turn{{User: strings.Repeat("u", 8192), Bot: strings.Repeat("é", 1<<20)}}}
	d := PromptData{History: conv.history(3), Memories: []string{strings.Repeat("m", 5000)}, Memory: strings.Repeat("n", 5000)}.sanitized()
	for _, tt := range d.History {
		if len(tt.Text) > MaxHistoryTurnBytes || !strings.HasSuffix(tt.Text, "…") {
			t.Errorf("%s turn of %d bytes in a prompt, cap %d", tt.Speaker, len(tt.Text), MaxHistoryTurnBytes)
		}
	}
	if len(d.Memories[0]) > MaxMemoryBytes || len(d.Memory) > MaxMemoryBytes {
		t.Errorf("memories of %d and %d bytes in a prompt, cap %d", len(d.Memories[0]), len(d.Memory), MaxMemoryBytes)
	}
}
