package wikitext

import (
	"cmp"
	"strings"
)

// template renders a {{...}} span: most templates vanish, a few stand for prose.
func (c *Cleaner) template(span string, depth int, b *strings.Builder) {
	if depth >= maxDepth || strings.HasPrefix(span, "{{{") {
		return
	}
	inner := span[2 : len(span)-2]
	parts := splitTemplate(inner)
	name := strings.ToLower(strings.TrimSpace(strings.ReplaceAll(parts[0], "_", " ")))
	var pos []string
	var named map[string]string
	for _, p := range parts[1:] {
		if !isNamedParam(p) {
			pos = append(pos, strings.TrimSpace(p))
			continue
		}
		if named == nil {
			named = map[string]string{}
		}
		k, v, _ := strings.Cut(p, "=")
		named[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	arg := func(k int) string {
		if k < len(pos) {
			return pos[k]
		}
		return ""
	}
	var out string
	switch name {
	case "pagename", "pagenamee", "fullpagename":
		out = c.Title
	case "'", "'s", "·", "•":
		out = name
	case "ndash":
		out = "–"
	case "snd", "spaced ndash":
		out = " – "
	case "mdash", "spaced mdash":
		out = "—"
	case "nbsp", "sp", "space":
		out = " "
	case "pipe", "!":
		out = "|"
	case "nowrap", "nobr", "small", "smaller", "big", "larger", "nowiki", "sic", "abbr", "code",
		"em", "strong", "visible anchor", "ill", "interlanguage link", "nihongo", "keypress",
		"mvar", "var", "vanchor", "serif", "sans-serif", "smallcaps", "sc", "flag", "flagcountry",
		"lang-x", "uc", "lc", "nastaliq":
		out = arg(0)
	case "resize":
		out = arg(len(pos) - 1)
	case "lang", "transl", "transliteration", "script", "unicode", "lang-rtl":
		out = arg(len(pos) - 1)
	case "quote", "quotation", "blockquote", "cquote", "quote box":
		out = cmp.Or(named["text"], named["quote"], arg(0))
	case "as of":
		if arg(0) != "" {
			out = "As of " + arg(0)
		}
	case "angbr":
		out = "⟨" + arg(0) + "⟩"
	case "chem", "chem2":
		out = strings.Join(pos, "")
	case "convert", "cvt":
		out = renderConvert(pos)
	case "frac", "fraction", "sfrac":
		out = renderFrac(pos)
	case "circa", "c.":
		out = "c. " + arg(0)
	default:
		if strings.HasPrefix(name, "lang-") {
			out = arg(0)
		}
	}
	if out != "" {
		c.inline(out, depth+1, b)
	}
}

// splitTemplate splits a template body at the '|' that are not inside nested {{ }} or [[ ]].
func splitTemplate(inner string) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(inner); i++ {
		switch inner[i] {
		case '{', '[':
			depth++
		case '}', ']':
			if depth > 0 {
				depth--
			}
		case '|':
			if depth == 0 {
				parts = append(parts, inner[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, inner[start:])
}

// isNamedParam reports whether a template argument is "name = value" (a '=' before any nested
// markup).
func isNamedParam(p string) bool {
	k := strings.IndexAny(p, "={[")
	return k >= 0 && p[k] == '='
}

func renderConvert(pos []string) string {
	if len(pos) == 0 {
		return ""
	}
	if len(pos) >= 4 {
		switch pos[1] {
		case "and", "to", "-", "–", "or", "by", "x", "×", "+", "to(-)", "and(-)":
			return pos[0] + " " + pos[1] + " " + pos[2] + " " + pos[3]
		}
	}
	if len(pos) >= 2 {
		return pos[0] + " " + pos[1]
	}
	return pos[0]
}

func renderFrac(pos []string) string {
	switch len(pos) {
	case 0:
		return ""
	case 1:
		return "1/" + pos[0]
	case 2:
		return pos[0] + "/" + pos[1]
	default:
		return pos[0] + " " + pos[1] + "/" + pos[2]
	}
}
