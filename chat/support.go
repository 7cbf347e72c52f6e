package chat

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// A summary bullet is the LLM's restatement of one retrieved passage. Nothing downstream checks
// it again: the draft prompt lists it under "Verified facts". So a bullet is kept only when the
// passage it came from supports it lexically: every number in it appears in the passage, every
// name in it does too, it negates only where the passage negates, and most of its content words
// are the passage's. This is cheap and crude on purpose; it catches a bullet that carries words
// from somewhere else (the user's own assertion, the model's memory), and a bullet that changed
// the one word that mattered (a date, a name, a "not"), not a subtle misreading. The content
// word share alone let "Beethoven was not a German composer" and "Elmer Fleming discovered
// penicillin" through: one word in eight is within the share. TestSummarySupportTable measures
// it on faithful and laundered bullets.

// MinBulletSupport is the share of a bullet's content words that must occur in its passage.
const MinBulletSupport = 0.75

// numberRe finds numbers once asciiDigits has rewritten their digits. Separators are only "."
// and ",": a dash or slash joins two numbers ("1809–1882", "1809-1882", "1998/99"), and each
// part is a number of its own, so a passage's "(1809–1882)" holds 1809.
var numberRe = regexp.MustCompile(`[0-9]+(?:[.,][0-9]+)*`)

// asciiDigits rewrites every decimal digit of any script (\p{Nd}: full-width "１８９９",
// Arabic-Indic "١٨٩٩", Devanagari ...) as its ASCII digit, so that a number is compared by its
// value and not by its script: without it a bullet's "１８９９" was no number at all to the
// check, and a passage's 1889 did not stop it.
func asciiDigits(s string) string {
	return strings.Map(func(r rune) rune {
		if r <= unicode.MaxASCII || !unicode.IsDigit(r) {
			return r
		}
		return '0' + digitValue(r)
	}, s)
}

// digitValue is the value of a \p{Nd} digit. Unicode encodes each script's decimal digits as a
// contiguous run of ten, zero first, and unicode.Nd's ranges are whole runs (one range may hold
// several adjacent runs), so the value is the offset in the range modulo ten.
func digitValue(r rune) rune {
	for _, rg := range unicode.Nd.R16 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return (r - rune(rg.Lo)) % 10
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return (r - rune(rg.Lo)) % 10
		}
	}
	return 0
}

// bulletNegationRe finds the words by which a sentence denies what it states (ParseVerdict's
// negationRe also finds hedges, which a bullet may well carry from its passage). A bullet that denies needs a passage that denies something: "not a
// German composer" from "was a German composer" turns the passage around with one word.
var bulletNegationRe = regexp.MustCompile(`(?i)\b(?:not|never|no|none|nobody|nothing|neither|nor|cannot)\b|n['’]t\b`)

// stopwords are function words, which say nothing about whether a passage supports a sentence.
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the and or but nor so yet of in on at to for from by with
		without into onto over under about above below after before during between among through
		is are was were be been being am has have had having do does did done will would shall
		should can could may might must it its it's this that these those there here he she they
		them his her hers their theirs him we us our you your i me my mine as than then also too
		very which who whom whose what when where why how not no all any both each few more most
		other some such only own same just up down out off again further once while if because
		until s known called one i'm i've i'd i'll`) {
		m[w] = true
	}
	return m
}()

// contentWords returns the words of s that carry content, possessives stripped.
func contentWords(s string) []string {
	var out []string
	for _, w := range Words(s) {
		if w = contentWord(w); w != "" {
			out = append(out, w)
		}
	}
	return out
}

// sameStem reports whether two words share a prefix long enough to be forms of one word
// ("discovered", "discovery"; "deteriorate", "deteriorating").
func sameStem(a, b string) bool {
	if a == b {
		return true
	}
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n >= max(4, min(len(a), len(b))-3)
}

// bulletSupport returns the share of the bullet's content words found in the passage, and what
// of the bullet the passage lacks: "" when it supports the bullet (every number, every name and
// any negation of the bullet are in the passage, and the share is at least MinBulletSupport),
// else a short description for the trace. The share is 0 when a number is missing (bestSupport
// ranks passages by it). A bullet with no content word is not supported.
func bulletSupport(bullet, passage string) (float64, string) {
	bullet, passage = asciiDigits(bullet), asciiDigits(passage)
	if n := numbersOf(passage).missing(bullet); n != "" {
		return 0, "the number " + n
	}
	words := contentWords(bullet)
	if len(words) == 0 {
		return 0, "a content word"
	}
	pw := contentWords(passage)
	found := 0
	for _, w := range words {
		for _, p := range pw {
			if sameStem(w, p) {
				found++
				break
			}
		}
	}
	share := float64(found) / float64(len(words))
	if name, ok := namesIn(bullet, passage); !ok {
		return share, "the name " + name
	}
	if bulletNegationRe.MatchString(bullet) && !bulletNegationRe.MatchString(passage) {
		return share, "a negation"
	}
	if share < MinBulletSupport {
		return share, "most of its words"
	}
	return share, ""
}

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

// A revision is the refine stage's rewrite of the draft, and the turn's last word: nothing
// checks it after. The prompt asks it to add no fact, and a hallucinating model adds one anyway
// (on the not-sure path it answered "Yes, Napoleon discovered vitamin D in 1850"). So a
// revision is held to what it was written from: it may reword its draft and the verified facts
// the draft was written from, and it may name what the user asked about, to deny or doubt it.
// Anything else is a fact of its own, and the draft goes out instead.

// revisionChatWords are words a revision adds to make its draft conversational, which state
// nothing about the world ("Sure, here's a fun one", "Actually, ...").
var revisionChatWords = setOf(`yes yeah yep sure sorry well actually indeed fun fact facts interesting
	great glad happy hope think believe guess sounds seems really quite pretty certainly definitely
	course okay thanks thank hmm wow answer question asked ask know anything else something more
	tell let help`)

// revisionAssentRe finds an assent. A revision that assents where its sources do not agrees
// with the user on its own authority: "Yes, ..." on the not-sure path.
var revisionAssentRe = regexp.MustCompile(`(?i)^\W*(?:yes|yeah|yep|yup|correct|exactly|absolutely|indeed|true)\b|` +
	`\b(?:that's|that\s+is|you're|you\s+are)\s+(?:right|correct|true)\b`)

// revisionDenialWords are the words by which a clause denies or doubts what it states. They
// are no content of a revision (the polarity check below holds them to the sources instead).
// "doubt" is none of them: "Napoleon discovered vitamin D, no doubt" assents.
var revisionDenialWords = setOf(`not no never none nobody nothing neither nor cannot unsure uncertain
	unclear unknown`)

// revisionDoubtWords open a doubt on their own ("it is unclear whether ..."): the user's words
// after one in its clause, from the first within MaxRevisionDoubtReach words, are named to be
// doubted.
var revisionDoubtWords = setOf(`unsure uncertain unclear unknown`)

// revisionNegators deny the word that follows them: "not", "never", "no", "cannot" and the
// "n't" forms. They license the user's words after them only when they deny knowing ("not
// sure whether", "can't confirm that", "no evidence that"; revisionKnowing) or deny the user's
// words themselves ("did not discover vitamin D"); "not many people know that ..." and
// "don't forget that ..." deny something else and repeat the user's claim.
var revisionNegators = setOf(`not no never cannot neither nor`)

// revisionKnowing are the words whose denial is a doubt about what follows.
var revisionKnowing = setOf(`sure certain know knew known aware confirm confirmed verify verified
	say tell find found recall remember think believe clear true correct right accurate case
	evidence record records proof sign indication information details data`)

// revisionSkipped are words that may stand between a negator and what it denies.
var revisionSkipped = setOf(`really quite entirely completely exactly totally actually fully
	100 yet even`)

// revisionContrastRe finds the conjunctions that turn a sentence against what came before: the
// clause after one says something of its own, and a denial in it licenses nothing ("I'm not
// sure, but I don't think Napoleon discovered vitamin D" denies on the model's own authority).
// "Yet" is one only where it opens a clause: "I'm not yet sure whether ..." doubts.
var revisionContrastRe = regexp.MustCompile(`(?i)\b(?:but|however|although|though|whereas|nevertheless|nonetheless)\b|^\s*yet\b`)

// revisionClauseBreakRe splits text into clauses: at sentence ends, commas, colons,
// semicolons, brackets and dashes. A denial governs only its own clause: "I'm not sure, but
// Napoleon discovered vitamin D" and "Napoleon discovered vitamin D, no doubt" deny nothing
// of Napoleon.
var revisionClauseBreakRe = regexp.MustCompile(`[.!?;:,()\[\]\n—–]+|\s-\s`)

// clause is a clause of a revision or of its sources.
type clause struct {
	words    []string // Words of the clause, curly apostrophes made straight
	contrast bool     // opens with a contrast conjunction (revisionContrastRe)
	negated  bool     // denies or doubts what it states (revisionPolarityRe)
}

// revisionPolarityRe finds a clause that denies or doubts what it states: the clause's
// polarity, which a revision must keep (bulletNegationRe and the doubts).
var revisionPolarityRe = regexp.MustCompile(`(?i)\b(?:not|never|no|none|nobody|nothing|neither|nor|cannot|unsure|uncertain|unclear|unknown|doubt\w*)\b|n't\b`)

// clauses splits s at revisionClauseBreakRe and before each contrast conjunction. A contrast
// conjunction with no words after it before the break ("; however, X") marks the next clause.
func clauses(s string) []clause {
	s = strings.ReplaceAll(s, "’", "'")
	var out []clause
	pending := false // a contrast conjunction waits for its clause
	for _, piece := range revisionClauseBreakRe.Split(s, -1) {
		cuts := revisionContrastRe.FindAllStringIndex(piece, -1)
		start, contrast := 0, pending
		for i := 0; i <= len(cuts); i++ {
			end := len(piece)
			if i < len(cuts) {
				end = cuts[i][0]
			}
			if text := piece[start:end]; len(Words(text)) > 0 {
				out = append(out, clause{words: Words(text), contrast: contrast, negated: revisionPolarityRe.MatchString(text)})
				contrast = false
			}
			if i < len(cuts) {
				start, contrast = cuts[i][1], true // the conjunction is no word of its clause
			}
		}
		pending = contrast
	}
	return out
}

// contentWord returns w as contentWords keeps it, or "" when contentWords drops it.
func contentWord(w string) string {
	w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "'")
	w = strings.Trim(w, "'")
	if len(w) < 3 && !strings.ContainsAny(w, "0123456789") || stopwords[w] {
		return ""
	}
	return w
}

// negator reports whether w denies what follows it (revisionNegators or an "n't" form).
func negator(w string) bool { return revisionNegators[w] || strings.HasSuffix(w, "n't") }

// MaxRevisionBorrowedWords is how many of the user's words (in no source) a revision that
// denies nothing may use, and then fewer than it takes from its sources: the name of what was
// asked about ("Vitamin D was identified by Elmer McCollum"), not the user's assertion
// ("Napoleon discovered vitamin D", "Napoleon did").
const MaxRevisionBorrowedWords = 2

// MaxRevisionDoubtReach is how many words may stand between a doubt ("not sure", "unclear")
// and the user's words it names: "not sure whether it was really Napoleon" doubts Napoleon,
// "can't tell you how glad I am that Napoleon ..." does not.
const MaxRevisionDoubtReach = 4

// MaxRevisionNewWords is how many content words a revision may add that are in neither its
// sources nor the user's turn nor revisionChatWords: a rewording's verb ("hangs" for "is"),
// never a clause ("invented the telephone").
const MaxRevisionNewWords = 1

// revisionUnsupported returns what in revised is supported by neither source (the draft and
// the verified facts it was written from) nor, for names and terms, the user's message: a
// number not in source, a name in neither, more than MaxRevisionNewWords new content words, a
// clause that denies what its sources assert or asserts what they deny (clausePolarity), an
// assent, or the user's words beyond MaxRevisionBorrowedWords that no denial governs: one
// before them in their clause, that denies knowing them or denies them (revisionNegators). A
// "not" elsewhere in the revision licensed them until "I'm not sure, but Napoleon discovered
// vitamin D" went out. It returns "" when the revision only rewords. Citation markers are not numbers here (cite.go binds them).
func revisionUnsupported(revised, source, userMsg string) string {
	revised = asciiDigits(markerRe.ReplaceAllString(revised, ""))
	source = asciiDigits(markerRe.ReplaceAllString(source, ""))
	userMsg = asciiDigits(userMsg)
	if n := numbersOf(source).missing(revised); n != "" {
		return "the number " + n
	}
	if name, ok := namesIn(revised, source+"\n"+userMsg); !ok {
		return "the name " + name
	}
	sw, uw := contentWords(source), contentWords(userMsg)
	has := func(ws []string, w string) bool {
		return slices.ContainsFunc(ws, func(x string) bool { return sameStem(w, x) })
	}
	sourceClauses := clauses(source)
	var added, borrowed []string
	sourced := 0 // content words from the sources
	polarity := ""
	for _, c := range clauses(revised) {
		// A denial licenses the user's words after it in its clause (borrowed words named to
		// be doubted), never before it ("Napoleon discovered vitamin D, no doubt") and never
		// in a clause that turns against what came before.
		// Two denials in a clause assert ("it's not true that Napoleon didn't discover it"):
		// they license nothing either.
		denials := 0
		for _, raw := range c.words {
			if revisionDenialWords[raw] || strings.HasSuffix(raw, "n't") {
				denials++
			}
		}
		pending := false        // a negator waits for the word it denies
		reach := -1             // words a doubt may still pass before the user's words; -1: none open
		licensed := false       // the user's words from here on are named to be doubted
		var fromSource []string // the clause's words from the sources, for its polarity
		for _, raw := range c.words {
			if revisionDenialWords[raw] || strings.HasSuffix(raw, "n't") {
				if !c.contrast && denials == 1 {
					pending = pending || negator(raw)
					if revisionDoubtWords[raw] {
						reach = MaxRevisionDoubtReach
					}
				}
				continue
			}
			w := contentWord(raw)
			user := w != "" && !has(sw, w) && has(uw, w)
			if !licensed && reach >= 0 {
				if user {
					licensed = true
				} else {
					reach--
				}
			}
			if w == "" {
				continue
			}
			if pending && !revisionSkipped[w] {
				pending = false
				switch {
				case user:
					licensed = true // "did not discover vitamin D"
				case revisionKnowing[w]:
					reach = MaxRevisionDoubtReach // "not sure whether ..."
				}
			}
			switch {
			case revisionChatWords[w]:
			case has(sw, w):
				sourced++
				fromSource = append(fromSource, w)
			case user:
				if !licensed {
					borrowed = append(borrowed, w)
				}
			default:
				added = append(added, w)
			}
		}
		if polarity == "" {
			polarity = clausePolarity(c, fromSource, sourceClauses)
		}
	}
	if len(added) > MaxRevisionNewWords {
		return "words of its own: " + strings.Join(added, " ")
	}
	if polarity != "" {
		return polarity
	}
	if revisionAssentRe.MatchString(revised) && !revisionAssentRe.MatchString(source) {
		return "an assent of its own"
	}
	if len(borrowed) > 0 && (len(borrowed) > MaxRevisionBorrowedWords || len(borrowed) >= sourced) {
		return "the user's words, not denied: " + strings.Join(borrowed, " ")
	}
	if name := swappedName(revised, source, borrowed); name != "" {
		return "the user's name in place of the sources': " + name
	}
	return ""
}

// swappedName returns a name of revised made of the user's words in borrowed (not denied) that
// stands in place of the sources' names, or "": the revision keeps none of the source's names,
// or drops one of several words. "It was identified in 1922 by Napoleon" swaps the draft's
// Elmer McCollum for the user's Napoleon, one borrowed word among sourced ones; the name of
// what was asked about beside the sources' names ("Vitamin D was identified by Elmer
// McCollum") is a rewording.
func swappedName(revised, source string, borrowed []string) string {
	if len(borrowed) == 0 {
		return ""
	}
	rt := tokens(revised)
	own := missingNames(source, "") // every name of the sources
	keptAny := slices.ContainsFunc(own, func(n string) bool { return hasRun(rt, tokens(n)) })
	droppedFull := slices.ContainsFunc(own, func(n string) bool { return strings.Contains(n, " ") && !hasRun(rt, tokens(n)) })
	if (len(own) == 0 || keptAny) && !droppedFull {
		return ""
	}
	for _, name := range missingNames(revised, source) {
		for _, w := range strings.Fields(name) {
			if slices.Contains(borrowed, contentWord(w)) {
				return name
			}
		}
	}
	return ""
}

// clausePolarity returns what is wrong with the polarity of a revision's clause c, whose words
// from the sources are words, or "". The source clause that has most of those words must deny
// what it states when c does and assert it when c does, as bulletSupport holds a bullet's
// negation to its passage: "The Eiffel Tower is the tallest structure in Paris" from a draft
// that said it "is not" drops a denial, and "is not" from a draft that said "is" adds one. A
// tie is no finding (the clause may merge two of the draft's).
func clausePolarity(c clause, words []string, sources []clause) string {
	if len(words) == 0 {
		return ""
	}
	same, other := 0, 0
	for _, sc := range sources {
		var sw []string
		for _, w := range sc.words {
			if w = contentWord(w); w != "" {
				sw = append(sw, w)
			}
		}
		n := 0
		for _, w := range words {
			if slices.ContainsFunc(sw, func(x string) bool { return sameStem(w, x) }) {
				n++
			}
		}
		if sc.negated == c.negated {
			same = max(same, n)
		} else {
			other = max(other, n)
		}
	}
	switch {
	case other <= same:
		return ""
	case c.negated:
		return "a denial its sources do not make: " + strings.Join(c.words, " ")
	default:
		return "its sources' denial dropped: " + strings.Join(c.words, " ")
	}
}

// token is a word of a sentence with what the name check needs to know about it.
type token struct {
	word      string // lower case, possessive stripped
	capital   bool   // starts with an upper-case letter
	sentStart bool   // first word of its sentence
	possessed bool   // written with a possessive ("Darwin's"), which ends a name
}

// tokens splits s into words (Words' rule), noting capitals and sentence starts.
func tokens(s string) []token {
	var out []token
	start := true
	word := []rune(nil)
	flush := func() {
		if len(word) == 0 {
			return
		}
		w := string(word)
		lw := strings.ToLower(w)
		stem := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(lw, "'s"), "’s"), "'")
		possessed := stem != lw
		lw = strings.Trim(stem, "'’")
		if lw != "" {
			out = append(out, token{word: lw, capital: unicode.IsUpper(word[0]), sentStart: start, possessed: possessed})
			start = false
		}
		word = word[:0]
	}
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' || r == '’':
			word = append(word, r)
		default:
			flush()
			if r == '.' || r == '!' || r == '?' || r == ':' || r == ';' || r == '\n' || r == '|' {
				start = true
			}
		}
	}
	flush()
	return out
}

// namesIn reports whether every name of the bullet occurs in the passage, and the first that
// does not. A name is a run of capitalised words, ended by a sentence's end or a possessive
// ("Darwin's On the Origin ..." is two); a run's leading function words ("The Eiffel Tower",
// "In 1922", "I'm") and chat words ("Sorry", "Anything else?") are not part of it. A name of several words must occur as those words in a
// row ("Elmer Fleming" is not in "Alexander Fleming"); a name of one word must occur as a word,
// an "s" ending aside ("Maine Coons"). A lone capitalised word that opens a sentence may be a
// common word ("Octopuses have ..."), so it may also occur in another form ("octopus").
// Matching ignores case: the words, not their spelling, are what a laundered bullet changes.
func namesIn(bullet, passage string) (string, bool) {
	if m := missingNames(bullet, passage); len(m) > 0 {
		return m[0], false
	}
	return "", true
}

// missingNames returns the names of the bullet (namesIn's rule) that the passage lacks, in
// order; with an empty passage, all of them.
func missingNames(bullet, passage string) []string {
	var missing []string
	pt := tokens(passage)
	bt := tokens(bullet)
	for i := 0; i < len(bt); {
		if !bt[i].capital {
			i++
			continue
		}
		j := i
		for j < len(bt) && bt[j].capital && (j == i || !bt[j].sentStart && !bt[j-1].possessed) {
			j++
		}
		run := bt[i:j]
		i = j
		for len(run) > 0 && (stopwords[run[0].word] || revisionChatWords[run[0].word]) {
			run = run[1:]
		}
		if len(run) > 0 && !hasRun(pt, run) {
			var ws []string
			for _, t := range run {
				ws = append(ws, t.word)
			}
			missing = append(missing, strings.Join(ws, " "))
		}
	}
	return missing
}

// hasRun reports whether the passage's tokens hold run's words in a row.
func hasRun(pt, run []token) bool {
	loose := len(run) == 1 && run[0].sentStart
	for i := 0; i+len(run) <= len(pt); i++ {
		ok := true
		for k, t := range run {
			p := pt[i+k].word
			if p != t.word && strings.TrimSuffix(p, "s") != strings.TrimSuffix(t.word, "s") && !(loose && sameStem(p, t.word)) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}
