package wikitext

import (
	"strconv"
	"strings"
)

// Pass 1: tags and comments.

type tagKind uint8

const (
	tagUnknown tagKind = iota // not a tag: the '<' is literal text
	tagStrip                  // remove the tag, keep its content
	tagDrop                   // remove the tag and its content
	tagLiteral                // remove the tag, keep its content as literal text (no markup)
	tagBreak                  // <br>, <hr>: a space
)

func classifyTag(name string) tagKind {
	switch name {
	case "ref", "references", "gallery", "math", "chem", "ce", "score", "timeline", "graph",
		"syntaxhighlight", "source", "imagemap", "templatedata", "templatestyles", "mapframe",
		"maplink", "includeonly", "noinclude", "table", "indicator", "inputbox", "categorytree",
		"hiero", "section", "rdf", "img":
		return tagDrop
	case "nowiki", "pre":
		return tagLiteral
	case "br", "hr", "wbr":
		return tagBreak
	case "b", "i", "u", "s", "del", "ins", "sub", "sup", "small", "big", "span", "div", "p",
		"center", "font", "blockquote", "cite", "code", "tt", "kbd", "var", "samp", "abbr", "dfn",
		"em", "strong", "mark", "q", "ruby", "rb", "rt", "rp", "rtc", "bdi", "bdo", "h1", "h2",
		"h3", "h4", "h5", "h6", "tr", "td", "th", "caption", "ul", "ol", "li", "dl", "dt", "dd",
		"time", "data", "strike", "poem", "onlyinclude", "thead", "tbody", "tfoot", "abbrev",
		"translate", "languages", "tvar", "nav", "article", "aside", "figure", "figcaption":
		return tagStrip
	}
	return tagUnknown
}

// stripTags is pass 1. It returns s itself when there is nothing to do.
func stripTags(s string) string {
	if strings.IndexByte(s, '<') < 0 {
		return s
	}
	var lower string // ASCII-lowercased s, same byte offsets; built on first need
	noClose := map[string]int{}
	lastGT := -2 // the last '>' of s, found on first need
	var b strings.Builder
	b.Grow(len(s))
	i := 0
	for {
		j := strings.IndexByte(s[i:], '<')
		if j < 0 {
			b.WriteString(s[i:])
			return b.String()
		}
		b.WriteString(s[i : i+j])
		i += j
		if strings.HasPrefix(s[i:], "<!--") {
			k := strings.Index(s[i+4:], "-->")
			if k < 0 {
				return b.String() // an unterminated comment hides the rest, as in MediaWiki
			}
			i += 4 + k + 3
			continue
		}
		if lastGT == -2 {
			lastGT = strings.LastIndexByte(s, '>')
		}
		name, closing, selfClosing, end := parseTag(s, i, lastGT)
		kind := classifyTag(name)
		if kind == tagUnknown {
			b.WriteByte('<')
			i++
			continue
		}
		switch {
		case kind == tagBreak:
			b.WriteByte(' ')
			i = end
		case closing || selfClosing || kind == tagStrip:
			i = end
		default: // opening tag of a drop or literal element: find its close
			if lower == "" {
				lower = asciiLower(s)
			}
			cs, ce := findCloseTag(lower, name, end, noClose)
			if cs < 0 {
				i = end // no close: drop the tag alone
				continue
			}
			if kind == tagLiteral {
				writeEscaped(&b, s[end:cs])
			}
			i = ce
		}
	}
}

// parseTag reads the tag starting at s[i] == '<'. name is lowercased, or "" when s[i:] is not
// a tag: not one classifyTag knows, or with no '>' after its name (lastGT is the last '>' of
// s). Both are settled before searching for the '>', so that text of many '<' costs a scan of
// its own, not one each ("<a <a <a ..." with no '>' after them).
func parseTag(s string, i, lastGT int) (name string, closing, selfClosing bool, end int) {
	j := i + 1
	if j < len(s) && s[j] == '/' {
		closing = true
		j++
	}
	k := j
	for k < len(s) && k-j < 24 && isASCIIAlnum(s[k]) {
		k++
	}
	if k == j || k >= len(s) {
		return "", false, false, 0
	}
	if c := s[k]; c != '>' && c != '/' && c != ' ' && c != '\t' && c != '\n' && c != '\r' {
		return "", false, false, 0
	}
	name = asciiLower(s[j:k])
	if k > lastGT || classifyTag(name) == tagUnknown {
		return "", false, false, 0
	}
	gt := strings.IndexByte(s[k:], '>')
	end = k + gt + 1
	selfClosing = s[end-2] == '/'
	return name, closing, selfClosing, end
}

// findCloseTag finds "</name ...>" in lower from index from. It returns the start and end of the
// closing tag, or -1. noClose remembers, per name, a position from which the search already
// failed: any later search also fails, so unclosed tags cost one scan in total.
func findCloseTag(lower, name string, from int, noClose map[string]int) (int, int) {
	if p, ok := noClose[name]; ok && from >= p {
		return -1, -1
	}
	pat := "</" + name
	for at := from; ; {
		k := strings.Index(lower[at:], pat)
		if k < 0 {
			noClose[name] = from
			return -1, -1
		}
		cs := at + k
		rest := cs + len(pat)
		if rest < len(lower) && (lower[rest] == '>' || lower[rest] == ' ' || lower[rest] == '\t' || lower[rest] == '\n') {
			if gt := strings.IndexByte(lower[rest:], '>'); gt >= 0 {
				return cs, rest + gt + 1
			}
		}
		at = rest
	}
}

// writeEscaped writes s with every markup character as a numeric entity, which pass 3 decodes.
func writeEscaped(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '{', '}', '[', ']', '\'', '|', '=', '*', '#', ':', ';', '_', '&', '<', '>':
			b.WriteString("&#")
			b.WriteString(strconv.Itoa(int(c)))
			b.WriteByte(';')
		default:
			b.WriteByte(c)
		}
	}
}
