package mediawiki

import (
	"strings"
	"testing"
)

func TestLanguage(t *testing.T) {
	for _, tc := range []struct{ dbname, base, want string }{
		{"bgwiki", "https://bg.wikipedia.org/wiki/Начална_страница", "bg"},
		{"dewiki", "", "de"},
		{"zh_yuewiki", "", "zh-yue"},
		{"simplewiki", "", "en"},
		{"frwiktionary", "", "fr"},
		{"", "https://ru.wikipedia.org/wiki/Заглавная_страница", "ru"}, // base URL only
		{"", "https://bg.m.wikipedia.org/wiki/X", "bg"},
		{"commonswiki", "https://commons.wikimedia.org/wiki/Main_Page", ""},
		{"wikidatawiki", "https://www.wikidata.org/wiki/", ""},
		{"", "https://example.org/wiki/Main", ""},
		{"", "not a url", ""},
		{"", "", ""},
		{"12wiki", "", ""},
		{"bg wiki", "https://de.wikipedia.org/wiki/", "de"}, // a broken dbname falls back to the URL
	} {
		if got := Language(tc.dbname, tc.base); got != tc.want {
			t.Errorf("Language(%q, %q) = %q, want %q", tc.dbname, tc.base, got, tc.want)
		}
	}
}

func FuzzLanguage(f *testing.F) {
	f.Add("bgwiki", "https://bg.wikipedia.org/wiki/X")
	f.Add("zh_yuewiki", "")
	f.Add("", "http://[::1]/x")
	f.Fuzz(func(t *testing.T, db, base string) {
		l := Language(db, base)
		if l != "" && l != strings.ToLower(l) {
			t.Fatalf("%q, %q -> %q: not lower case", db, base, l)
		}
	})
}
