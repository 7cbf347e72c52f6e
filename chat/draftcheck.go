package chat

import (
	"regexp"
	"strings"
)

// draftSupported returns the sentences of a draft that add no fact of the LLM's own to the
// verified facts it was written from, and the sentences it dropped. The draft is the LLM's
// own writing: "identified in 1922 by Elmer McCollum [1]. Napoleon Bonaparte discovered it in
// 1850." states a fact no stage verified, and the refinement, checked against the draft,
// would keep it. A sentence is dropped for
//   - a number the facts do not hold, in any of their forms (numberSet.missing): a number the user
//     gave is no exception, it is what "Yes, it was 1850" assents to;
//   - a name none of whose words the facts, their passages' titles or the conversation's
//     earlier turns (context) hold, when it
//     has two words or more ("Napoleon Bonaparte"); a lone capitalised word is left alone
//     ("Astronauts fixed it", "in the US");
//   - a name only the user's turn holds, in a sentence that denies nothing: the user's name
//     may be named to be denied ("No, Napoleon did not ...").
//
// Rewording, which the prompt asks for, is not checked.
func draftSupported(draft string, facts, context []string, userMsg string) (string, []string) {
	source := asciiDigits(markerRe.ReplaceAllString(strings.Join(facts, "\n"), ""))
	nums := numbersOf(source)
	named := tokens(source + "\n" + strings.Join(context, "\n"))
	user := tokens(asciiDigits(userMsg))
	var kept strings.Builder
	var dropped []string
	for _, sent := range sentences(draft) {
		text := asciiDigits(markerRe.ReplaceAllString(sent, ""))
		ok := nums.missing(listNumberRe.ReplaceAllString(text, "")) == ""
		for _, name := range missingNames(text, source) {
			run := tokens(name)
			switch {
			case !ok:
			case shareWord(run, named):
			case shareWord(run, user):
				ok = bulletNegationRe.MatchString(text)
			default:
				ok = len(run) < 2
			}
		}
		if ok {
			kept.WriteString(sent)
		} else {
			dropped = append(dropped, strings.TrimSpace(sent))
		}
	}
	return strings.TrimSpace(kept.String()), dropped
}

// listNumberRe is a list item's number at the start of a line ("1. ", "2) ").
var listNumberRe = regexp.MustCompile(`(?m)^[ \t]*(?:[-*•][ \t]*)?[0-9]{1,2}[.)][ \t]`)

// shareWord reports whether a word of run, stop words aside, is among ts.
func shareWord(run, ts []token) bool {
	for _, r := range run {
		if stopwords[r.word] || revisionChatWords[r.word] {
			continue
		}
		for _, t := range ts {
			if t.word == r.word || strings.TrimSuffix(t.word, "s") == strings.TrimSuffix(r.word, "s") {
				return true
			}
		}
	}
	return false
}
