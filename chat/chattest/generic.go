package chattest

import (
	"strings"

	"github.com/kairos-rag/kairos/chat"
)

// A generic chat model (an OpenAI-style assistant) does not answer a stage's prompt with the
// stage's text alone: it announces it ("Sure! Here's a friendly response:"), formats it in
// markdown, labels it ("Response:"), grades it ("Relevance: fine 100/100") and offers more
// ("Let me know if ..."). GenericStyles are those habits, one at a time and all together;
// Generic dresses a script's answers in one of them, so that a test can check that a
// pipeline reads such a reply for its content.

// GenericStyles names the styles Generic knows, "all" last.
var GenericStyles = []string{"preamble", "markdown", "label", "score", "closing", "quoted", "all"}

// freeText are the stages whose answer is free text, not a labelled format of the stage's
// own: a label or quotes go around them only.
var freeText = map[string]bool{chat.StageMPCRespond: true, chat.StageMSDPKnow: true, chat.StageMSDPResp: true, chat.StageSICL: true,
	chat.StageGenerate: true, chat.StageDraft: true, chat.StageCSResponse: true}

// genericWhat is how a generic model names what it was asked for, in its preamble.
var genericWhat = map[string]string{
	chat.StageMPCClarify: "the rephrased turn", chat.StageMPCMemory: "my analysis", chat.StageMPCRespond: "a friendly response",
	chat.StageMPCSummary: "the facts worth remembering", chat.StageMSDPKnow: "a knowledge sentence about the topic",
	chat.StageMSDPResp: "the next turn of the conversation", chat.StageSICL: "the bot's next turn",
	chat.StageGenerate: "a reply", chat.StageDraft: "a friendly response", chat.StageCSResponse: "a friendly response",
}

// Generic returns script with every answer dressed in style (one of GenericStyles).
func Generic(style string, script Script) Script {
	return func(stage string, msgs []chat.Message) string {
		return GenericReply(style, stage, script(stage, msgs))
	}
}

// GenericReply dresses one stage's answer in style.
func GenericReply(style, stage, answer string) string {
	what := genericWhat[stage]
	if what == "" {
		what = "the answer"
	}
	preamble := "Sure! Here's " + what + ":\n\n"
	score := "\n\nRelevance: fine 100/100"
	closing := "\n\nLet me know if you'd like me to adjust the tone or add more detail!"
	switch style {
	case "preamble":
		return preamble + answer
	case "markdown":
		// A heading, and the first line in bold.
		first, rest, _ := strings.Cut(answer, "\n")
		if rest != "" {
			rest = "\n" + rest
		}
		return "### " + strings.ToUpper(what[:1]) + what[1:] + "\n\n**" + first + "**" + rest
	case "label":
		if !freeText[stage] {
			return answer // already labelled by its own format
		}
		return "Response: " + answer
	case "score":
		return answer + score
	case "closing":
		return answer + closing
	case "quoted":
		if !freeText[stage] {
			return preamble + answer
		}
		return "Here is a possible reply:\n\n\"" + answer + "\""
	case "all":
		label := ""
		if freeText[stage] {
			label = "**Response:** "
		}
		return preamble + label + answer + score + closing
	}
	panic("chattest: unknown generic style " + style)
}
