package chat_test

import (
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/chat"
)

// A draft that adds a fact of its own to its verified facts ("in 1850", "Napoleon Bonaparte")
// loses that sentence and keeps the verified one, with or without the refinement after it: the
// refinement, checked against the draft, would otherwise carry the addition to the user.
func TestDraftAddsNoFact(t *testing.T) {
	const draft = "Vitamin D was identified in 1922 by Elmer McCollum [1]. Napoleon Bonaparte discovered it in 1850 while studying rickets."
	resp, _ := roadTurn(t, map[string]string{
		chat.StageDraft:  draft,
		chat.StageClaims: "None",
	}, "Who discovered vitamin D?")
	if strings.Contains(resp.Response, "1850") || strings.Contains(resp.Response, "Napoleon") {
		t.Errorf("the draft's own fact reached the user: %q", resp.Response)
	}
	if !strings.Contains(resp.Response, "1922") {
		t.Errorf("the verified sentence was lost: %q", resp.Response)
	}
}
