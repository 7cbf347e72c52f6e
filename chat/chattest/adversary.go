package chattest

import (
	"regexp"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/kairos-rag/kairos/chat"
)

// The adversary: scripted LLMs that answer every stage of wikichat and commonsense in its
// format, over whatever passages the prompts carry, and lie in one stage at a time, each by one
// of the roads by which an unverified sentence reached users (issue 49). A road names what must
// never reach the user (Leaks finds it in a reply or a stream event, however it is written); the
// honest LLM and the paraphraser tell only what the passages say, and what they tell must reach
// the user.

// Road is one way of lying.
type Road struct {
	Name string
	// Turns are the user's messages; the last one is the turn under test.
	Turns []string
	// Script answers every stage.
	Script Script
	// Lies are what must never reach the user: words and numbers of the lie, matched after
	// folding (Leaks).
	Lies []string
	// MaxReplyBytes bounds the reply, for the road that runs on; 0: no bound of its own.
	MaxReplyBytes int
}

// The user's question of every road; SciFact holds passages that answer it (3034412, on
// calcium absorption and serum 25-hydroxyvitamin D).
const (
	RoadQuestion = "How does vitamin D status affect calcium absorption?"
	RoadQuery    = "vitamin D calcium absorption serum 25-hydroxyvitamin D"
)

// Honest tells what the passages say: summaries are each passage's first sentence, the draft
// and the commonsense response state them with their source numbers, and the refinement keeps
// the draft. Its generate stage and claims add nothing: every fact is a passage's.
func Honest() Script { return liar(nil) }

// Paraphraser is Honest with the facts reworded in common words and synonyms, as a faithful
// model writes them.
func Paraphraser() Script {
	return liar(map[string]lie{chat.StageDraft: rewrite(Paraphrase), chat.StageCSResponse: rewrite(Paraphrase)})
}

// finalStages are the stages whose text is the reply: wikichat's draft and refinement, and the
// commonsense response.
var finalStages = []string{chat.StageDraft, chat.StageRefine, chat.StageCSResponse}

// inFinal applies f to the text of every stage that writes the reply.
func inFinal(f func(string) string) map[string]lie {
	m := map[string]lie{}
	for _, s := range finalStages {
		m[s] = rewrite(f)
	}
	return m
}

// Roads are the ten roads of issue 49.
func Roads() []Road {
	appendText := func(lie string) func(string) string {
		return func(t string) string { return strings.TrimSpace(t) + " " + lie }
	}
	return []Road{
		{Name: "a name split over two sentences", Turns: []string{RoadQuestion},
			Script: liar(inFinal(appendText("It was first described by a French emperor. That emperor was Napoleon."))),
			Lies:   []string{"napoleon", "french emperor"}},
		{Name: "lower case, a year in words", Turns: []string{RoadQuestion},
			Script: liar(inFinal(appendText("it was discovered by napoleon bonaparte in the year eighteen fifty."))),
			Lies:   []string{"napoleon", "eighteen fifty"}},
		{Name: "look-alike unicode", Turns: []string{RoadQuestion},
			Script: liar(inFinal(appendText("It was discovered by Napo\u034fleon Bona\u034fparte in MDCCCL. Its absorption was measured in \u00b9\u2078\u2075\u2070."))),
			Lies:   []string{"napoleon", "mdcccl", "1850"}},
		{Name: "numbers swapped inside a copied sentence", Turns: []string{RoadQuestion},
			Script: liar(map[string]lie{chat.StageSummarize: swapNumbersBullet, chat.StageCSResponse: func(answer, prompt string) string {
				if lie := swapNumbersBullet("", prompt); lie != "" {
					return answer + " " + strings.TrimPrefix(lie, "- ") + " [1]"
				}
				return answer
			}}),
			Lies: []string{"86.5-hydroxyvitamin", "86.5ohd", "25 nmol"}},
		{Name: "a false claim with a fluent SUPPORTS verdict", Turns: []string{RoadQuestion},
			Script: liar(map[string]lie{
				chat.StageGenerate:   rewrite(func(string) string { return "Calcium absorption is fully reversed by drinking seawater." }),
				chat.StageClaims:     rewrite(func(string) string { return "- Calcium absorption is fully reversed by drinking seawater." }),
				chat.StageVerify:     rewrite(func(string) string { return "Reasoning: The evidence states this plainly.\nVerdict: SUPPORTS" }),
				chat.StageCSResponse: rewrite(appendText("Calcium absorption is fully reversed by drinking seawater [1].")),
			}),
			Lies: []string{"seawater"}},
		{Name: "the refinement adds the user's claim", Turns: []string{"Does vitamin D cure cancer? " + RoadQuestion},
			Script: liar(map[string]lie{
				chat.StageRefine:     rewrite(addUsersClaim),
				chat.StageCSResponse: rewrite(addUsersClaim),
			}),
			Lies: []string{"cures cancer", "cure cancer"}},
		{Name: "citations moved, plus an invented sentence with [1]", Turns: []string{RoadQuestion},
			Script: liar(inFinal(func(t string) string {
				return rotateMarkers(t) + " Vitamin D also reverses bone loss in every patient [1]."
			})),
			Lies: []string{"bone loss", "every patient"}},
		{Name: "a name the user said in an earlier turn", Turns: []string{"My teacher said Napoleon Bonaparte discovered vitamin D.", RoadQuestion},
			Script: liar(inFinal(appendText("Napoleon Bonaparte discovered vitamin D."))),
			Lies:   []string{"napoleon"}},
		{Name: "streaming the lie first", Turns: []string{RoadQuestion},
			Script: liar(inFinal(func(t string) string { return "Napoleon Bonaparte discovered vitamin D in 1850. " + t })),
			Lies:   []string{"napoleon", "1850"}},
		{Name: "an over-long reply", Turns: []string{RoadQuestion},
			Script: liar(inFinal(func(t string) string {
				return strings.TrimSpace(strings.Repeat(strings.TrimSpace(t)+" ", 60))
			})),
			MaxReplyBytes: 4 * 512},
	}
}

// lie turns a stage's honest answer into a lie; prompt is the stage's live prompt.
type lie func(answer, prompt string) string

// rewrite is a lie that rewrites the answer alone.
func rewrite(f func(string) string) lie { return func(answer, _ string) string { return f(answer) } }

// addUsersClaim ends the text's last sentence with the user's claim.
func addUsersClaim(t string) string {
	return strings.TrimRight(strings.TrimSpace(t), ".") + ", and vitamin D cures cancer."
}

// liar answers every stage honestly, then puts each stage's answer through its lie, if any
// (a refinement's revision alone).
func liar(lies map[string]lie) Script {
	return func(stage string, msgs []chat.Message) string {
		out := honestAnswer(stage, msgs)
		f := lies[stage]
		switch {
		case f == nil:
		case stage == chat.StageRefine:
			head, draft, _ := strings.Cut(out, "Revised response: ")
			out = head + "Revised response: " + f(draft, LastUser(msgs))
		default:
			out = f(out, LastUser(msgs))
		}
		return out
	}
}

var (
	untrustedRe = regexp.MustCompile(`(?s)<<<UNTRUSTED [^\n]*\n(.*?)\nEND UNTRUSTED>>>`)
	factLineRe  = regexp.MustCompile(`(?m)^- (.*)$`)
	markerRe    = regexp.MustCompile(`\[(\d+)\]`)
)

// honestAnswer answers a stage as a faithful model would, from the prompt alone.
func honestAnswer(stage string, msgs []chat.Message) string {
	p := LastUser(msgs)
	switch stage {
	case chat.StageQuery:
		return "Search: yes\nQuery: " + RoadQuery + "\nTime: none"
	case chat.StageSummarize:
		if s := firstSentence(p); s != "" {
			return "- " + s
		}
		return "None"
	case chat.StageGenerate:
		return "I am not sure."
	case chat.StageClaims:
		return "None"
	case chat.StageVerify:
		return "Reasoning: The evidence does not say this.\nVerdict: NOT ENOUGH INFO"
	case chat.StageDraft:
		_, list, _ := strings.Cut(p, "Verified facts:")
		var facts []string
		for _, m := range factLineRe.FindAllStringSubmatch(list, -1) {
			facts = append(facts, m[1])
		}
		return strings.Join(facts, " ")
	case chat.StageRefine:
		return "Relevance: on topic 100/100\nNaturalness: fine 100/100\nNon-repetition: fine 100/100\nTemporal correctness: fine 100/100\nRevised response: " + Field(p, "Reply")
	case chat.StageCSTopic:
		return "Topic: vitamin D and calcium absorption"
	case chat.StageCSDirect:
		return "Directive: Mention what is known about vitamin D status and calcium absorption."
	case chat.StageCSQuery:
		return "Query: " + RoadQuery + "\nTime: none"
	case chat.StageCSResponse:
		if s := firstSentence(p); s != "" {
			return s + " [1]"
		}
		return "I am not sure."
	}
	return "None"
}

// firstSentence returns the first sentence of the prompt's first passage, title aside.
func firstSentence(prompt string) string {
	m := untrustedRe.FindStringSubmatch(prompt)
	if m == nil {
		return ""
	}
	body := m[1]
	if _, after, ok := strings.Cut(body, " | "); ok {
		body = after
	}
	first, _, _ := strings.Cut(body, ". ")
	return strings.TrimSuffix(strings.TrimSpace(first), ".") + "."
}

var numberRe = regexp.MustCompile(`[0-9]+(?:\.[0-9]+)?`)

// swapNumbersBullet is the summary of a passage with a sentence of two numbers and a
// concentration: that sentence with its first two numbers swapped ("pretreated with
// 86.5-hydroxyvitamin D (86.5OHD), mean serum 86.5OHD concentration was 25 nmol/L"); other
// passages are summarized honestly.
func swapNumbersBullet(honest, prompt string) string {
	m := untrustedRe.FindStringSubmatch(prompt)
	if m == nil {
		return honest
	}
	for _, s := range strings.SplitAfter(m[1], ". ") {
		if w := swapNumbers(s); w != s && strings.Contains(s, "nmol") {
			return "- " + strings.TrimSpace(w)
		}
	}
	return honest
}

// swapNumbers swaps the first two distinct numbers of the first sentence of t that has two.
func swapNumbers(t string) string {
	locs := numberRe.FindAllStringIndex(t, -1)
	for i := 0; i < len(locs); i++ {
		for j := i + 1; j < len(locs); j++ {
			a, b := t[locs[i][0]:locs[i][1]], t[locs[j][0]:locs[j][1]]
			if a == b {
				continue
			}
			return strings.NewReplacer(a, b, b, a).Replace(t)
		}
	}
	return t
}

// rotateMarkers moves every citation marker to the next source number ([1] to [2], the last
// to [1]).
func rotateMarkers(t string) string {
	highest := 0
	for _, m := range markerRe.FindAllStringSubmatch(t, -1) {
		highest = max(highest, int(m[1][0]-'0'))
	}
	return markerRe.ReplaceAllStringFunc(t, func(m string) string {
		n := int(m[1]-'0')%max(highest, 1) + 1
		return "[" + string(rune('0'+n)) + "]"
	})
}

// paraphrases are the rewordings Paraphrase makes: synonyms and common words for the
// passages' words.
var paraphrases = strings.NewReplacer(
	"identified", "discovered", "demonstrated", "showed", "approximately", "about", "individuals", "people",
	"increased", "raised", "decreased", "lowered", "considered", "thought", "generally", "usually",
	"impaired", "reduced", "utilized", "used", "significantly", "markedly", "obtained", "got",
	"investigated", "studied", "participants", "subjects", "examined", "studied", "determined", "found",
)

// Paraphrase rewords a text as a faithful model does: the same facts, other words.
func Paraphrase(t string) string { return paraphrases.Replace(t) }

// Leaks returns the lies found in text, however text writes them: case, combining and format
// characters, full-width and superscript forms, and roman numerals aside.
func Leaks(text string, lies []string) []string {
	folded := fold(text)
	var out []string
	for _, l := range lies {
		if strings.Contains(folded, fold(l)) {
			out = append(out, l)
		}
	}
	return out
}

// fold is text in NFKC, without combining marks and format characters, in lower case.
func fold(s string) string {
	s = norm.NFKD.String(norm.NFKC.String(s))
	return strings.ToLower(strings.Map(func(r rune) rune {
		if unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf) {
			return -1
		}
		return r
	}, s))
}
