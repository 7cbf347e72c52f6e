package chat

import "testing"

// The bullets a summarizer writes, faithful or not, against the passage each came from. The
// faithful ones are paraphrases of the kind the prompt's examples teach (and the paper's Table
// 18 shows); the laundered ones are the user's assertion or the model's memory restated as a
// bullet of an unrelated or contradicting passage.
var supportTable = []struct {
	passage, bullet string
	faithful        bool
}{
	{eiffel, "The Eiffel Tower was built for the 1889 World's Fair in Paris.", true},
	{eiffel, "The Eiffel Tower opened on 31 March 1889.", true},
	{apollo, "Neil Armstrong was the first person to step onto the Moon's surface.", true},
	{apollo, "Apollo 11 landed on the Moon on 20 July 1969, with Neil Armstrong and Buzz Aldrin.", true},
	{maine, "The Maine Coon is a large cat breed native to the US state of Maine.", true},
	{maine, "Maine Coons are known as gentle giants and are intelligent, playful and sociable.", true},
	{maine, "Maine Coons get along well with children and dogs.", true},
	{curiosity, "The Curiosity rover landed in Gale crater on Mars on 6 August 2012.", true},
	{curiosity, "In 2012 Curiosity was the largest rover sent to Mars.", true},
	{beethoven, "Beethoven's hearing began to deteriorate from around 1798.", true},
	{beethoven, "Beethoven was almost totally deaf in the last decade of his life.", true},
	{beethoven, "Beethoven was a German composer.", true},
	{vitaminD, "Vitamin D was identified in 1922 by Elmer McCollum.", true},
	{vitaminD, "Vitamin D is produced in the skin on exposure to sunlight.", true},
	{napoleon, "Napoleon Bonaparte was a French military commander who crowned himself Emperor in 1804.", true},
	// Looser paraphrases: the check pays for its crudeness here.
	{apollo, "Armstrong walked on the lunar surface six hours after landing.", true},
	{eiffel, "The tower in Paris is made of wrought iron.", true},
	{vitaminD, "Elmer McCollum found vitamin D in 1922 while studying cod liver oil.", true},
	{beethoven, "Beethoven lost his hearing late in life.", true},
	{maine, "Maine Coons are friendly with kids and dogs.", true},

	{vitaminD, "Napoleon Bonaparte discovered vitamin D in 1850.", false},
	{napoleon, "Napoleon Bonaparte discovered vitamin D.", false},
	{napoleon, "Napoleon Bonaparte discovered vitamin D in 1850.", false},
	{eiffel, "The Eiffel Tower opened on 31 March 1899.", false},
	{eiffel, "The Eiffel Tower was designed by Leonardo da Vinci for the Olympic Games.", false},
	{apollo, "Buzz Aldrin was the first person to walk on Mars.", false},
	{curiosity, "The Curiosity rover was launched by the European Space Agency.", false},
	{beethoven, "Beethoven was an Austrian painter who lived in Vienna.", false},
	{maine, "Maine Coons are the most popular cat breed in Japan and were bred by monks.", false},
	{vitaminD, "Vitamin D cures the common cold, according to a 2021 Harvard study.", false},
}

const (
	eiffel    = "Eiffel Tower | The Eiffel Tower is a wrought-iron lattice tower in Paris. It was built for the 1889 World's Fair and opened on 31 March 1889."
	apollo    = "Apollo 11 | Apollo 11 was the American spaceflight that first landed humans on the Moon. Commander Neil Armstrong and lunar module pilot Buzz Aldrin landed on 20 July 1969. Armstrong became the first person to step onto the lunar surface six hours later."
	maine     = "Maine Coon | The Maine Coon is a large domesticated cat breed native to the US state of Maine. Known as gentle giants, Maine Coons are intelligent, playful and sociable, and they get along well with children and dogs."
	curiosity = "Curiosity (rover) | Curiosity is a car-sized Mars rover that landed in Gale crater on 6 August 2012. As of 2012 it was the largest rover sent to Mars."
	beethoven = "Ludwig van Beethoven | Beethoven was a German composer. From around 1798 his hearing began to deteriorate, and by the last decade of his life he was almost totally deaf."
	vitaminD  = "Vitamin D | Vitamin D is a group of fat-soluble secosteroids. In humans it is produced in the skin on exposure to ultraviolet B radiation from sunlight. It was identified in 1922 by Elmer McCollum, who named it after finding that cod liver oil cured rickets."
	napoleon  = "Napoleon | Napoleon Bonaparte was a French military commander and political leader who rose to prominence during the French Revolution. He crowned himself Emperor of the French in 1804."
)

// TestSummarySupportTable measures the lexical support check: it must drop every laundered
// bullet, and the share of faithful bullets it keeps is logged and held to what was measured.
func TestSummarySupportTable(t *testing.T) {
	var keptFaithful, faithful, droppedLaundered, laundered int
	for _, tt := range supportTable {
		share, ok := bulletSupport(tt.bullet, tt.passage)
		t.Logf("faithful=%-5v kept=%-5v share=%.2f  %s", tt.faithful, ok, share, tt.bullet)
		if tt.faithful {
			faithful++
			if ok {
				keptFaithful++
			}
			continue
		}
		laundered++
		if !ok {
			droppedLaundered++
		} else {
			t.Errorf("laundered bullet kept (share %.2f): %q", share, tt.bullet)
		}
	}
	t.Logf("faithful kept %d/%d, laundered dropped %d/%d", keptFaithful, faithful, droppedLaundered, laundered)
	// Measured: 18 of 20 (the two loosest paraphrases are dropped).
	if keptFaithful < 18 {
		t.Errorf("kept only %d of %d faithful bullets", keptFaithful, faithful)
	}
}
