package corpus

import (
	"cmp"
	"html"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Wikitext cleaning, in three passes over one page:
//
//  1. tags: comments and the tags whose content is not prose (<ref>, <math>, <gallery>, ...)
//     are removed with their content; other known HTML tags lose only their markup.
//     <nowiki> and <pre> content is entity-escaped so that the later passes leave it literal.
//  2. inline: templates ({{...}}), tables ({|...|}), files, categories and interlanguage
//     links are removed; links, external links, bold/italic and magic words become text.
//     A small set of templates that stand for prose ({{convert}}, {{lang}}, {{nowrap}}, ...)
//     is rendered instead of dropped.
//  3. blocks: lines become headings (new sections), list items or paragraph lines;
//     entities are decoded last, so escaped markup ("&lt;ref&gt;") survives as literal text.
//
// Brackets are matched with stacks computed once per string (never by rescanning to the end for
// every opener), so the cleaner stays linear on hostile input. Unmatched openers and closers are
// dropped, so bare "{{", "[[", "]]", "}}" never reach the output.
//
// Choices a caller may need to know:
//   - Dropped with their content: <ref>, <references>, <gallery>, <math>, <chem>, <ce>, <score>,
//     <timeline>, <graph>, <syntaxhighlight>, <source>, <imagemap>, <templatedata>, <mapframe>,
//     <includeonly>, <noinclude>, <table>, <indicator>. Formulas and code are not prose, and a
//     formula's LaTeX source would only add noise to the lexical index.
//   - Kept as text: <sub>, <sup>, <span>, <small>, <div>, <blockquote>, <poem>, <center>, <code>,
//     <nowiki>, <pre> and the other inline HTML tags; <br> becomes a space.
//   - Sections dropped (with their subsections) because they are only lists of sources or links:
//     see wkDroppedSection.
//   - Lines with no letter or digit left after cleaning (residue of removed markup) are dropped.

// maxWikiDepth bounds the recursion into link labels and rendered template parameters, so
// deeply nested input costs at most maxWikiDepth linear passes.
const maxWikiDepth = 8

// CleanWikitext turns one page's wikitext into clean sections (lead section has Name "").
// Section names are heading paths joined with " > " ("History > Early life"). Sections left
// without text are omitted. title is the page title, which {{PAGENAME}} renders as.
func CleanWikitext(title, wikitext string) []Section {
	c := wikiCleaner{title: title}
	return c.clean(wikitext)
}

// wikiCleaner holds per-wiki knowledge: the local names of the File and Category namespaces,
// which a dump's <siteinfo> provides (lowercased), on top of the built-in defaults.
type wikiCleaner struct {
	title      string
	fileNS     map[string]bool
	categoryNS map[string]bool
}

func (c *wikiCleaner) clean(wikitext string) []Section {
	t := wkStripTags(wikitext)
	var b strings.Builder
	b.Grow(len(t))
	c.inline(t, 0, &b)
	return wkSplitBlocks(b.String())
}

// ---------- pass 1: tags and comments ----------

type wkTagKind uint8

const (
	wkTagUnknown wkTagKind = iota // not a tag: the '<' is literal text
	wkTagStrip                    // remove the tag, keep its content
	wkTagDrop                     // remove the tag and its content
	wkTagLiteral                  // remove the tag, keep its content as literal text (no markup)
	wkTagBreak                    // <br>, <hr>: a space
)

func wkClassifyTag(name string) wkTagKind {
	switch name {
	case "ref", "references", "gallery", "math", "chem", "ce", "score", "timeline", "graph",
		"syntaxhighlight", "source", "imagemap", "templatedata", "templatestyles", "mapframe",
		"maplink", "includeonly", "noinclude", "table", "indicator", "inputbox", "categorytree",
		"hiero", "section", "rdf", "img":
		return wkTagDrop
	case "nowiki", "pre":
		return wkTagLiteral
	case "br", "hr", "wbr":
		return wkTagBreak
	case "b", "i", "u", "s", "del", "ins", "sub", "sup", "small", "big", "span", "div", "p",
		"center", "font", "blockquote", "cite", "code", "tt", "kbd", "var", "samp", "abbr", "dfn",
		"em", "strong", "mark", "q", "ruby", "rb", "rt", "rp", "rtc", "bdi", "bdo", "h1", "h2",
		"h3", "h4", "h5", "h6", "tr", "td", "th", "caption", "ul", "ol", "li", "dl", "dt", "dd",
		"time", "data", "strike", "poem", "onlyinclude", "thead", "tbody", "tfoot", "abbrev",
		"translate", "languages", "tvar", "nav", "article", "aside", "figure", "figcaption":
		return wkTagStrip
	}
	return wkTagUnknown
}

// wkStripTags is pass 1. It returns s itself when there is nothing to do.
func wkStripTags(s string) string {
	if strings.IndexByte(s, '<') < 0 {
		return s
	}
	var lower string // ASCII-lowercased s, same byte offsets; built on first need
	noClose := map[string]int{}
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
		name, closing, selfClosing, end := wkParseTag(s, i)
		kind := wkClassifyTag(name)
		if kind == wkTagUnknown {
			b.WriteByte('<')
			i++
			continue
		}
		switch {
		case kind == wkTagBreak:
			b.WriteByte(' ')
			i = end
		case closing || selfClosing || kind == wkTagStrip:
			i = end
		default: // opening tag of a drop or literal element: find its close
			if lower == "" {
				lower = wkAsciiLower(s)
			}
			cs, ce := wkFindCloseTag(lower, name, end, noClose)
			if cs < 0 {
				i = end // no close: drop the tag alone
				continue
			}
			if kind == wkTagLiteral {
				wkWriteEscaped(&b, s[end:cs])
			}
			i = ce
		}
	}
}

// wkParseTag reads the tag starting at s[i] == '<'. name is lowercased, or "" when s[i:] is not
// a tag. end is the index after '>'.
func wkParseTag(s string, i int) (name string, closing, selfClosing bool, end int) {
	j := i + 1
	if j < len(s) && s[j] == '/' {
		closing = true
		j++
	}
	k := j
	for k < len(s) && k-j < 24 && wkIsASCIIAlnum(s[k]) {
		k++
	}
	if k == j || k >= len(s) {
		return "", false, false, 0
	}
	if c := s[k]; c != '>' && c != '/' && c != ' ' && c != '\t' && c != '\n' && c != '\r' {
		return "", false, false, 0
	}
	gt := strings.IndexByte(s[k:], '>')
	if gt < 0 {
		return "", false, false, 0
	}
	end = k + gt + 1
	selfClosing = s[end-2] == '/'
	return wkAsciiLower(s[j:k]), closing, selfClosing, end
}

// wkFindCloseTag finds "</name ...>" in lower from index from. It returns the start and end of the
// closing tag, or -1. noClose remembers, per name, a position from which the search already
// failed: any later search also fails, so unclosed tags cost one scan in total.
func wkFindCloseTag(lower, name string, from int, noClose map[string]int) (int, int) {
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

// wkWriteEscaped writes s with every markup character as a numeric entity, which pass 3 decodes.
func wkWriteEscaped(b *strings.Builder, s string) {
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

// ---------- pass 2: templates, tables, links ----------

// wikiSpecial (read-only) marks the bytes at which pass 2 may have something to do.
var wikiSpecial = [256]bool{'{': true, '}': true, '[': true, ']': true, '\'': true, '_': true}

func (c *wikiCleaner) inline(s string, depth int, b *strings.Builder) {
	tpl := wkMatchRuns(s, '{', '}', nil)
	links := wkMatchRuns(s, '[', ']', tpl)
	i := 0
	for i < len(s) {
		j := i
		for j < len(s) && !wikiSpecial[s[j]] {
			j++
		}
		b.WriteString(s[i:j])
		i = j
		if i >= len(s) {
			return
		}
		switch s[i] {
		case '{':
			if end, ok := tpl[i]; ok {
				c.template(s[i:end], depth, b)
				i = end
				continue
			}
			if i+1 < len(s) && s[i+1] == '|' && wkAtLineStart(s, i) {
				i = wkTableEnd(s, i, tpl)
				continue
			}
			i = wkSkipUnmatched(s, i, '{', tpl, b)
		case '}':
			i = wkSkipRun(s, i, '}', b)
		case '[':
			if end, ok := links[i]; ok {
				c.link(s[i+2:end-2], depth, b)
				i = end
				continue
			}
			if n := wkRunLen(s, i, '['); n == 1 {
				i = c.extLink(s, i, depth, b)
				continue
			}
			i = wkSkipUnmatched(s, i, '[', links, b)
		case ']':
			i = wkSkipRun(s, i, ']', b)
		case '\'':
			n := wkRunLen(s, i, '\'')
			switch {
			case n == 1:
				b.WriteByte('\'')
			case n == 4:
				b.WriteByte('\'') // an apostrophe before bold
			case n > 5:
				b.WriteString(s[i : i+n-5])
			}
			i += n
		case '_':
			i = wkMagicWord(s, i, b)
		}
	}
}

// wkMatchRuns pairs runs of open and close characters ("{{" with "}}", "[[" with "]]") with a
// stack, in one pass. It maps the index of each matched opener to the index after its closer.
// A run of three braces is one unit ("{{{param}}}"); other runs are pairs, the innermost pair
// at the end of an opening run. Regions already matched in skip (templates, when matching links)
// are jumped over: MediaWiki pairs templates before links.
func wkMatchRuns(s string, open, close byte, skip map[int]int) map[int]int {
	first := strings.IndexByte(s, open)
	if first < 0 || first+1 >= len(s) {
		return nil
	}
	type opener struct{ pos, width int }
	var stack []opener
	pairs := map[int]int{}
	for i := first; i < len(s); {
		c := s[i]
		if c == '{' && skip != nil {
			if end, ok := skip[i]; ok {
				i = end
				continue
			}
		}
		if c != open && c != close {
			i++
			continue
		}
		n := wkRunLen(s, i, c)
		if c == open {
			p := i
			if open == '{' && n%2 == 1 && n >= 3 {
				stack = append(stack, opener{p, 3})
				p += 3
			} else if n%2 == 1 {
				p++ // a lone leading bracket is text
			}
			for ; p+2 <= i+n; p += 2 {
				stack = append(stack, opener{p, 2})
			}
		} else {
			p, m := i, n
			for m >= 2 && len(stack) > 0 {
				top := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				w := 2
				if top.width == 3 && m >= 3 {
					w = 3
				}
				pairs[top.pos] = p + w
				p += w
				m -= w
			}
		}
		i += n
	}
	return pairs
}

func wkRunLen(s string, i int, c byte) int {
	n := 0
	for i+n < len(s) && s[i+n] == c {
		n++
	}
	return n
}

// wkSkipUnmatched drops the unmatched openers at the start of a run and returns the index of the
// first matched opener inside the run ("{{{{x}}" holds the template "{{x}}"), or the run's end.
func wkSkipUnmatched(s string, i int, c byte, pairs map[int]int, b *strings.Builder) int {
	n := wkRunLen(s, i, c)
	for k := i + 1; k < i+n; k++ {
		if _, ok := pairs[k]; ok {
			return k
		}
	}
	return wkSkipRun(s, i, c, b)
}

// wkSkipRun drops a run of unmatched brackets (two or more); a single one is text.
func wkSkipRun(s string, i int, c byte, b *strings.Builder) int {
	n := wkRunLen(s, i, c)
	if n == 1 {
		b.WriteByte(c)
	}
	return i + n
}

// wkAtLineStart reports whether only spaces, tabs and ':' indents precede s[i] on its line.
func wkAtLineStart(s string, i int) bool {
	for k := i - 1; k >= 0; k-- {
		switch s[k] {
		case '\n':
			return true
		case ' ', '\t', ':':
		default:
			return false
		}
	}
	return true
}

// wkTableEnd returns the index after the "|}" line that closes the table opened at s[i], counting
// nested tables and jumping over templates. An unclosed table runs to the end of the text, as
// MediaWiki renders it.
func wkTableEnd(s string, i int, tpl map[int]int) int {
	depth := 0
	for k := i; k < len(s); {
		if s[k] == '{' {
			if end, ok := tpl[k]; ok {
				k = end
				continue
			}
		}
		switch {
		case s[k] == '{' && k+1 < len(s) && s[k+1] == '|' && wkAtLineStart(s, k):
			depth++
			k += 2
		case s[k] == '|' && k+1 < len(s) && s[k+1] == '}' && wkAtLineStart(s, k):
			depth--
			k += 2
			if depth == 0 {
				return k
			}
		default:
			k++
		}
	}
	return len(s)
}

// wkMagicWord drops behaviour switches such as __TOC__ and __NOTOC__.
func wkMagicWord(s string, i int, b *strings.Builder) int {
	if strings.HasPrefix(s[i:], "__") {
		k := i + 2
		for k < len(s) && s[k] >= 'A' && s[k] <= 'Z' {
			k++
		}
		if k > i+2 && strings.HasPrefix(s[k:], "__") {
			return k + 2
		}
	}
	b.WriteByte('_')
	return i + 1
}

// link renders the inside of a [[...]] link.
func (c *wikiCleaner) link(inner string, depth int, b *strings.Builder) {
	target, label, piped := strings.Cut(inner, "|")
	target = strings.TrimSpace(target)
	visible := strings.HasPrefix(target, ":") // [[:Category:X]] is a link, not a tag
	target = strings.TrimLeft(target, ":")
	if k := strings.IndexByte(target, ':'); k > 0 {
		prefix := strings.ToLower(strings.TrimSpace(target[:k]))
		if !visible && (c.isFileNS(prefix) || c.isCategoryNS(prefix) || wkIsLangCode(prefix)) {
			return
		}
		if !piped && wkIsInterwiki(prefix) {
			target = target[k+1:]
		}
	}
	switch {
	case piped && strings.TrimSpace(label) == "":
		b.WriteString(wkPipeTrick(target))
	case piped:
		if depth < maxWikiDepth {
			c.inline(label, depth+1, b)
		}
	case depth < maxWikiDepth:
		c.inline(strings.TrimPrefix(target, "#"), depth+1, b)
	}
}

// wkPipeTrick renders [[Target (disambiguation)|]] as "Target" and [[ns:Target|]] as "Target".
func wkPipeTrick(target string) string {
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

func (c *wikiCleaner) isFileNS(p string) bool {
	switch p {
	case "file", "image", "media", "файл", "картинка", "изображение", "datei", "bild", "fichier",
		"archivo", "imagen", "ficheiro", "imagem", "plik", "bestand":
		return true
	}
	return c.fileNS[p]
}

func (c *wikiCleaner) isCategoryNS(p string) bool {
	switch p {
	case "category", "категория", "kategorie", "catégorie", "categoría", "categoria", "kategoria",
		"categorie", "kategori":
		return true
	}
	return c.categoryNS[p]
}

// wkIsLangCode recognises interlanguage prefixes: "de", "zh-yue", "simple", "be-tarask".
func wkIsLangCode(p string) bool {
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

func wkIsInterwiki(p string) bool {
	switch p {
	case "w", "wikipedia", "wikt", "wiktionary", "s", "wikisource", "q", "wikiquote", "n",
		"wikinews", "b", "wikibooks", "v", "wikiversity", "voy", "wikivoyage", "commons", "meta",
		"species", "wikispecies", "d", "wikidata", "mw", "mediawikiwiki":
		return true
	}
	return false
}

// wkUrlSchemes are the protocols MediaWiki accepts in external links.
var wkUrlSchemes = [...]string{"http://", "https://", "ftp://", "ftps://", "//", "mailto:", "news:",
	"irc://", "ircs://", "gopher://", "telnet://", "nntp://", "worldwind://", "sftp://", "git://",
	"svn://", "urn:", "geo:", "tel:", "sip:", "xmpp:", "magnet:"}

// extLink renders "[http://x label]" as "label" and drops "[http://x]". s[i] is a lone '['.
func (c *wikiCleaner) extLink(s string, i, depth int, b *strings.Builder) int {
	rest := s[i+1:]
	isURL := false
	for _, sc := range wkUrlSchemes {
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
	if sp := strings.IndexAny(rest[:end], " \t"); sp >= 0 && depth < maxWikiDepth {
		c.inline(strings.TrimSpace(rest[sp+1:end]), depth+1, b)
	}
	return i + 1 + end + 1
}

// template renders a {{...}} span: most templates vanish, a few stand for prose.
func (c *wikiCleaner) template(span string, depth int, b *strings.Builder) {
	if depth >= maxWikiDepth || strings.HasPrefix(span, "{{{") {
		return
	}
	inner := span[2 : len(span)-2]
	parts := wkSplitTemplate(inner)
	name := strings.ToLower(strings.TrimSpace(strings.ReplaceAll(parts[0], "_", " ")))
	var pos []string
	var named map[string]string
	for _, p := range parts[1:] {
		if !wkIsNamedParam(p) {
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
		out = c.title
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
		out = wkRenderConvert(pos)
	case "frac", "fraction", "sfrac":
		out = wkRenderFrac(pos)
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

// wkSplitTemplate splits a template body at the '|' that are not inside nested {{ }} or [[ ]].
func wkSplitTemplate(inner string) []string {
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

// wkIsNamedParam reports whether a template argument is "name = value" (a '=' before any nested
// markup).
func wkIsNamedParam(p string) bool {
	k := strings.IndexAny(p, "={[")
	return k >= 0 && p[k] == '='
}

func wkRenderConvert(pos []string) string {
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

func wkRenderFrac(pos []string) string {
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

// ---------- pass 3: lines, sections, paragraphs ----------

type wkLineKind uint8

const (
	wkLineNone wkLineKind = iota
	wkLinePara
	wkLineList
)

// wkSectionWriter accumulates the text of the current section.
type wkSectionWriter struct {
	out []Section
	sectionPath
	text     strings.Builder
	last     wkLineKind
	pendingP bool // a blank line was seen since the last text line
}

func wkSplitBlocks(s string) []Section {
	var w wkSectionWriter
	for len(s) > 0 {
		line := s
		if k := strings.IndexByte(s, '\n'); k >= 0 {
			line, s = s[:k], s[k+1:]
		} else {
			s = ""
		}
		w.line(line)
	}
	w.flush()
	return w.out
}

func (w *wkSectionWriter) line(line string) {
	line = strings.TrimRight(line, " \t\r")
	if level, name, ok := wkParseHeading(line); ok {
		w.heading(level, name)
		return
	}
	if w.dropAt > 0 {
		return
	}
	kind := wkLinePara
	trimmed := strings.TrimLeft(line, " \t")
	if len(trimmed) > 0 {
		switch trimmed[0] {
		case '*', '#', ':', ';':
			kind = wkLineList
			trimmed = strings.TrimLeft(trimmed, "*#:; \t")
		case '-':
			if strings.HasPrefix(trimmed, "----") {
				trimmed = strings.TrimLeft(trimmed, "-")
			}
		}
	}
	text := wkNormalizeLine(trimmed)
	if !wkHasWordChar(text) {
		// A blank line, or a line that held only removed markup, ends the paragraph.
		w.pendingP = w.last != wkLineNone
		return
	}
	switch {
	case w.last == wkLineNone:
	case w.last == kind && !w.pendingP:
		if kind == wkLineList {
			w.text.WriteByte('\n')
		} else {
			w.text.WriteByte(' ')
		}
	default:
		w.text.WriteString("\n\n")
	}
	w.text.WriteString(text)
	w.last, w.pendingP = kind, false
}

// wkParseHeading recognises "== Name ==" (levels 1..6). The name is cleaned text.
func wkParseHeading(line string) (int, string, bool) {
	if len(line) < 3 || line[0] != '=' || line[len(line)-1] != '=' {
		return 0, "", false
	}
	open, close := wkRunLen(line, 0, '='), 0
	for close < len(line) && line[len(line)-1-close] == '=' {
		close++
	}
	level := min(open, close, 6)
	if 2*level >= len(line) {
		return 0, "", false
	}
	name := wkNormalizeLine(strings.TrimSpace(line[level : len(line)-level]))
	if !wkHasWordChar(name) {
		return 0, "", false
	}
	return level, name, true
}

func (w *wkSectionWriter) heading(level int, name string) {
	w.flush()
	w.enter(level, name)
}

func (w *wkSectionWriter) flush() {
	if w.text.Len() > 0 {
		w.out = append(w.out, Section{Name: w.name, Text: w.text.String()})
	}
	w.text.Reset()
	w.last, w.pendingP = wkLineNone, false
}

// wkDroppedSection lists the headings of sections that hold only references and links.
func wkDroppedSection(name string) bool {
	switch strings.ToLower(name) {
	case "references", "notes", "footnotes", "citations", "sources", "see also", "external links",
		"further reading", "notes and references", "references and notes", "bibliography",
		"works cited", "reference", "external link", "related articles", "other websites",
		"notes and citations", "sources and references", "references and further reading",
		"източници", "бележки", "външни препратки", "вижте също", "литература",
		"einzelnachweise", "weblinks", "siehe auch", "références", "liens externes", "voir aussi",
		"referencias", "enlaces externos", "véase también":
		return true
	}
	return false
}

// wkNormalizeLine decodes entities, collapses whitespace and tidies the punctuation that removed
// markup leaves behind ("word ," and empty parentheses).
func wkNormalizeLine(s string) string {
	if strings.IndexByte(s, '&') >= 0 {
		s = html.UnescapeString(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for i := 0; i < len(s); {
		c := s[i]
		size, isSpace := 1, false
		if c < utf8.RuneSelf {
			isSpace = c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
		} else {
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			isSpace = unicode.IsSpace(r) || r == '\u200b'
		}
		if isSpace {
			space = true
		} else {
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	out := b.String()
	if wkNeedsTidy(out) {
		out = wkTidyPunct(out)
	}
	return out
}

var wkPunctFixes = strings.NewReplacer("()", "", "( )", "", "(; ", "(", "(, ", "(", " ,", ",",
	" .", ".", " ;", ";", "( ", "(", " )", ")", ",,", ",")

// wkNeedsTidy is a quick test for the patterns wkPunctFixes repairs; most lines have none.
func wkNeedsTidy(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		switch a, b := s[i], s[i+1]; {
		case a == '(' && (b == ')' || b == ' ' || b == ';' || b == ','),
			a == ' ' && (b == ',' || b == '.' || b == ';' || b == ')'),
			a == ',' && b == ',':
			return true
		}
	}
	return false
}

func wkTidyPunct(s string) string {
	for range 3 { // fixes can uncover each other: "( ( ) )"
		t := wkPunctFixes.Replace(s)
		if t == s {
			break
		}
		s = t
	}
	return strings.TrimSpace(strings.ReplaceAll(s, "  ", " "))
}

func wkHasWordChar(s string) bool {
	for _, r := range s {
		if r < utf8.RuneSelf {
			if wkIsASCIIAlnum(byte(r)) {
				return true
			}
			continue
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

// ---------- small helpers ----------

func wkIsASCIIAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// wkAsciiLower lowercases ASCII letters only, so byte offsets are unchanged.
func wkAsciiLower(s string) string {
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
