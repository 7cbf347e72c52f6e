package wikitext

import (
	"strings"
)

// link renders the inside of a [[...]] link.
func (c *Cleaner) link(inner string, depth int, b *strings.Builder) {
	target, label, piped := strings.Cut(inner, "|")
	target = strings.TrimSpace(target)
	visible := strings.HasPrefix(target, ":") // [[:Category:X]] is a link, not a tag
	target = strings.TrimLeft(target, ":")
	if k := strings.IndexByte(target, ':'); k > 0 {
		prefix := strings.ToLower(strings.TrimSpace(target[:k]))
		if !visible && (c.isFileNS(prefix) || c.isCategoryNS(prefix) || isLangCode(prefix)) {
			return
		}
		if !piped && isInterwiki(prefix) {
			target = target[k+1:]
		}
	}
	switch {
	case piped && strings.TrimSpace(label) == "":
		b.WriteString(pipeTrick(target))
	case piped:
		if depth < maxDepth {
			c.inline(label, depth+1, b)
		}
	case depth < maxDepth:
		c.inline(strings.TrimPrefix(target, "#"), depth+1, b)
	}
}

// pipeTrick renders [[Target (disambiguation)|]] as "Target" and [[ns:Target|]] as "Target".
func pipeTrick(target string) string {
	if k := strings.IndexByte(target, ':'); k >= 0 {
		target = target[k+1:]
	}
	if k := strings.Index(target, " ("); k > 0 {
		target = target[:k]
	}
	if k := strings.IndexByte(target, ','); k > 0 {
		target = target[:k]
	}
	return strings.TrimSpace(target)
}

func (c *Cleaner) isFileNS(p string) bool {
	switch p {
	case "file", "image", "media", "файл", "картинка", "изображение", "datei", "bild", "fichier",
		"archivo", "imagen", "ficheiro", "imagem", "plik", "bestand":
		return true
	}
	return c.FileNS[p]
}

func (c *Cleaner) isCategoryNS(p string) bool {
	switch p {
	case "category", "категория", "kategorie", "catégorie", "categoría", "categoria", "kategoria",
		"categorie", "kategori":
		return true
	}
	return c.CategoryNS[p]
}

// isLangCode recognises interlanguage prefixes: "de", "zh-yue", "simple", "be-tarask".
func isLangCode(p string) bool {
	if p == "simple" {
		return true
	}
	head, _, _ := strings.Cut(p, "-")
	if len(head) < 2 || len(head) > 3 {
		return false
	}
	for i := 0; i < len(p); i++ {
		if (p[i] < 'a' || p[i] > 'z') && p[i] != '-' {
			return false
		}
	}
	return true
}

func isInterwiki(p string) bool {
	switch p {
	case "w", "wikipedia", "wikt", "wiktionary", "s", "wikisource", "q", "wikiquote", "n",
		"wikinews", "b", "wikibooks", "v", "wikiversity", "voy", "wikivoyage", "commons", "meta",
		"species", "wikispecies", "d", "wikidata", "mw", "mediawikiwiki":
		return true
	}
	return false
}

// urlSchemes are the protocols MediaWiki accepts in external links.
var urlSchemes = [...]string{"http://", "https://", "ftp://", "ftps://", "//", "mailto:", "news:",
	"irc://", "ircs://", "gopher://", "telnet://", "nntp://", "worldwind://", "sftp://", "git://",
	"svn://", "urn:", "geo:", "tel:", "sip:", "xmpp:", "magnet:"}

// extLink renders "[http://x label]" as "label" and drops "[http://x]". s[i] is a lone '['.
func (c *Cleaner) extLink(s string, i, depth int, b *strings.Builder) int {
	rest := s[i+1:]
	isURL := false
	for _, sc := range urlSchemes {
		if len(rest) >= len(sc) && strings.EqualFold(rest[:len(sc)], sc) {
			isURL = true
			break
		}
	}
	if !isURL {
		b.WriteByte('[')
		return i + 1
	}
	end := strings.IndexAny(rest, "]\n")
	if end < 0 || rest[end] == '\n' {
		return i + 1 // unclosed: MediaWiki shows the bare URL, which the text keeps
	}
	if sp := strings.IndexAny(rest[:end], " \t"); sp >= 0 && depth < maxDepth {
		c.inline(strings.TrimSpace(rest[sp+1:end]), depth+1, b)
	}
	return i + 1 + end + 1
}
