package chat_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/chat"
)

// A claims output that repeats one claim and lists dozens more costs at most MaxClaims
// retrievals and verification calls, each claim checked once.
func TestWikiChatClaimsDistinctAndCapped(t *testing.T) {
	var list strings.Builder
	for range 30 {
		list.WriteString("- Vitamin D was identified in 1922.\n")
	}
	for i := range 25 {
		fmt.Fprintf(&list, "- Vitamin D fact number %d holds.\n", i+1)
	}
	_, llm := roadTurn(t, map[string]string{chat.StageClaims: list.String()}, "Who identified vitamin D?")
	verified := llm.stage(chat.StageVerify)
	if len(verified) > chat.DefaultMaxClaims {
		t.Errorf("%d verification calls, want at most %d", len(verified), chat.DefaultMaxClaims)
	}
	var claims []string
	for _, p := range verified {
		c, _, _ := strings.Cut(p[strings.LastIndex(p, "Claim:")+len("Claim:"):], "\n")
		claims = append(claims, strings.TrimSpace(c))
	}
	slices.Sort(claims)
	if n := len(slices.Compact(slices.Clone(claims))); n != len(claims) {
		t.Errorf("a claim was verified more than once: %q", claims)
	}
	t.Logf("%d verification calls: %q", len(verified), claims)
	if len(verified) == 0 {
		t.Fatal("no claim was verified")
	}
}
