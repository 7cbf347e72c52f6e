package chat

import "strings"

// The word lists of the attribution check. Each is small on purpose: a word in one of them is
// exempt from or decisive in the check, so every entry must be one that carries no fact of its
// own (stopwords, chatWords) or one whose meaning is settled without context (synonyms,
// opposites, negations).

// stopwords are function words, which say nothing about whether a passage supports a sentence.
var stopwords = setOf(`a an the and or but nor so yet of in on at to for from by with
	without into onto over under about above below after before during between among through
	is are was were be been being am has have had having do does did done will would shall
	should can could may might must it its it's this that these those there here he she they
	them his her hers their theirs him we us our you your i me my mine as than then also too
	very which who whom whose what when where why how not no all any both each few more most
	other some such only own same just up down out off again further once while if because
	until s st nd rd th known called one two i'm i've i'd i'll whether either`)

// chatWords are what a reply says to be conversational, which states nothing about the world
// ("Sure, here's a fun one", "Is there anything else you'd like to know?"). A sentence made
// of them and stopwords alone is chat (attributor.check), passed without a source.
var chatWords = setOf(`sure sorry well actually fun interesting great glad happy hope hoping
	think guess sounds seems really quite pretty certainly definitely course okay ok thanks thank
	hmm wow answer question questions asked ask asking know anything else something more tell
	let help helps helpful like love would hello hi hey welcome please feel free curious wondering
	wonder info information details learn find out happy lot bit fact facts topic today particular
	heard hear seen congratulations enjoy enjoyed favorite favourite`)

// boundsUp and boundsDown bound a number from below and from above (boundOf), before it
// ("more than 300", "over 65", "at least 5", by its second word) or after it with "or" or
// "and" ("65 and over", "300 or more").
var (
	boundsUp   = setOf(`more over above after exceeding greater least larger higher longer later beyond older`)
	boundsDown = setOf(`fewer less under below before most smaller lower shorter earlier younger`)
	// boundsAfter are the bounds that follow a number after "or" or "and" ("65 and over",
	// "300 or fewer"); "in 1799 and later crowned", "in 2019 and most cases" bound nothing.
	boundsAfter = setOf(`over above under below older younger more fewer less greater higher lower`)
)

// thanBounds are words that bound a number only before "than", by the bound they stand for:
// the plain form a rewording puts for a comparative ("old" for "older").
var thanBounds = map[string]string{"old": "older", "young": "younger", "many": "more", "few": "fewer", "much": "more", "little": "less"}

// claimChatWords are chat words that state something of what they are said of ("Admission is
// free", "Vitamin D helps absorption"). In a sentence of chat words alone they are chat
// ("Hope this helps!", "Enjoy!"); in a sentence that states a fact they are chat only after a
// word of its speaker or the user in their clause ("I'd be happy to tell you more about
// vitamin D", "Would you like to know more about X?"), and elsewhere words like any other,
// which the passage must hold ("Admission to the Louvre is free for you.").
var claimChatWords = setOf(`free happy help helps helpful love enjoy enjoyed favorite favourite`)

// factWords are claimChatWords that are never chat in a sentence that states a fact: "You'll
// enjoy free admission to the Louvre" is a claim of the price whoever it is told to.
var factWords = setOf(`free`)

// personalWords are the speaker's and the user's (claimChatWords). "US" is a country.
var personalWords = setOf(`i me my we us our you your`)

// negations are the words by which a sentence denies what it states; a sentence with one needs
// a passage whose matching sentence denies too, and a sentence without one a passage that
// does not deny (clausePolarity).
var negations = setOf(`not no never none nobody nothing neither nor cannot without`)

// failWords deny the verb that follows them with "to" ("failed to reduce"), and denialNouns
// the clause that follows them with "that" where the clause opens with an expletive "it" or
// stands against them ("It is a myth that bats are blind", "contrary to the misconception
// that ..."); "The Myth of Sisyphus", "in Greek myth" and "a myth that explains the seasons"
// deny nothing: negatesAt.
var (
	failWords   = setOf(`fail fails failed failing unable`)
	denialNouns = setOf(`myth myths misconception misconceptions`)
)

// negatesAt reports whether ts[i] is a word by which its clause denies: a negation, a failure
// word before "to" or a denial noun before "that" (failWords, denialNouns).
func negatesAt(ts []tok, i int) bool {
	w := ts[i].word
	next := ""
	if i+1 < len(ts) && ts[i+1].sep != sepBreak {
		next = ts[i+1].word
	}
	switch {
	case negations[w]:
		return true
	case failWords[w]:
		return next == "to"
	case denialNouns[w] && next == "that":
		cs := i // the clause's first word
		for cs > 0 && ts[cs].sep != sepBreak {
			cs--
		}
		for k := cs; k < i; k++ {
			if ts[k].word == "contrary" {
				return true
			}
		}
		return ts[cs].word == "it"
	}
	return false
}

// asides are words a writer puts between a negation and what it denies ("did not, however,
// reduce"): polarityRanges looks past them.
var asides = setOf(`however though therefore moreover indeed nevertheless nonetheless furthermore instead thus hence`)

// negatesIn is negatesAt in the text of a passage whose title is title: a capitalised
// negation that begins the title's words ("Never Let Me Go", "No Country for Old Men") is the
// title's name, not a denial; "No HIV transmission was observed" still denies.
func negatesIn(ts []tok, i int, title []tok) bool {
	if !negatesAt(ts, i) {
		return false
	}
	if !ts[i].capital || ts[i].allCaps || i+1 >= len(ts) {
		return true
	}
	for k := 0; k+1 < len(title); k++ {
		if title[k].word == ts[i].word && title[k+1].word == ts[i+1].word {
			return false
		}
	}
	return true
}

// synonymGroups are words a faithful paraphrase puts for one another ("identified" for
// "discovered", "about" for "approximately"). A sentence's word matches a passage's word of
// its group. Each group holds words of one meaning in the sense a paraphrase uses them; a
// word that only weakens or strengthens another ("suggest", "indicate" or "prove" for "show",
// "cure" for "treat", "receive" for "win") or narrows it ("state" for "country") is in no
// group.
var synonymGroups = [][]string{
	{"discover", "identify", "find", "found", "detect", "uncover", "isolate", "discovered", "identified"},
	{"show", "demonstrate", "reveal"},
	{"increase", "raise", "rise", "grow", "boost", "elevate", "enhance", "augment", "rose", "risen", "grew", "grown"},
	{"decrease", "reduce", "lower", "decline", "drop", "fall", "diminish", "lessen", "cut", "fell", "fallen"},
	{"big", "large", "great", "huge", "major", "substantial", "considerable"},
	{"small", "little", "minor", "tiny", "slight", "modest"},
	{"begin", "start", "commence", "launch", "initiate", "open", "began", "begun"},
	{"end", "finish", "conclude", "complete", "close", "terminate"},
	{"make", "produce", "create", "generate", "manufacture", "form", "synthesize", "made"},
	{"use", "utilize", "employ", "apply"},
	{"help", "assist", "aid", "support"},
	{"need", "require", "necessary", "essential"},
	{"get", "obtain", "receive", "acquire", "gain", "got", "gotten"},
	// people of a place, and people of a study: "patients" is not "population"
	{"people", "individuals", "persons", "population", "inhabitants", "residents"},
	{"people", "individuals", "persons", "subjects", "participants", "patients"},
	{"approximately", "about", "around", "roughly", "nearly", "almost", "circa", "some"},
	{"many", "numerous", "several", "multiple", "various"},
	{"death", "die", "died", "dead", "mortality", "fatal"},
	{"birth", "born"},
	{"build", "construct", "erect", "built"},
	{"buy", "purchase", "acquire", "bought"},
	{"name", "call", "title"},
	{"live", "reside", "inhabit", "dwell"},
	{"study", "research", "trial", "investigation", "analysis", "experiment"},
	{"child", "children", "kids", "kid", "infants"},
	{"woman", "women", "female", "females"},
	{"man", "men", "male", "males"},
	{"link", "associate", "relate", "correlate", "connect", "tie"},
	{"cause", "induce", "trigger", "lead", "led", "result", "produce"},
	{"prevent", "protect", "block", "inhibit", "stop", "avert"},
	{"effect", "impact", "influence"},
	{"important", "key", "crucial", "essential", "vital", "significant"},
	{"common", "frequent", "usual", "typical", "widespread", "prevalent"},
	{"rare", "uncommon", "infrequent", "unusual"},
	{"fast", "quick", "rapid", "swift"},
	{"old", "ancient", "elderly", "aged", "older"},
	{"new", "novel", "recent"},
	{"main", "primary", "principal", "chief", "leading"},
	{"write", "wrote", "written", "author", "authored", "compose"},
	{"country", "nation"},
	{"level", "amount", "concentration", "quantity"},
	{"risk", "chance", "likelihood", "odds", "probability"},
	{"high", "elevated", "higher"},
	{"low", "lower", "reduced"},
	{"give", "provide", "supply", "offer", "gave", "given"},
	{"get", "become", "became", "turn"},
	{"treat", "treatment", "therapy"},
	{"disease", "illness", "disorder", "condition"},
	{"win", "won", "award", "awarded"},
	{"famous", "renowned", "celebrated", "notable", "known"},
	{"consist", "comprise", "contain", "include"},
	{"locate", "situate", "lie", "site"},
	{"way", "method", "means", "approach"},
	{"part", "portion", "component", "section"},
	{"kind", "type", "sort", "form", "variety"},
	{"call", "term", "dub"},
	{"happen", "occur", "take", "took", "taken"},
	{"show", "exhibit", "display"},
}

// oppositeGroups pair words of opposite meaning: a sentence's word that is the opposite of a
// word of its passage's matching sentence ("decreased" where the passage says "increased") is
// a reversal, never a rewording, however common the word.
var oppositeGroups = [][2][]string{
	{{"increase", "raise", "rise", "grow", "boost", "elevate", "enhance", "higher", "more", "gain", "up"},
		{"decrease", "reduce", "lower", "decline", "drop", "fall", "diminish", "lessen", "less", "fewer", "loss", "down"}},
	{{"big", "large", "great", "huge", "major"}, {"small", "little", "minor", "tiny"}},
	// an ordinal is none of the others: "the second woman" is not "the first woman"
	{{"first"}, {"second", "third", "fourth", "fifth", "last"}},
	{{"second"}, {"third", "fourth", "fifth", "last"}},
	{{"third"}, {"fourth", "fifth", "last"}},
	{{"high", "elevated"}, {"low", "reduced"}},
	{{"positive", "beneficial", "benefit", "good", "better", "improve", "improvement"}, {"negative", "harmful", "harm", "bad", "worse", "worsen", "deteriorate"}},
	{{"first", "earliest", "early", "begin", "start"}, {"last", "latest", "late", "end", "final"}},
	{{"win", "won", "victory", "winner"}, {"lose", "lost", "defeat", "loser"}},
	{{"alive", "live", "living", "survive"}, {"dead", "die", "died", "death"}},
	{{"true", "correct", "right"}, {"false", "incorrect", "wrong"}},
	{{"present", "presence"}, {"absent", "absence"}},
	{{"include", "inclusion"}, {"exclude", "exclusion"}},
	{{"accept", "approve", "allow", "permit"}, {"reject", "deny", "forbid", "ban", "prohibit"}},
	{{"agree", "support", "favor"}, {"disagree", "oppose", "against"}},
	{{"activate", "promote", "stimulate", "induce", "upregulate"}, {"inhibit", "suppress", "block", "repress", "downregulate"}},
	{{"safe", "harmless"}, {"dangerous", "unsafe", "hazardous", "toxic"}},
	{{"effective", "efficacious"}, {"ineffective", "useless"}},
	{{"male", "man", "men"}, {"female", "woman", "women"}},
	{{"north", "northern"}, {"south", "southern"}},
	{{"east", "eastern"}, {"west", "western"}},
	{{"old", "older", "elderly", "ancient"}, {"young", "younger", "new", "modern"}},
	{{"strong", "stronger"}, {"weak", "weaker"}},
	{{"hot", "warm", "heat"}, {"cold", "cool"}},
	{{"long", "longer"}, {"short", "shorter"}},
	{{"fast", "faster", "quick", "rapid"}, {"slow", "slower", "gradual"}},
	{{"before", "prior", "earlier"}, {"after", "later", "subsequent"}},
	{{"cause", "causes"}, {"prevent", "cure", "treat"}},
	{{"maximum", "most"}, {"minimum", "least"}},
	{{"majority"}, {"minority"}},
	{{"always"}, {"never", "rarely", "seldom"}},
	{{"all", "every"}, {"some", "few"}},
}

// wordRelations holds the stems of synonymGroups and oppositeGroups.
type wordRelations struct {
	synonyms  map[string][]int // stem -> groups
	opposites map[string][]int // stem -> pair index*2 + side
}

var relations = func() wordRelations {
	r := wordRelations{synonyms: map[string][]int{}, opposites: map[string][]int{}}
	for g, ws := range synonymGroups {
		for _, w := range ws {
			s := stem(w)
			r.synonyms[s] = append(r.synonyms[s], g)
		}
	}
	for p, sides := range oppositeGroups {
		for side, ws := range sides {
			for _, w := range ws {
				s := stem(w)
				r.opposites[s] = append(r.opposites[s], 2*p+side)
			}
		}
	}
	return r
}()

// synonymous reports whether stems a and b share a synonym group.
func synonymous(a, b string) bool {
	for _, g := range relations.synonyms[a] {
		for _, h := range relations.synonyms[b] {
			if g == h {
				return true
			}
		}
	}
	return false
}

// opposite reports whether stems a and b stand on the two sides of one opposite pair.
func opposite(a, b string) bool {
	for _, x := range relations.opposites[a] {
		for _, y := range relations.opposites[b] {
			if x/2 == y/2 && x != y {
				return true
			}
		}
	}
	return false
}

// setOf makes a set of the space-separated words of s, "_" standing for a space inside one.
func setOf(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[strings.ReplaceAll(w, "_", " ")] = true
	}
	return m
}
