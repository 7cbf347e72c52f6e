package timex

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kairos-rag/kairos/internal/sharedtest"
)

// m builds a mention for tables: the year or range and the substring it starts at, located
// in the sentence so the positions are checked without counting bytes by hand.
type wantMention struct {
	from, to int
	at       string // the text at the mention's position
}

func TestExtract(t *testing.T) {
	tests := []struct {
		name, text string
		want       []wantMention
	}{
		// Sentences from ../shared/data/timeqa/human_annotated_train.json (tokenised as there).
		{"timeqa ownership", "In 1796 , John Laird , a wealthy merchant , lived in the house , and later Maj . George Peter , a War of 1812 commander and Maryland Congressman , purchased the house who lived there until 1827 , when",
			[]wantMention{{1796, 1796, "1796 , John"}, {1812, 1812, "1812 commander"}, {1827, 1827, "1827 ,"}}},
		{"timeqa full-date range", "- Ihor Vasylovych Drizhchany , September 8 , 2005 – December 22 , 2006",
			[]wantMention{{2005, 2006, "2005 –"}}},
		{"timeqa spaced day-month", "- Rochen ( 27 January – 1 March 1943 )",
			[]wantMention{{1943, 1943, "1943 )"}}},
		{"timeqa dash lists", "- Pedro Ferrándiz : 1959–1962 , 1964–1965 , 1966–1975",
			[]wantMention{{1959, 1962, "1959–1962"}, {1964, 1965, "1964–1965"}, {1966, 1975, "1966–1975"}}},
		{"timeqa percent and counts", "After the 1995 accords , 16.8 % of the village land is defined as Area B , while the remainder 83.2 % is Area C . Israel has confiscated 353 dunams of village land",
			[]wantMention{{1995, 1995, "1995 accords"}}},
		{"timeqa life dates", "Charlotte Fitch Roberts ( February 13 , 1859 – December 5 , 1917 ) was an American chemist",
			[]wantMention{{1859, 1917, "1859 –"}}},
		{"timeqa citation", "- McMullen , Richard F . ( 1964 ) The Fighter Interceptor Force 1962-1964 ADC Historical Study No . 27 , Air Defense Command , CO ( Confidential , declassified 22 Mar 2000 )",
			[]wantMention{{1964, 1964, "1964 )"}, {1962, 1964, "1962-1964"}, {2000, 2000, "2000 )"}}},
		{"timeqa as of", "The Yankees front office , as of 2019 , included Hal Steinbrenner",
			[]wantMention{{2019, 2019, "2019 ,"}}},
		{"timeqa cc class", "Pérez finished as the national runner-up in the Shifter 125 cc category , and participated in the global race Shifter 80 cc , in Las Vegas ; with six wins in 2002",
			[]wantMention{{2002, 2002, "2002"}}},
		// Sentences from ../shared/data/mediawiki-xml-gensim (enwiki, markup removed).
		{"enwiki dollars", "For example, in 2003 Alabama had an annual budget deficit as high as $670 million.",
			[]wantMention{{2003, 2003, "2003 Alabama"}}},
		{"enwiki day month", "On 21 October 1949, Huxley wrote to George Orwell, author of Nineteen Eighty-Four",
			[]wantMention{{1949, 1949, "1949,"}}},
		{"enwiki month range", "Dennis Tito (American): April 28 – May 6, 2001 (ISS)",
			[]wantMention{{2001, 2001, "2001 ("}}},
		{"enwiki page range", "Kempthorne (1979, pp 125–126,",
			[]wantMention{{1979, 1979, "1979,"}}},
		{"enwiki decade", "Category:1990s drama films", []wantMention{{1990, 1999, "1990s"}}},
		{"enwiki prior to", "Prior to 1918, these five founding engineering societies:", []wantMention{{1918, 1918, "1918,"}}},
		// Forms and false positives the issue names.
		{"to range", "He was mayor from 1990 to 1998.", []wantMention{{1990, 1998, "1990 to"}}},
		{"until range", "from 1994 until 2001 he coached", []wantMention{{1994, 2001, "1994 until"}}},
		{"short dash", "the 1990-98 period and the 2006–07 season", []wantMention{{1990, 1998, "1990-98"}, {2006, 2007, "2006–07"}}},
		{"century wrap", "the 1999–00 season", []wantMention{{1999, 2000, "1999–00"}}},
		{"slash season", "in the 2005/06 season", []wantMention{{2005, 2006, "2005/06"}}},
		{"month year", "It opened in March 2019.", []wantMention{{2019, 2019, "2019."}}},
		{"between", "between 1975 and 1982 he acted", []wantMention{{1975, 1982, "1975 and"}}},
		{"between the years", "acted between the years 1975 and 1982", []wantMention{{1975, 1982, "1975 and"}}},
		{"between months", "Between July 1929 and 1943 , the bank", []wantMention{{1929, 1943, "1929 and"}}},
		{"and is not a range", "in 1975 and 1982 he acted", []wantMention{{1975, 1975, "1975 and"}, {1982, 1982, "1982 he"}}},
		{"century", "in the 1800s", []wantMention{{1800, 1899, "1800s"}}},
		{"the 2000s", "in the 2000s", []wantMention{{2000, 2009, "2000s"}}},
		{"since", "since 2010 the club", []wantMention{{2010, 2010, "2010 the"}}},
		{"thousands", "a crowd of 1,500 and 2,000 fans", nil},
		{"people", "about 2000 people and 1500 km of road", nil},
		{"decimal", "pi is 3.1416 and x is 1999.5", nil},
		{"number", "No. 1999 and Route 1600", nil},
		{"out of range", "3017 N Street and 4000 metres and 0999", nil},
		{"isbn", "ISBN 978-1-4000-3242-1", nil},
		{"money", "it cost $1999 or £1850 or €2000", nil},
		{"percent", "1900 % or 1900%", nil},
		{"bc", "in 1200 BC", nil},
		{"ordinal", "the 1999th visitor", nil},
		{"early years", "In the period from 880 to 887 , Arnulf was margrave ; he died in 899 .",
			[]wantMention{{880, 887, "880 to"}, {899, 899, "899 ."}}},
		{"early year era", "founded c. 850 and rebuilt 960 AD", []wantMention{{850, 850, "850 and"}, {960, 960, "960 AD"}}},
		{"three digit count", "he scored 300 goals in 500 games", nil},
		// A numeric date is a day of its year, not a range to the year its month spells.
		{"iso date", "On 2001-09-11 the towers fell.", []wantMention{{2001, 2001, "2001-09-11"}}},
		{"slash date", "On 2001/09/11 and 1999/12/31.", []wantMention{{2001, 2001, "2001/09/11"}, {1999, 1999, "1999/12/31"}}},
		{"iso date one-digit day", "dated 2001-09-1 here", []wantMention{{2001, 2001, "2001-09-1"}}},
		{"iso date end of text", "2010-05-30", []wantMention{{2010, 2010, "2010-05-30"}}},
		{"iso date in range", "from 2001-09-11 to 2003-03-20", []wantMention{{2001, 2001, "2001-09-11"}, {2003, 2003, "2003-03-20"}}},
		{"range then dash", "the 2001-09 seasons and 1990-98-era", []wantMention{{2001, 2009, "2001-09"}, {1990, 1998, "1990-98"}}},
		{"mixed separators", "in 2001-09/11", []wantMention{{2001, 2009, "2001-09"}}},
		{"reversed range", "1998 to 1990", []wantMention{{1998, 1998, "1998 to"}, {1990, 1990, "1990"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Extract(tc.text)
			var want []Mention
			for _, w := range tc.want {
				pos := strings.Index(tc.text, w.at)
				if pos < 0 {
					t.Fatalf("bad table: %q not in text", w.at)
				}
				want = append(want, Mention{From: w.from, To: w.to, Pos: pos})
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("Extract(%q)\n got %v\nwant %v", tc.text, got, want)
			}
		})
	}
}

// TestExtractTimeQAGold checks recall on real data: the gold paragraph of a TimeQA question
// names at least one of the question's years far more often than not.
func TestExtractTimeQAGold(t *testing.T) {
	data, err := os.ReadFile(sharedtest.Path(t, "data/timeqa/human_annotated_train.json"))
	if err != nil {
		t.Fatal(err)
	}
	pages, err := decodeTimeQA(data)
	if err != nil {
		t.Fatal(err)
	}
	var n, hit int
	for _, p := range pages {
		for _, q := range p.questions {
			sp := Spec{Kind: KindAuto}.Resolve(q.text, timeQANow)
			if sp.Kind != KindRange {
				continue
			}
			n++
			for _, m := range Extract(p.paras[q.para]) {
				if m.From <= sp.To && m.To >= sp.From {
					hit++
					break
				}
			}
		}
	}
	t.Logf("%d/%d gold paragraphs mention a year in the question's range", hit, n)
	if n < 1000 || float64(hit) < 0.7*float64(n) {
		t.Errorf("only %d/%d gold paragraphs mention a question year", hit, n)
	}
}

func FuzzExtract(f *testing.F) {
	for _, s := range []string{"from 1990 to 1998", "1990-98", "2006–07", "the 1990s", "1,500",
		"September 8 , 2005 – December 22 , 2006", "from 880 to 887", "1999–00", "2000 people", "\u00a01994", "2001-09-11", "2001/09/11"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		prev := -1
		for _, m := range Extract(s) {
			if m.Pos <= prev || m.Pos >= len(s) {
				t.Fatalf("Extract(%q): position %d out of order or range", s, m.Pos)
			}
			prev = m.Pos
			if m.From > m.To || m.From < 100 || m.To > PlausibleMax {
				t.Fatalf("Extract(%q): implausible mention %+v", s, m)
			}
			if !isDigit(s[m.Pos]) || (utf8.ValidString(s) && !utf8.RuneStart(s[m.Pos])) {
				t.Fatalf("Extract(%q): mention %+v does not start at a digit", s, m)
			}
		}
	})
}

var benchText = "Newton D . Baker House | In 1796 , John Laird , a wealthy merchant , lived in the house , and later Maj . George Peter , a War of 1812 commander and Maryland Congressman , purchased the house who lived there until 1827 , when he sold it . From 1990 to 1998 it housed 1,500 books ; the 2006–07 renovation cost $2,000,000 and in March 2019 it reopened ."

func BenchmarkExtract(b *testing.B) {
	b.SetBytes(int64(len(benchText)))
	b.ReportAllocs()
	for b.Loop() {
		Extract(benchText)
	}
}
