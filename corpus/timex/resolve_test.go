package timex

import (
	"fmt"
	"testing"
	"time"
)

func TestResolve(t *testing.T) {
	now := time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC)
	rng := func(f, t int) Spec { return Spec{Kind: KindRange, From: f, To: t} }
	tests := []struct {
		q    string
		want Spec
	}{
		// TimeQA questions (human_annotated_train.json).
		{"Who owned the Newton D. Baker House in Washington DC from 1811 to 1827?", rng(1811, 1827)},
		{"The German who was born on 2 March 1911 held what position from Apr 1939 to Jul 1941?", rng(1939, 1941)},
		{"Which conference did Pakistan Football Federation join in 1997?", rng(1997, 1997)},
		{"Where was the Army REserve Post in 1974 to 1975?", rng(1974, 1975)},
		{"What television shows did David Hasselhoff act in between the years 1975 and 1982?", rng(1975, 1982)},
		{"In the time period from 880 to 887, what was the official title of Arnulf, son of Carloman of Bavaria?", rng(880, 887)},
		{"Emma of Altdorf gave birth to who in 830?", rng(830, 830)},
		{"Who filled the vacant manager position after december 11, 2017?", rng(2018, 2026)},
		{"Since 2019 to present, usl league one has been home for richmond kickers.", rng(2019, 2026)},
		{"Which organization named wgaw after apr 1933 to 1954?", rng(1933, 1954)},
		// Other forms the spec names.
		{"Which bands were popular in the 1990s?", rng(1990, 1999)},
		{"What happened in the 2006–07 season?", rng(2006, 2007)},
		{"Who won the league last year?", rng(2025, 2025)},
		{"Who is playing this year?", rng(2026, 2026)},
		{"What was the population before 1900?", rng(1890, 1899)},
		{"Who was mayor as of 2019?", rng(2019, 2019)},
		// "As of" outranks the other years of the question, ranges included.
		{"Who led the party founded in 1990, as of 2005?", rng(2005, 2005)},
		{"As of March 2005, who led the party that ruled from 1990 to 1998?", rng(2005, 2005)},
		{"Who held the post from 1939 to 1941 as of 5 June 2012?", rng(2012, 2012)},
		{"Which clubs, as of 2001 and as of 2004, did he coach after 1995?", rng(2001, 2004)},
		{"Who was born in 1950 and what was his job as of the 1990s?", rng(1990, 1999)},
		// Without "as of" the range still wins over single years.
		{"Who led the party founded in 1990 from 2001 to 2005?", rng(2001, 2005)},
		{"Who is the current president of France?", Spec{Kind: KindRecent}},
		{"What is the latest iPhone?", Spec{Kind: KindRecent}},
		{"Who currently coaches the team?", Spec{Kind: KindRecent}},
		{"What happened recently in Chile?", Spec{Kind: KindRecent}},
		{"Who leads the party now?", Spec{Kind: KindRecent}},
		{"What is the population as of today?", Spec{Kind: KindRecent}},
		{"Who wrote Hamlet?", Spec{Kind: KindNone}},
		{"How many people live in 2000 people towns?", Spec{Kind: KindNone}},
		{"Which team did he join? It is known now", Spec{Kind: KindRecent}},
		{"", Spec{Kind: KindNone}},
	}
	for _, tc := range tests {
		if got := (Spec{Kind: KindAuto}).Resolve(tc.q, now); got != tc.want {
			t.Errorf("Resolve(%q) = %v, want %v", tc.q, got, tc.want)
		}
	}
	// Only auto is resolved.
	for _, s := range []Spec{{}, {Kind: KindRecent}, rng(1990, 1991)} {
		if got := s.Resolve("in 1812", now); got != s {
			t.Errorf("%v.Resolve = %v, want unchanged", s, got)
		}
	}
}

func ExampleSpec_Resolve() {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	auto, _ := Parse("auto")
	for _, q := range []string{
		"Which club did Paul Sturrock play for from 1974 to 1977?",
		"Who won the league last year?",
		"Who is the current mayor of Dakar?",
		"Who wrote Hamlet?",
	} {
		fmt.Println(auto.Resolve(q, now))
	}
	// Output:
	// 1974..1977
	// year=2025
	// recent
	// none
}

func ExampleExtract() {
	text := "From 1990 to 1998 he coached Dundee ; in the 2006–07 season and in March 2019 he returned , before 1,500 fans ."
	for _, m := range Extract(text) {
		fmt.Printf("%d..%d at %d: %q\n", m.From, m.To, m.Pos, text[m.Pos:m.Pos+4])
	}
	// Output:
	// 1990..1998 at 5: "1990"
	// 2006..2007 at 45: "2006"
	// 2019..2019 at 75: "2019"
}

func FuzzResolve(f *testing.F) {
	for _, s := range []string{"from 1990 to 1998", "after 2017", "before 1005", "the 1990s", "last year", "currently", "in 830?"} {
		f.Add(s)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, q string) {
		s := Spec{Kind: KindAuto}.Resolve(q, now)
		if s.Kind == KindAuto {
			t.Fatalf("Resolve(%q) left auto", q)
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("Resolve(%q) = %+v: %v", q, s, err)
		}
	})
}
