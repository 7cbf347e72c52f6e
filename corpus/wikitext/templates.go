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
	// arg is "" for a missing argument, also for k < 0: "{{lang}}" asks for its last argument
	// when it has none, and a panic here would stop the whole build on one bad template.
	arg := func(k int) string {
		if k >= 0 && k < len(pos) {
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
	case "unicode":
		out = cmp.Or(named["text"], arg(len(pos)-1)) // "{{unicode|ǂ}}": its one argument is text
	case "lang", "transl", "transliteration", "script", "lang-rtl":
		out = langText(pos, named)
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

// langText is the text of {{lang|fr|Bonjour}} and its kin ({{transl|ar|DIN|qalb}},
// {{script|Arab|...}}): the text is named "text=", else the last positional argument after the
// code, which comes first unless it is named "code=". "{{lang|fr}}" has a code and no text, so
// it renders nothing rather than the code.
func langText(pos []string, named map[string]string) string {
	if t, ok := named["text"]; ok {
		return t
	}
	if _, ok := named["code"]; !ok {
		if len(pos) == 0 {
			return ""
		}
		pos = pos[1:]
	}
	if len(pos) == 0 {
		return ""
	}
	return pos[len(pos)-1]
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
