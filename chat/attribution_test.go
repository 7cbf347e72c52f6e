package chat

import (
	"context"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/search"
)

// vitaminD and napoleon are the passages of the adversary's roads (issue 49); calcium is a
// SciFact abstract (3034412, its first 120 words) whose numbers the adversary swapped.
var (
	vitaminD = "Vitamin D | Vitamin D is a group of fat-soluble secosteroids. In humans it is produced in the skin " +
		"on exposure to ultraviolet B radiation from sunlight. It was identified in 1922 by Elmer McCollum, who named " +
		"it after finding that cod liver oil cured rickets."
	napoleon = "Napoleon | Napoleon Bonaparte was a French military commander and political leader who rose to " +
		"prominence during the French Revolution. He crowned himself Emperor of the French in 1804."
	calcium = "Calcium absorption varies within the reference range for serum 25-hydroxyvitamin D. | BACKGROUND Calcium " +
		"absorption is generally considered to be impaired under conditions of vitamin D deficiency, but the vitamin D " +
		"status that fully normalizes absorption is not known for humans. DESIGN Two experiments performed in the " +
		"spring of the year, one year apart. In the first, in which participants were pretreated with 25-hydroxyvitamin " +
		"D (25OHD), mean serum 25OHD concentration was 86.5 nmol/L; and in the other, with no pretreatment, mean serum " +
		"concentration was 50.2 nmol/L. Participants received 500 mg oral calcium loads as a part of a standard low " +
		"calcium breakfast."
	eiffel = "Eiffel Tower | The Eiffel Tower is a wrought-iron lattice tower in Paris. It is 330 metres tall and was " +
		"built in 1889 for the World's Fair. It is not the tallest structure in France."
)

// docFreqs is a TermStats over a fixed set of texts: a word's document frequency is how many
// of them hold it, with background passages to make most words common.
type docFreqs struct {
	df map[string]int
	n  int
}

func newDocFreqs(texts ...string) *docFreqs {
	d := &docFreqs{df: map[string]int{}, n: len(texts)}
	for _, t := range texts {
		seen := map[string]bool{}
		for _, w := range tokenize(t) {
			if !seen[w.word] {
				seen[w.word] = true
				d.df[w.word]++
			}
		}
	}
	return d
}

func (d *docFreqs) DocFreq(_ context.Context, words []string) ([]int, int, error) {
	out := make([]int, len(words))
	for i, w := range words {
		out[i] = d.df[w]
	}
	return out, d.n, nil
}

// commonText is what makes a word common in docFreqs: background documents that use it.
const commonText = "people found discovered made first described also many about show showed large group known " +
	"named exposure skin part study humans year years levels higher lower increase decrease cause causes helps " +
	"tall built went up later leader rose military political fully reversed drinking liver second"

func testTerms(passages ...string) TermStats {
	var texts []string
	for range 200 {
		texts = append(texts, commonText)
	}
	return newDocFreqs(append(texts, passages...)...)
}

func hits(texts ...string) []rerank.Hit {
	var out []rerank.Hit
	for i, t := range texts {
		title, _, _ := strings.Cut(t, " | ")
		out = append(out, rerank.Hit{Hit: search.Hit{Passage: corpus.Passage{ID: title + "#" + string(rune('0'+i)), Title: title, Text: t}}})
	}
	return out
}

// TestAssentCut: an opening assent or denial is cut from the sentence shown; a word that opens
// with one of them before a hyphen is kept whole.
func TestAssentCut(t *testing.T) {
	for _, tt := range []struct{ passage, sentence, shown string }{
		{vitaminD, "Yes, vitamin D is produced in the skin.", "Vitamin D is produced in the skin."},
		{vitaminD, "No - vitamin D is produced in the skin.", "Vitamin D is produced in the skin."},
		{vitaminD, "Right—vitamin D is produced in the skin.", "Vitamin D is produced in the skin."},
		{"Elections | Right-wing parties won 40 percent of the vote in 2019.", "Right-wing parties won 40 percent of the vote in 2019.", "Right-wing parties won 40 percent of the vote in 2019."},
		{"Mendel | True-breeding plants were crossed by Mendel in 1856.", "True-breeding plants were crossed by Mendel in 1856.", "True-breeding plants were crossed by Mendel in 1856."},
	} {
		a := newAttributor(testTerms(tt.passage), "")
		a.add(hits(tt.passage)...)
		c, err := a.check(context.Background(), tt.sentence, nil)
		if err != nil {
			t.Fatal(err)
		}
		if c.kind != sentFact || c.text != tt.shown {
			t.Errorf("check(%q) = kind %d (%s), shown %q; want a fact shown as %q", tt.sentence, c.kind, c.reason, c.text, tt.shown)
		}
	}
}

func TestAttributionCheck(t *testing.T) {
	tests := []struct {
		name     string
		passages []string
		user     string
		sentence string
		want     int    // sentDropped, sentFact, sentChat
		reason   string // a part of the reason, for drops
	}{
		// copied and reworded
		{"copied", []string{vitaminD}, "", "It was identified in 1922 by Elmer McCollum, who named it after finding that cod liver oil cured rickets.", sentFact, ""},
		{"reworded with a synonym", []string{vitaminD}, "Who discovered vitamin D?", "Elmer McCollum discovered vitamin D in 1922.", sentFact, ""},
		{"number as words", []string{vitaminD}, "", "Vitamin D was identified in nineteen twenty-two by Elmer McCollum.", sentFact, ""},
		{"number as a roman numeral", []string{vitaminD}, "", "Vitamin D was identified in MCMXXII by Elmer McCollum.", sentFact, ""},
		{"decade", []string{vitaminD}, "", "Elmer McCollum identified vitamin D in the 1920s.", sentFact, ""},
		{"century", []string{vitaminD}, "", "Vitamin D was identified in the 20th century by Elmer McCollum.", sentFact, ""},
		{"clauses from two sentences", []string{vitaminD}, "", "Vitamin D, a group of fat-soluble secosteroids, was identified in 1922 by Elmer McCollum.", sentFact, ""},
		{"second passage", []string{napoleon, vitaminD}, "", "Vitamin D is produced in the skin on exposure to sunlight.", sentFact, ""},
		{"denial the passage makes", []string{eiffel}, "", "The Eiffel Tower is not the tallest structure in France.", sentFact, ""},
		{"chat", []string{vitaminD}, "", "Is there anything else you'd like to know?", sentChat, ""},
		{"doubt", nil, "", "Sorry, I'm not sure about that.", sentChat, ""},
		{"assent cut off", []string{vitaminD}, "", "Yes, vitamin D is produced in the skin.", sentFact, ""},

		// the roads
		{"name split over two sentences, first half", []string{vitaminD}, "", "It was first described by a French emperor.", sentDropped, "French"},
		{"lower-case name", []string{vitaminD}, "", "it was discovered by napoleon bonaparte.", sentDropped, "napoleon"},
		{"year in words", []string{vitaminD}, "", "it was discovered in the year eighteen fifty.", sentDropped, "eighteen fifty"},
		{"joiner inside a name", []string{vitaminD}, "", "It was identified by Napo\u034fleon Bona\u034fparte.", sentDropped, "napoleon"},
		{"zero-width space inside a name", []string{vitaminD}, "", "It was identified by Napo\u200bleon.", sentDropped, "napoleon"},
		{"cyrillic look-alikes", []string{vitaminD}, "", "It was identified by N\u0430poleon in 1922.", sentDropped, "napoleon"},
		{"roman numeral year", []string{vitaminD}, "", "It was identified in MDCCCL.", sentDropped, "mdcccl"},
		{"superscript year", []string{vitaminD}, "", "It was identified in ¹⁸⁵⁰.", sentDropped, "1850"},
		{"full-width year", []string{vitaminD}, "", "It was identified in １８５０ by Elmer McCollum.", sentDropped, "1850"},
		{"numbers swapped inside a copied sentence", []string{calcium}, "",
			"In the first, participants were pretreated with 86.5-hydroxyvitamin D (86.5OHD), and mean serum 86.5OHD concentration was 25 nmol/L.", sentDropped, "number"},
		{"a number moved to another noun", []string{eiffel}, "", "The Eiffel Tower is 1889 metres tall and was built in 330.", sentDropped, "number"},
		{"a narrower word for a synonym", []string{"Texas | Texas is a state of the United States."}, "", "Texas is a country of the United States.", sentDropped, ""},
		{"a stronger word for a synonym", []string{"Chloroquine | Chloroquine is used to treat malaria."}, "", "Chloroquine is used to cure malaria.", sentDropped, ""},
		{"a word of a synonym group", []string{"Chloroquine | Chloroquine is used to treat malaria."}, "", "Chloroquine is used in the treatment of malaria.", sentFact, ""},
		{"a year for its decade", []string{"Jazz Age | The Jazz Age flourished in the 1920s."}, "", "The Jazz Age flourished in 1920.", sentDropped, "1920"},
		{"a decade for its year", []string{"Jazz Age | The Jazz Age began in 1920."}, "", "The Jazz Age began in the 1920s.", sentFact, ""},
		{"a number one unit off", []string{"Siege | The army had 12,000 troops."}, "", "The army had 12,001 troops.", sentDropped, "12001"},
		{"a century as its hundreds", []string{"Rail | Steam locomotives spread across Britain in the 19th century."}, "", "Steam locomotives spread across Britain in the 1800s.", sentFact, ""},
		{"hundreds as their century", []string{"Rail | Steam locomotives spread across Britain in the 1800s."}, "", "Steam locomotives spread across Britain in the 19th century.", sentFact, ""},
		{"another century's hundreds", []string{"Rail | Steam locomotives spread across Britain in the 19th century."}, "", "Steam locomotives spread across Britain in the 1700s.", sentDropped, ""},
		{"a name that starts a longer name", []string{"Fort Wayne | Fort Wayne is a city in Indiana."}, "", "Fort Wayne is a city in India.", sentDropped, "india"},
		{"a name that starts a longer name, first", []string{"Nigeria | The country of Nigeria lies in West Africa."}, "", "Niger lies in West Africa.", sentDropped, ""},
		{"a capitalised word of another form", []string{vitaminD}, "", "Identified in 1922 by Elmer McCollum, vitamin D is produced in the skin.", sentFact, ""},
		{"per cent for %", []string{"Election | Turnout in the 2019 election was 67 per cent."}, "", "Turnout in the 2019 election was 67%.", sentFact, ""},
		{"% for per cent", []string{"Election | Turnout in the 2019 election was 67%."}, "", "Turnout in the 2019 election was 67 per cent.", sentFact, ""},
		{"a letter with no accent to strip", []string{"Søren Kierkegaard | The Danish philosopher Søren Kierkegaard wrote Fear and Trembling."}, "",
			"The Danish philosopher Soren Kierkegaard wrote Fear and Trembling.", sentFact, ""},
		{"ß as ss", []string{"Street | The museum stands on the Königstraße in Stuttgart."}, "", "The museum stands on the Konigstrasse in Stuttgart.", sentFact, ""},
		{"a denial moved to another clause", []string{eiffel}, "", "The Eiffel Tower is the tallest structure in France, and it is not in Paris.", sentDropped, "clause"},
		{"a denial in its own clause", []string{eiffel}, "", "The Eiffel Tower is in Paris, but it is not the tallest structure in France.", sentFact, ""},
		{"a count word changed", []string{calcium}, "", "One experiment was performed in the spring.", sentDropped, "one"},
		{"a count word kept", []string{calcium}, "", "Two experiments were performed in the spring.", sentFact, ""},
		{"a number put with another verb", []string{eiffel}, "", "The Eiffel Tower was built in 330.", sentDropped, "330"},
		{"words of two sentences in one clause", []string{vitaminD}, "", "Vitamin D is made in the liver.", sentDropped, "one sentence"},
		{"a false claim in the passage's words", []string{vitaminD}, "", "Rickets is fully reversed by drinking seawater.", sentDropped, "seawater"},
		{"the user's clause appended", []string{vitaminD}, "Does vitamin D cure cancer?", "Vitamin D is produced in the skin, and vitamin D cures cancer.", sentDropped, "cancer"},
		{"the user's common word", []string{vitaminD}, "Is vitamin D made in the liver?", "Vitamin D is made in the liver.", sentDropped, "liver"},
		{"a claim joining two passages", []string{vitaminD, napoleon}, "", "Napoleon Bonaparte identified vitamin D.", sentDropped, ""},
		{"opposite", []string{calcium}, "", "Calcium absorption is generally considered to be improved under conditions of vitamin D deficiency.", sentDropped, ""},
		{"a denial the passage does not make", []string{vitaminD}, "", "Vitamin D is not produced in the skin.", sentDropped, "denial"},
		{"the passage's denial dropped", []string{eiffel}, "", "The Eiffel Tower is the tallest structure in France.", sentDropped, "denies"},
		{"a failure to do it", []string{"Vitamin D trial | In older adults, vitamin D supplementation failed to reduce fracture risk."}, "",
			"In older adults, vitamin D supplementation reduced fracture risk.", sentDropped, "denies"},
		{"a failure restated", []string{"Vitamin D trial | In older adults, vitamin D supplementation failed to reduce fracture risk."}, "",
			"In older adults, vitamin D supplementation failed to reduce fracture risk.", sentFact, ""},
		{"a price the passage does not give", []string{"Louvre | Admission to the Louvre costs 22 euros."}, "", "Admission to the Louvre is free.", sentDropped, "free"},
		{"a claim word alone is chat", []string{"Louvre | Admission to the Louvre costs 22 euros."}, "", "It's free!", sentChat, ""},
		{"a sign-off", []string{vitaminD}, "", "Hope this helps!", sentChat, ""},
		{"a claim word for the user", []string{"Louvre | Admission to the Louvre costs 22 euros."}, "", "Admission to the Louvre is free for you.", sentDropped, "free"},
		{"a claim word for the US", []string{"Louvre | Admission to the Louvre costs 22 euros."}, "", "Admission to the Louvre is free for US citizens.", sentDropped, "free"},
		{"a claim word of the speaker", []string{vitaminD}, "", "I would love to tell you that vitamin D is produced in the skin.", sentFact, ""},
		{"myth in a title", []string{"The Myth of Sisyphus | The Myth of Sisyphus is a 1942 philosophical essay by Albert Camus, its author."}, "",
			"Albert Camus is the author of a 1942 philosophical essay.", sentFact, ""},
		{"myth as a word", []string{"Zeus | In Greek myth, Zeus is the king of the gods."}, "", "Zeus is the king of the gods in Greek myth.", sentFact, ""},
		{"a negation in a title", []string{"Never Let Me Go | Never Let Me Go is a 2005 dystopian novel by British author Kazuo Ishiguro."}, "",
			"Kazuo Ishiguro is a British author.", sentFact, ""},
		{"a denial in a clause with fewer of the words", []string{"Vitamin D | Vitamin D is not produced by plants; it is produced in the skin."}, "",
			"Vitamin D is produced in the skin.", sentFact, ""},
		{"a bound after the number", []string{"Trial | Patients aged 65 and over were enrolled."}, "", "Patients older than 65 were enrolled.", sentFact, ""},
		{"a bound in another word", []string{"Olympics | Under 300 athletes competed at the 1896 Summer Olympics."}, "",
			"Fewer than 300 athletes competed at the 1896 Summer Olympics.", sentFact, ""},
		{"a bound turned after the number", []string{"Trial | Patients aged 65 or younger were enrolled."}, "", "Patients older than 65 were enrolled.", sentDropped, "65"},
		{"a claim word in a pleasantry", nil, "", "I'd be happy to help!", sentChat, ""},
		{"a claim word of the passage", []string{"Louvre | Admission to the Louvre is free on the first Sunday of the month."}, "",
			"Admission to the Louvre is free on the first Sunday of the month.", sentFact, ""},
		{"a year in its own opening phrase", []string{napoleon}, "", "In 1804, Napoleon Bonaparte rose to prominence.", sentDropped, "1804"},
		{"a year in its own opening phrase, where the passage has it", []string{napoleon}, "", "In 1804, Napoleon crowned himself Emperor of the French.", sentFact, ""},
		{"a year in its own opening phrase, an apposition after it", []string{napoleon}, "",
			"In 1804, Bonaparte, the French commander, crowned himself Emperor.", sentFact, ""},
		{"a year in its own closing phrase", []string{napoleon}, "", "Napoleon Bonaparte was a military commander and political leader, in 1804.", sentDropped, "1804"},
		{"a bound turned", []string{"Olympics | Fewer than 300 athletes competed at the 1896 Summer Olympics."}, "",
			"More than 300 athletes competed at the 1896 Summer Olympics.", sentDropped, "300"},
		{"a bound in other words", []string{"Olympics | More than 240 athletes competed at the 1896 Summer Olympics."}, "",
			"Over 240 athletes competed at the 1896 Summer Olympics.", sentFact, ""},
		{"a bound added", []string{napoleon}, "", "Napoleon crowned himself Emperor of the French before 1804.", sentDropped, "1804"},
		{"patients for population", []string{"Paris | Paris has a population of 2.1 million."}, "", "Paris has 2.1 million patients.", sentDropped, ""},
		{"residents for population", []string{"Paris | Paris has a population of 2.1 million."}, "", "Paris has 2.1 million residents.", sentFact, ""},
		{"an ordinal changed", []string{"Marie Curie | Marie Curie was the first woman to win a Nobel Prize."}, "",
			"Marie Curie was the second woman to win a Nobel Prize.", sentDropped, "opposite"},
		{"a denial cut by an aside", []string{"Vitamin D trial | Vitamin D supplementation did not, however, reduce fracture risk in older adults."}, "",
			"Vitamin D supplementation reduced fracture risk in older adults.", sentDropped, "denies"},
		{"a denial cut by an aside, restated", []string{"Vitamin D trial | Vitamin D supplementation did not, however, reduce fracture risk in older adults."}, "",
			"Vitamin D supplementation did not reduce fracture risk in older adults.", sentFact, ""},
		{"a denial by a pronoun for the title", []string{"Bat | Bats are mammals of the order Chiroptera. Contrary to popular belief, they are not blind."}, "",
			"Bats are blind.", sentDropped, "denies"},
		{"a negation before an acronym", []string{"Treatment as prevention | No HIV transmission was observed among couples in which the infected partner had a suppressed viral load."}, "",
			"HIV transmission was observed among couples in which the infected partner had a suppressed viral load.", sentDropped, "denies"},
		{"a number with and after it", []string{"Napoleon | Napoleon Bonaparte became First Consul in 1799 and later crowned himself Emperor of the French in 1804."}, "",
			"Napoleon became First Consul in 1799.", sentFact, ""},
		{"a passage's bound unsaid", []string{"Trial | After 12 weeks, systolic blood pressure fell by 5 mmHg in the exercise group."}, "",
			"Systolic blood pressure fell by 5 mmHg in the exercise group at 12 weeks.", sentFact, ""},
		{"a year in its opening phrase, named late", []string{eiffel}, "", "In 1889, the Eiffel Tower was built for the World's Fair.", sentFact, ""},
		{"a myth that explains", []string{"Persephone | The abduction of Persephone by Hades is a myth that explains the changing of the seasons."}, "",
			"The abduction of Persephone by Hades explains the changing of the seasons.", sentFact, ""},
		{"like as a preposition", []string{"Cetacea | Whales and dolphins are marine mammals."}, "", "Whales, like dolphins, are marine mammals.", sentFact, ""},
		{"free told to the user", []string{"Louvre | Admission to the Louvre costs 22 euros."}, "", "You'll enjoy free admission to the Louvre.", sentDropped, "free"},
		{"a myth", []string{"Bat | It is a myth that bats are blind."}, "", "Bats are blind.", sentDropped, "denies"},
		{"a title that holds some of the words", []string{"Bat | Bats are not blind."}, "", "Bats are blind.", sentDropped, "denies"},
		{"a sentence that holds fewer of the words", []string{"Whale | Whales are not fish. Whales are mammals."}, "", "Whales are fish.", sentDropped, "denies"},
		{"a denial in another clause of the sentence", []string{"Pluto | Pluto was discovered in 1930, but it is no longer classified as a planet."}, "",
			"Pluto was discovered in 1930.", sentFact, ""},
		{"the first clause of a sentence that denies in its second", []string{calcium}, "",
			"Calcium absorption is generally considered to be impaired under conditions of vitamin D deficiency.", sentFact, ""},
		{"assent alone", []string{vitaminD}, "", "Yes!", sentDropped, "assent"},
		{"assent cut to a bare pronoun", []string{vitaminD}, "Did Napoleon discover vitamin D?", "Yes, he did.", sentDropped, "assent"},
		{"assent of an adverb", []string{vitaminD}, "Did Napoleon discover vitamin D?", "Absolutely, it is.", sentDropped, "assent"},
		{"elliptical answer", []string{vitaminD}, "Napoleon discovered vitamin D, right?", "He did.", sentDropped, "elliptical"},
		{"elliptical belief", []string{vitaminD}, "Napoleon discovered vitamin D, right?", "I think so!", sentDropped, "elliptical"},
		{"elliptical after a chat word", []string{vitaminD}, "Is the Eiffel Tower in Rome?", "Sure, it is.", sentDropped, "elliptical"},
		{"denial before a doubt", nil, "", "No, I'm not sure.", sentChat, ""},
		{"of all", []string{"Jupiter | Jupiter is the largest planet in the Solar System."}, "", "Jupiter is the largest of all the planets in the Solar System.", sentFact, ""},
		{"at all", []string{"Bat | Bats are not blind; many species see well."}, "", "Bats are not blind at all.", sentFact, ""},
		{"after all", []string{eiffel}, "", "The Eiffel Tower was, after all, built in 1889 for the World's Fair.", sentFact, ""},
		{"an opposite about another clause", []string{"Napoleon | The French Revolution ended a decade before Napoleon was crowned emperor."}, "",
			"Napoleon was crowned emperor after the French Revolution ended.", sentFact, ""},
		{"a comparison turned around", []string{"Lyon | Lyon is less populous than Paris."}, "", "Paris is more populous than Lyon.", sentFact, ""},
		{"the only one", []string{"Venus | Venus is the only planet that rotates clockwise."}, "", "Venus is the only one of the planets that rotates clockwise.", sentFact, ""},
		{"a stop-word name with dots", []string{"United States | The U.S. entered World War I in April 1917."}, "", "The US entered World War I in April 1917.", sentFact, ""},
		{"a stop-word name against the stop word", []string{"Drug X trial | The trial of drug X was funded by Pfizer, who also ran it."}, "", "The trial of drug X was funded by the WHO.", sentDropped, "who"},
		{"a passage's possessive is no subject", []string{"Bonaparte family | Napoleon was born in Corsica in 1769. His brother Joseph ruled Spain."}, "", "Napoleon ruled Spain.", sentDropped, ""},
		{"a passage's it is no subject", []string{"French invasion of Russia | Napoleon invaded Russia in 1812. It ended in disaster."}, "", "Napoleon ended in disaster.", sentDropped, ""},
		{"an elliptical answer with a number", []string{napoleon}, "Was Wellington crowned emperor in 1804?", "He did, in 1804.", sentDropped, "elliptical"},
		{"a condition later in a clause", nil, "", "I'm not sure, but I'll help if I can.", sentChat, ""},
		{"a passage's pronoun resolved", []string{"First French Empire | Napoleon was born in Corsica in 1769. He was crowned emperor in 1804."}, "",
			"Napoleon was crowned emperor in 1804.", sentFact, ""},
		{"a passage's pronoun, another subject", []string{"First French Empire | Wellington was born in Dublin in 1769. He was crowned emperor in 1804."}, "",
			"Napoleon was crowned emperor in 1804.", sentDropped, "napoleon"},
		{"only one for a count", []string{"Drug X trial | Twelve of the 40 patients died during the trial of drug X."}, "",
			"Only one of the patients died during the trial of drug X.", sentDropped, "one"},
		{"two in all for three", []string{"Napoleon | Napoleon had three children."}, "", "Napoleon had children, two in all.", sentDropped, "two"},
		{"a pairing written as a count", []string{"Treaty | The two countries signed the treaty in 1920."}, "", "Two countries signed the treaty in 1920.", sentFact, ""},
		{"more for fewer", []string{"Drug X trial | Fewer patients died in the drug group than in the placebo group."}, "",
			"More patients died in the drug group than in the placebo group.", sentDropped, "opposite"},
		{"before for after", []string{"Aspirin | Aspirin should be taken after meals."}, "", "Aspirin should be taken before meals.", sentDropped, "opposite"},
		{"after restated", []string{"Aspirin | Aspirin should be taken after meals."}, "", "Aspirin should be taken after meals.", sentFact, ""},
		{"all for a count", []string{"Drug X trial | Twelve of the 40 patients died during the trial of drug X."}, "",
			"All of the patients died during the trial of drug X.", sentDropped, "all"},
		{"all restated as every", []string{"Drug X trial | Every patient completed the trial of drug X."}, "", "All patients completed the trial of drug X.", sentFact, ""},
		{"a country that folds to a stop word", []string{"Drug X trial | The trial of drug X ran in Norway in 2015."}, "", "The trial of drug X ran in the US in 2015.", sentDropped, "us"},
		{"an organisation that folds to a stop word", []string{"Drug X trial | The trial of drug X was funded by Pfizer."}, "", "The trial of drug X was funded by the WHO.", sentDropped, "who"},
		{"a month that folds to a stop word", []string{"Napoleon | Napoleon was born in Corsica on 15 August 1769."}, "", "Napoleon was born in Corsica in May 1769.", sentDropped, "may"},
		{"a stop word that is a country, restated", []string{"Drug X trial | The trial of drug X ran in the US in 2015."}, "", "The trial of drug X ran in the US in 2015.", sentFact, ""},
		{"elliptical answer before a belief", []string{vitaminD}, "Did Napoleon discover vitamin D?", "He did, I think.", sentDropped, "elliptical"},
		{"elliptical answer with fillers", []string{vitaminD}, "Did Napoleon discover vitamin D?", "He certainly did, actually.", sentDropped, "elliptical"},
		{"elliptical answer after a doubt", []string{vitaminD}, "Did Napoleon discover vitamin D?", "I'm not sure, but he did.", sentDropped, "elliptical"},
		{"an offer with a condition", nil, "", "Happy to help, if I can.", sentChat, ""},
		{"a closing offer ending on an auxiliary", nil, "", "Let me know if there is anything else I can do.", sentChat, ""},
		{"a word opening with No-", []string{"No-fault divorce | No-fault divorce was introduced in California in 1969."}, "",
			"No-fault divorce was introduced in California in 1969.", sentFact, ""},
		{"denial with nothing to check", []string{vitaminD}, "", "That is not true.", sentDropped, ""},
		{"nothing retrieved", nil, "", "Vitamin D was identified in 1922.", sentDropped, "no passage"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newAttributor(testTerms(tt.passages...), tt.user)
			a.add(hits(tt.passages...)...)
			c, err := a.check(context.Background(), tt.sentence, nil)
			if err != nil {
				t.Fatal(err)
			}
			if c.kind != tt.want {
				t.Fatalf("check(%q) = kind %d (%s), want %d", tt.sentence, c.kind, c.reason, tt.want)
			}
			if tt.want == sentDropped && !strings.Contains(strings.ToLower(c.reason), strings.ToLower(tt.reason)) {
				t.Errorf("reason %q, want it to name %q", c.reason, tt.reason)
			}
		})
	}
}
