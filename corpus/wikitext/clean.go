package wikitext

import (
	"strings"

	"github.com/kairos-rag/kairos/corpus/document"
)

// maxDepth bounds the recursion into link labels and rendered template parameters, so
// deeply nested input costs at most maxDepth linear passes.
const maxDepth = 8

// Clean turns one page's wikitext into clean sections (lead section has Name "").
// Section names are heading paths joined with " > " ("History > Early life"). Sections left
// without text are omitted. title is the page title, which {{PAGENAME}} renders as.
func Clean(title, wikitext string) []document.Section {
	c := Cleaner{Title: title}
	return c.Clean(wikitext)
}

// Cleaner holds per-page and per-wiki knowledge: the page title, and the local names of the
// File and Category namespaces, which a dump's <siteinfo> provides (lowercased), on top of the
// built-in defaults. The zero value cleans with the defaults and an empty title. Clean only
// reads the maps.
type Cleaner struct {
	Title      string          // the page title, which {{PAGENAME}} renders as
	FileNS     map[string]bool // lowercased local names of namespaces 6 (File) and -2 (Media)
	CategoryNS map[string]bool // lowercased local names of namespace 14 (Category)
}

// Clean turns one page's wikitext into clean sections, as the function Clean does.
func (c *Cleaner) Clean(wikitext string) []document.Section {
	t := stripTags(wikitext)
	var b strings.Builder
	b.Grow(len(t))
	c.inline(t, 0, &b)
	return splitBlocks(b.String())
}

func isASCIIAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// asciiLower lowercases ASCII letters only, so byte offsets are unchanged.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for k := i; k < len(b); k++ {
				if c := b[k]; c >= 'A' && c <= 'Z' {
					b[k] = c + 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
