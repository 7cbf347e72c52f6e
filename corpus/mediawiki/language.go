package mediawiki

import (
	"net/url"
	"strings"
)

// Wikimedia project suffixes of a database name ("bgwiki", "dewiktionary").
var wikiDBSuffixes = []string{"wiktionary", "wikibooks", "wikinews", "wikiquote", "wikisource",
	"wikiversity", "wikivoyage", "wiki"}

// Wikimedia wikis whose name is not a language.
var wikiNotLanguages = map[string]bool{
	"commons": true, "meta": true, "species": true, "wikidata": true, "mediawiki": true,
	"incubator": true, "sources": true, "foundation": true, "outreach": true, "www": true, "m": true,
	"test": true, "test2": true, "beta": true,
}

// Language returns the language code of a Wikimedia wiki from its database name
// (<siteinfo><dbname>, "bgwiki" -> "bg", "zh_yuewiki" -> "zh-yue") or, when that names no
// language, from its base URL (<siteinfo><base>, "https://bg.wikipedia.org/wiki/..." -> "bg").
// The Simple English Wikipedia is English. It returns "" when neither names a language.
func Language(dbname, base string) string {
	if l := dbLanguage(dbname); l != "" {
		return l
	}
	return urlLanguage(base)
}

func dbLanguage(db string) string {
	db = strings.ToLower(strings.TrimSpace(db))
	for _, s := range wikiDBSuffixes {
		if code, ok := strings.CutSuffix(db, s); ok {
			return languageCode(strings.ReplaceAll(code, "_", "-"))
		}
	}
	return ""
}

func urlLanguage(base string) string {
	u, err := url.Parse(strings.TrimSpace(base))
	if err != nil || u.Host == "" {
		return ""
	}
	labels := strings.Split(strings.ToLower(u.Hostname()), ".")
	// "bg.wikipedia.org", "bg.m.wikipedia.org": the language is the first of three or more.
	if len(labels) < 3 || !strings.HasPrefix(labels[len(labels)-2], "wiki") {
		return ""
	}
	return languageCode(labels[0])
}

// languageCode accepts code when it looks like a language code (letters and hyphens, a
// letter first, at most 12 characters) and names no Wikimedia wiki that is not a language.
func languageCode(code string) string {
	if code == "simple" {
		return "en"
	}
	if code == "" || len(code) > 12 || wikiNotLanguages[code] || code[0] < 'a' || code[0] > 'z' {
		return ""
	}
	for _, c := range code {
		if (c < 'a' || c > 'z') && c != '-' {
			return ""
		}
	}
	return code
}
