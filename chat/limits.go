package chat

import (
	"strings"
	"unicode/utf8"
)

// Size limits on what an LLM writes and what the prompts carry forward. An LLM that does not
// stop (or a server that ignores max_tokens) must not put megabytes into a reply, the stored
// conversation, and every later prompt.
const (
	// MaxReplyBytes is the longest reply delivered; a longer output is unusable and the
	// pipeline's fallback is delivered instead.
	MaxReplyBytes = 16 << 10
	// MaxHistoryTurnBytes is the most of one earlier user or bot turn a prompt shows.
	MaxHistoryTurnBytes = 2 << 10
	// MaxMemoryBytes is the longest memory the MPC pool keeps; longer facts are refused.
	MaxMemoryBytes = 300
	// MaxMemoryItems is the size of the MPC memory pool: past it, the oldest summarised facts
	// (never the persona) are forgotten.
	MaxMemoryItems = 500
)

// clip cuts s to at most n bytes at a character boundary, marking the cut with "…".
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.TrimSpace(s[:cut]) + "…"
}
