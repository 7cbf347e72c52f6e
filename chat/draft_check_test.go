package chat_test

import (
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/chat"
)

// A draft that adds a fact of its own to its verified facts ("in 1850", "Napoleon Bonaparte",
// "five experiments") loses that sentence and keeps the verified one, with or without the
// refinement after it: the refinement, checked against the draft, would otherwise carry the
// addition to the user.
func TestDraftAddsNoFact(t *testing.T) {
	for _, tc := range []struct{ draft, invented string }{
		{"Vitamin D was identified in 1922 by Elmer McCollum [1]. Napoleon Bonaparte discovered it in 1850 while studying rickets.", "Napoleon"},
		{"Vitamin D was identified in 1922 by Elmer McCollum [1]. He needed five experiments on rats to find it.", "five"},
	} {
		resp, _ := roadTurn(t, map[string]string{
			chat.StageDraft:  tc.draft,
			chat.StageClaims: "None",
		}, "Who discovered vitamin D?")
		if strings.Contains(resp.Response, tc.invented) || strings.Contains(resp.Response, "1850") {
			t.Errorf("the draft's own fact (%s) reached the user: %q", tc.invented, resp.Response)
		}
		if !strings.Contains(resp.Response, "1922") {
			t.Errorf("the verified sentence was lost: %q", resp.Response)
		}
	}
}
