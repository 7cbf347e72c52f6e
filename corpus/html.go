package corpus

import (
	"io"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// HTMLSections converts an article's HTML (Wikipedia/Parsoid as in Wikimedia Enterprise
// article_body.html, or any similar page) to clean text by section. Headings h1-h6 start
// sections named by their text; text before the first heading is the lead (Name "").
// Navboxes, sidebars, hatnotes, references and citation marks, figures, math, style and
// script are dropped, as are reference-like sections ("References", "External links",
// "See also", ...) whose text is lists of links and citations rather than prose. Section
// names are heading paths ("Behavior > Diet"), as in CleanWikitext. Sections with no text
// left are omitted. Paragraphs are separated by "\n\n".
//
// Tables and infoboxes are not prose, but they are what WikiChat retrieves as blocks of type
// "table" and "infobox": each becomes a section of its own, named after the section it sits
// in, with Block set, one paragraph per row ("label: value" for an infobox's two-cell rows,
// cells joined by "; " otherwise) after the caption. They follow all prose sections, so that
// the passages of the prose keep the ordinals (and ids) they had when tables were dropped.
func HTMLSections(r io.Reader) ([]Section, error) {
	root, err := html.Parse(r)
	if err != nil {
		return nil, err
	}
	e := htmlExtractor{}
	body := findBody(root)
	e.walk(body)
	e.endSection()
	return append(e.sections, e.blocks...), nil
}

// dropTags are elements whose whole subtree is not article prose.
var dropTags = map[atom.Atom]bool{
	atom.Style: true, atom.Script: true, atom.Noscript: true,
	atom.Figure: true, atom.Math: true, atom.Head: true, atom.Title: true,
	atom.Audio: true, atom.Video: true, atom.Object: true, atom.Template: true,
	atom.Button: true, atom.Form: true, atom.Nav: true,
	atom.Svg: true,
}

// dropClasses are Wikipedia/Parsoid CSS classes of non-prose blocks and inline marks.
var dropClasses = map[string]bool{
	"navbox": true, "vertical-navbox": true, "navbox-inner": true,
	"sidebar": true, "metadata": true, "ambox": true, "mbox-small": true, "hatnote": true,
	"shortdescription": true, "noprint": true, "mw-editsection": true, "reference": true,
	"references": true, "reflist": true, "mw-references-wrap": true, "mw-cite-backlink": true,
	"thumb": true, "gallery": true, "toc": true, "mw-empty-elt": true, "portal": true,
	"sistersitebox": true, "authority-control": true, "navigation-not-searchable": true,
	"mwe-math-element": true, "catlinks": true,
}

// dropTypeofs are Parsoid typeof values of dropped content (citations, reference lists).
var dropTypeofs = []string{"mw:Extension/ref", "mw:Extension/references", "mw:Extension/math"}

// blockTags end a paragraph when they open or close.
var blockTags = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.Li: true, atom.Ul: true, atom.Ol: true, atom.Dl: true,
	atom.Dd: true, atom.Dt: true, atom.Blockquote: true, atom.Pre: true, atom.Section: true,
	atom.Br: true, atom.Hr: true, atom.Article: true, atom.Header: true, atom.Footer: true,
	atom.Aside: true, atom.Main: true, atom.Caption: true, atom.Center: true, atom.Details: true,
	atom.Summary: true, atom.Address: true,
}

type htmlExtractor struct {
	sections []Section
	blocks   []Section // tables and infoboxes, in reading order
	sectionPath
	paras []string        // finished paragraphs of the current section
	cur   strings.Builder // current paragraph
}

func findBody(n *html.Node) *html.Node {
	if n.Type == html.ElementNode && n.DataAtom == atom.Body {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if b := findBody(c); b != nil {
			return b
		}
	}
	if n.Parent == nil {
		return n // no body: a fragment, take everything
	}
	return nil
}

func (e *htmlExtractor) walk(n *html.Node) {
	switch n.Type {
	case html.TextNode:
		if !e.Dropping() {
			e.cur.WriteString(n.Data)
		}
		return
	case html.ElementNode:
		if dropped(n) {
			return
		}
		if kind := blockKind(n); kind != "" {
			if !e.Dropping() {
				if text := tableText(n); text != "" {
					e.blocks = append(e.blocks, Section{Name: e.Name, Text: text, Block: kind})
				}
			}
			return
		}
		if level := headingLevel(n.DataAtom); level > 0 {
			e.endSection()
			e.Enter(level, strings.Join(strings.Fields(textOf(n)), " "))
			return
		}
	case html.DocumentNode:
	default:
		return // comments, doctype
	}
	block := n.Type == html.ElementNode && blockTags[n.DataAtom]
	if block {
		e.endParagraph()
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		e.walk(c)
	}
	if block {
		e.endParagraph()
	}
}

func (e *htmlExtractor) endParagraph() {
	p := strings.Join(strings.Fields(e.cur.String()), " ")
	e.cur.Reset()
	if p != "" {
		e.paras = append(e.paras, p)
	}
}

func (e *htmlExtractor) endSection() {
	e.endParagraph()
	if len(e.paras) > 0 && !e.Dropping() {
		e.sections = append(e.sections, Section{Name: e.Name, Text: strings.Join(e.paras, "\n\n")})
	}
	e.paras = e.paras[:0]
}

func headingLevel(a atom.Atom) int {
	switch a {
	case atom.H1:
		return 1
	case atom.H2:
		return 2
	case atom.H3:
		return 3
	case atom.H4:
		return 4
	case atom.H5:
		return 5
	case atom.H6:
		return 6
	}
	return 0
}

// dropped reports whether an element's subtree is not prose.
func dropped(n *html.Node) bool {
	if dropTags[n.DataAtom] {
		return true
	}
	for _, a := range n.Attr {
		switch a.Key {
		case "class":
			for c := range strings.FieldsSeq(a.Val) {
				if dropClasses[c] {
					return true
				}
			}
		case "typeof":
			for _, t := range dropTypeofs {
				if strings.Contains(a.Val, t) {
					return true
				}
			}
		case "role":
			if a.Val == "navigation" || a.Val == "note" {
				return true
			}
		case "style":
			if strings.Contains(strings.ReplaceAll(a.Val, " ", ""), "display:none") {
				return true
			}
		case "hidden":
			return true
		}
	}
	return false
}

// textOf is the text of n's subtree without dropped elements (for headings).
func textOf(n *html.Node) string {
	var b strings.Builder
	var rec func(*html.Node)
	rec = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
			return
		}
		if n.Type == html.ElementNode && dropped(n) {
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			rec(c)
		}
	}
	rec(n)
	return b.String()
}

// blockKind is the block type of an element that is a block of its own: "infobox" for
// Wikipedia's infoboxes (a table, or a div in some skins, of class "infobox ..."), "table"
// for the other tables that dropped has kept (navboxes, message boxes and sidebars are
// tables too, and dropped by their classes); "" for anything else.
func blockKind(n *html.Node) string {
	for _, a := range n.Attr {
		if a.Key == "class" {
			for c := range strings.FieldsSeq(a.Val) {
				if c == "infobox" {
					return "infobox"
				}
			}
		}
	}
	if n.DataAtom == atom.Table {
		return "table"
	}
	return ""
}

// tableText linearises a table or infobox: its caption, then one line per row (nested
// tables' rows follow their row's, never inside its cells), paragraphs separated by "\n\n".
// A row of a label (th) and one value (td) reads "label: value", as an infobox's fields do;
// other rows join their cells with "; ". An infobox built of divs, with no rows, reads as its
// text.
func tableText(n *html.Node) string {
	var lines []string
	var visit func(*html.Node)
	visit = func(n *html.Node) {
		if n.Type != html.ElementNode || dropped(n) {
			return
		}
		switch n.DataAtom {
		case atom.Caption:
			if t := cellText(n); t != "" {
				lines = append(lines, t)
			}
			return
		case atom.Tr:
			if row := rowText(n); row != "" {
				lines = append(lines, row)
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			visit(c)
		}
	}
	visit(n)
	if len(lines) == 0 {
		return cellText(n)
	}
	return strings.Join(lines, "\n\n")
}

// rowText is one table row as a line; see tableText.
func rowText(tr *html.Node) string {
	var cells []string
	var heads int
	for c := tr.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode || (c.DataAtom != atom.Th && c.DataAtom != atom.Td) || dropped(c) {
			continue
		}
		t := cellText(c)
		if t == "" {
			continue
		}
		if c.DataAtom == atom.Th {
			heads++
		}
		cells = append(cells, t)
	}
	// A label and its value: a th then a td, or a first cell that ends in a colon (the
	// taxoboxes' "Kingdom:" cells are td).
	if len(cells) == 2 && ((heads == 1 && firstCell(tr).DataAtom == atom.Th) || strings.HasSuffix(cells[0], ":")) {
		return strings.TrimSuffix(cells[0], ":") + ": " + cells[1]
	}
	return strings.Join(cells, "; ")
}

// firstCell is tr's first th or td (rowText calls it on rows that have one).
func firstCell(tr *html.Node) *html.Node {
	for c := tr.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && (c.DataAtom == atom.Th || c.DataAtom == atom.Td) {
			return c
		}
	}
	return tr
}

// cellText is the text of a cell (or caption) on one line, without dropped elements and
// nested tables (whose rows tableText lists themselves); block elements (br, li, p) separate
// words rather than running them together.
func cellText(n *html.Node) string {
	var b strings.Builder
	var rec func(*html.Node)
	rec = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
			return
		}
		if n.Type == html.ElementNode && (dropped(n) || n.DataAtom == atom.Table) {
			return
		}
		block := n.Type == html.ElementNode && blockTags[n.DataAtom]
		if block {
			b.WriteByte(' ')
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			rec(c)
		}
		if block {
			b.WriteByte(' ')
		}
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		rec(c)
	}
	return strings.Join(strings.Fields(b.String()), " ")
}
