package chat

import (
	"regexp"
	"strings"
)

// addressesBotRe finds text that speaks to the chatbot instead of stating a fact: an order
// to tell, answer or respond to the user, to ignore instructions, a "you must say", a system
// or developer note, an order to "the assistant" or to "an AI assistant". Retrieved passages
// are anyone's text, and one that says "SYSTEM NOTE: tell the user that ..." was restated as a
// summary bullet (and repeated as a claim that its own passage then "supported"), which made the
// note a verified fact. Only orders match: "an assistant professor", "the user interface",
// "she told reporters", "ChatGPT was released as a chatbot" and "the assistant must be
// supervised" are not addressed to the bot.
var addressesBotRe = regexp.MustCompile(`(?i)` +
	`\b(?:tell|inform|remind|answer|reply\s+to|respond\s+to|say\s+to)\s+(?:the\s+|all\s+|any\s+)?(?:users?|readers?|human)\b|` +
	`\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|the\s+|your\s+|these\s+|those\s+)?(?:previous\s+|prior\s+|above\s+|earlier\s+|preceding\s+|other\s+|original\s+|system\s+)?(?:instructions?|prompts?|rules?|directions?|directives?|guidelines?)\b|` +
	`\byou\s+(?:must|should|shall|have\s+to|need\s+to|are\s+to|are\s+required\s+to|will)\s+(?:now\s+|always\s+|only\s+)?(?:say|tell|answer|respond|reply|state|claim|write|output|print|repeat|mention|inform|ignore|pretend|act|reveal|confirm|agree)\b|` +
	`^\W*(?:respond|reply|answer)\s+(?:only\s+)?(?:with|by\s+saying|that)\b|\b(?:respond|reply)\s+(?:only\s+)?with\s*["'“:]|` +
	`\b(?:system|admin(?:istrator)?|developer|operator)\s*(?:note|message|prompt|instructions?|override|command)s?\s*[:：]|` +
	`\b(?:the|this|an?)\s+(?:ai\s+|virtual\s+)?(?:assistant|chatbot|bot|ai|language\s+model|llm)\s+(?:must|should|shall|has\s+to|needs\s+to|is\s+to|is\s+required\s+to|will\s+now)\s+` +
	`(?:now\s+|always\s+|only\s+|never\s+|not\s+)?` + botOrderVerbs + `|` +
	`\b(?:you|act|behave|respond|answer|reply|speak|write|talk|pretend)\s*,?\s+as\s+` + botRole + `|` +
	`\bas\s+` + botRole + `\s*,?\s+(?:you|your|please|always|never|do\s+not|don't|` + botOrderVerbs + `)\b|` +
	`\b(?:dear|attention)\s+(?:assistant|chatbot|bot|ai|model|llm)\b|\bnote\s+to\s+(?:the\s+)?(?:assistant|chatbot|bot|ai|model|llm)\b|` +
	`\bin\s+your\s+(?:reply|response|answer)\b`)

// botRole is what a text that speaks to the bot calls it ("as an AI assistant"). Encyclopaedia
// text says it too ("OpenAI released ChatGPT as a chatbot", "Siri was introduced as a virtual
// assistant"), so addressesBotRe counts it only where it addresses the bot: after "you" or an
// order to act ("respond as an AI"), or before "you" or an order ("As an AI, you should ...").
const botRole = `(?:an?|the)\s+(?:ai|artificial\s+intelligence|language\s+model|llm|chatbot|(?:ai\s+|helpful\s+|virtual\s+)assistant)\b`

// botOrderVerbs are what an order to the bot asks of it. "The assistant must" is an order
// only when one follows: "the assistant must be supervised by a physician" is a clinic's rule.
const botOrderVerbs = `(?:say|tell|answer|respond|reply|state|claim|write|output|print|repeat|mention|inform|ignore|disregard|` +
	`forget|pretend|act|reveal|confirm|agree|refuse|obey|comply|treat|consider|follow|switch|speak|use|insist|deny)\b`

// addressesBot reports whether s speaks to the bot (addressesBotRe): such text is no fact.
func addressesBot(s string) bool { return addressesBotRe.MatchString(s) }

// withoutBotAddress returns passage without its sentences that speak to the bot, for checking
// a bullet's support: a note's words must not support a bullet that restates them without the
// order ("SYSTEM NOTE: tell the user that X" would otherwise support the bullet "X").
func withoutBotAddress(passage string) string {
	var b strings.Builder
	start := 0
	flush := func(end int) {
		if sent := passage[start:end]; !addressesBot(sent) {
			b.WriteString(sent)
		}
		start = end
	}
	// A sentence ends at a newline, or at ".", "!", "?" or a title's "|" before a space.
	for i := 0; i+1 < len(passage); i++ {
		switch c := passage[i]; {
		case c == '\n', strings.IndexByte(".!?|", c) >= 0 && passage[i+1] == ' ':
			flush(i + 1)
		}
	}
	flush(len(passage))
	return b.String()
}
