package synthcorpus

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/corpus/document"
)

// mediaWikiHeader opens the export as Wikimedia's dumps do. Its dbname and base make the
// reader take the dump for English Wikipedia (the vocabulary is English).
const mediaWikiHeader = `<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/" version="0.11" xml:lang="en">
  <siteinfo>
    <sitename>Wikipedia</sitename>
    <dbname>enwiki</dbname>
    <base>https://en.wikipedia.org/wiki/Main_Page</base>
    <generator>kairos bench corpus (synthetic)</generator>
    <case>first-letter</case>
    <namespaces>
      <namespace key="0" case="first-letter" />
      <namespace key="6" case="first-letter">File</namespace>
      <namespace key="10" case="first-letter">Template</namespace>
      <namespace key="14" case="first-letter">Category</namespace>
    </namespaces>
  </siteinfo>
`

// GenerateMediaWiki writes the synthetic articles as a MediaWiki XML export (uncompressed; see
// multistream.Write for Wikipedia's bzip2 layout) whose wikitext the indexer must clean: an
// infobox, links, bold and italic words, <ref>s holding citation templates, comments, tables,
// a References and an External links section and categories, none of which leaves a word.
// Each passage the generator draws is one section (the first is the lead, the others have a
// "== Heading ==" of one to three words), so that the indexer's cleaner and splitter give back
// exactly opts.Passages passages, "Title | body" and "Title > Heading | body", each within
// MaxWords. Stats counts those passages and their words as indexed.
//
// Words whose characters wikitext would read as markup are wrapped in <nowiki>; words the
// cleaner would join to their neighbour (see standsAlone) are redrawn.
func GenerateMediaWiki(ctx context.Context, w io.Writer, m *Model, opts Options) (Stats, error) {
	return generateMediaWiki(ctx, w, m, opts, nil)
}

// generateMediaWiki is GenerateMediaWiki; expect, when set, gets each page's title and the
// passage texts the indexer's splitter should cut from it.
func generateMediaWiki(ctx context.Context, w io.Writer, m *Model, opts Options, expect func(title string, passages []string)) (Stats, error) {
	if m == nil {
		return Stats{}, errors.New("synthcorpus: nil model")
	}
	if err := m.Validate(); err != nil {
		return Stats{}, err
	}
	if err := opts.Validate(); err != nil {
		return Stats{}, err
	}
	opts.SetDefaults()
	if opts.MaxWords < 16 {
		return Stats{}, fmt.Errorf("synthcorpus: MaxWords %d: a MediaWiki corpus needs at least 16 (the splitter's minimum)", opts.MaxWords)
	}
	g := newGenerator(m, opts)
	// The prefix "Title > Heading |" must stay within half of MaxWords, or the splitter
	// shortens it: titles leave room for a heading of up to three words.
	g.maxTitle = max(1, opts.MaxWords/2-5)
	bw := bufio.NewWriterSize(w, 1<<16)
	pw := &pageWriter{w: bw, g: g}
	bw.WriteString(mediaWikiHeader)
	var st Stats
	for st.Passages < opts.Passages {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		st.Documents++
		p := pw.page(st.Documents, opts.Passages-st.Passages)
		for _, words := range p.words {
			st.Words += int64(words)
		}
		st.TailWords += int64(p.tail)
		before := st.Passages
		st.Passages += len(p.words)
		if expect != nil {
			expect(p.title, p.expected)
		}
		if opts.Progress != nil && st.Passages/opts.ProgressEvery != before/opts.ProgressEvery {
			opts.Progress(st.Passages)
		}
		if st.Documents%64 == 0 { // a failed write (a closed pipe) ends the run early
			if err := bw.Flush(); err != nil {
				return st, fmt.Errorf("synthcorpus: writing: %w", err)
			}
		}
	}
	bw.WriteString("</mediawiki>\n")
	if err := bw.Flush(); err != nil {
		return st, fmt.Errorf("synthcorpus: writing: %w", err)
	}
	if opts.Progress != nil && st.Passages%opts.ProgressEvery != 0 {
		opts.Progress(st.Passages)
	}
	return st, nil
}

// pageWriter writes pages of wikitext.
type pageWriter struct {
	w    *bufio.Writer
	g    *generator
	text strings.Builder // the current page's wikitext
	refs int             // <ref>s written so far, for their names and URLs
}

// drawnPage is what one page holds as the indexer sees it.
type drawnPage struct {
	title    string
	words    []int    // each passage's words, prefix included
	expected []string // each passage's text, as the splitter writes it
	tail     int
}

// page draws and writes page id with at most limit passages.
func (pw *pageWriter) page(id, limit int) drawnPage {
	g := pw.g
	titleWords := pw.safePhrase(max(1, min(g.titleLen.draw(g.rng), g.maxTitle)))
	titleWords[0] = upperFirst(titleWords[0]) // MediaWiki titles start with a capital
	p := drawnPage{title: strings.Join(titleWords, " ")}
	n := min(max(g.per.draw(g.rng), 1), limit)
	t := &pw.text
	t.Reset()
	// An infobox: a template, dropped with its parameters.
	fmt.Fprintf(t, "{{Infobox %s\n| name = %s\n| image = %s.jpg\n| founded = {{start date|19%02d|%d|%d}}\n}}\n",
		pw.safeWord(), p.title, pw.safeWord(), g.rng.IntN(100), 1+g.rng.IntN(12), 1+g.rng.IntN(28))
	for i := range n {
		prefix := len(titleWords) + 1 // "Title |"
		var heading []string
		if i > 0 {
			heading = pw.heading()
			prefix += 1 + len(heading) // "Title > Heading |"
			fmt.Fprintf(t, "\n== %s ==\n", strings.Join(heading, " "))
		}
		total := min(g.passageLen.draw(g.rng), g.maxWords)
		body := make([]string, max(total-prefix, 1))
		for k := range body {
			w, tail := g.wordWhere(standsAlone)
			body[k] = w
			if tail {
				p.tail++
			}
		}
		pw.body(body)
		p.words = append(p.words, prefix+len(body))
		head := p.title
		if len(heading) > 0 {
			head += " > " + strings.Join(heading, " ")
		}
		p.expected = append(p.expected, head+" | "+strings.Join(body, " "))
	}
	// Sections the cleaner drops whole, and the categories.
	t.WriteString("\n== References ==\n{{Reflist}}\n\n== External links ==\n")
	fmt.Fprintf(t, "* [https://example.org/%d Official website]\n* {{Official website|https://example.org/%d}}\n\n", id, id)
	fmt.Fprintf(t, "{{DEFAULTSORT:%s}}\n[[Category:%s]]\n[[Category:%s %s]]\n", p.title, strings.Join(pw.safePhrase(2), " "), pw.safeWord(), pw.safeWord())

	w := pw.w
	w.WriteString("  <page>\n    <title>")
	writeEscaped(w, p.title)
	fmt.Fprintf(w, "</title>\n    <ns>0</ns>\n    <id>%d</id>\n    <revision>\n      <id>%d</id>\n", id, 1000000+id)
	fmt.Fprintf(w, "      <timestamp>2024-%02d-%02dT12:00:00Z</timestamp>\n      <model>wikitext</model>\n      <format>text/x-wiki</format>\n", 1+id%12, 1+id%28)
	fmt.Fprintf(w, "      <text bytes=\"%d\" xml:space=\"preserve\">", t.Len())
	writeEscaped(w, t.String())
	w.WriteString("</text>\n    </revision>\n  </page>\n")
	return p
}

// body writes a section's words as one or two paragraphs marked up as Wikipedia's are; the
// markup leaves exactly the words once cleaned. The cleaner drops a line with no letter or
// digit (the residue of removed markup), so a paragraph of symbols alone ("±") gets a word in
// place of its first: words is changed in place.
func (pw *pageWriter) body(words []string) {
	g, t := pw.g, &pw.text
	split := -1
	if len(words) > 40 {
		split = len(words)/3 + g.rng.IntN(len(words)/3)
	}
	for _, para := range [][]string{words[:max(split, 0)], words[max(split, 0):]} {
		if len(para) > 0 && !slices.ContainsFunc(para, hasWordChar) {
			para[0] = pw.safeWord()
		}
	}
	for k := 0; k < len(words); k++ {
		if k == split {
			t.WriteString("\n\n")
			if g.rng.IntN(4) == 0 {
				pw.table()
			}
		} else if k > 0 {
			t.WriteByte(' ')
		}
		w := words[k]
		r := g.rng.IntN(100)
		switch {
		case !markupSafe(w):
			if plainSafe(w) && k != 0 && k != split {
				t.WriteString(w)
			} else {
				t.WriteString("<nowiki>" + w + "</nowiki>")
			}
		case r < 6 && k+1 < len(words) && markupSafe(words[k+1]):
			// A piped link over two words, to another (synthetic) article.
			fmt.Fprintf(t, "[[%s|%s %s]]", strings.Join(pw.safePhrase(1+g.rng.IntN(3)), " "), w, words[k+1])
			k++
		case r < 10:
			t.WriteString("[[" + w + "]]")
		case r < 12:
			t.WriteString("'''" + w + "'''")
		case r < 14:
			t.WriteString("''" + w + "''")
		default:
			t.WriteString(w)
		}
		if g.rng.IntN(40) == 0 {
			pw.ref()
		}
	}
	if g.rng.IntN(3) == 0 {
		pw.ref()
	}
	t.WriteByte('\n')
	if g.rng.IntN(10) == 0 {
		t.WriteString("<!-- synthetic editor's note: " + pw.safeWord() + " -->\n")
	}
}

// ref writes a citation: a <ref> holding a template, or a named reuse of an earlier one.
func (pw *pageWriter) ref() {
	g, t := pw.g, &pw.text
	if pw.refs > 0 && g.rng.IntN(4) == 0 {
		fmt.Fprintf(t, `<ref name="r%d" />`, g.rng.IntN(pw.refs))
		return
	}
	pw.refs++
	fmt.Fprintf(t, `<ref name="r%d">{{cite web |url=https://example.org/ref/%d |title=%s |publisher=%s |access-date=2024-01-%02d}}</ref>`,
		pw.refs, pw.refs, strings.Join(pw.safePhrase(3), " "), pw.safeWord(), 1+g.rng.IntN(28))
}

// table writes a small wikitable, which the cleaner drops with its cells.
func (pw *pageWriter) table() {
	t := &pw.text
	t.WriteString("{| class=\"wikitable\"\n|+ " + pw.safeWord() + "\n|-\n! " + pw.safeWord() + " !! " + pw.safeWord() + "\n")
	for range 1 + pw.g.rng.IntN(3) {
		fmt.Fprintf(t, "|-\n| %s || %d\n", pw.safeWord(), pw.g.rng.IntN(10000))
	}
	t.WriteString("|}\n\n")
}

// heading draws a section heading of one to three words that the cleaner keeps (not
// "References" and the like).
func (pw *pageWriter) heading() []string {
	for {
		h := pw.safePhrase(1 + pw.g.rng.IntN(3))
		h[0] = upperFirst(h[0])
		if !document.DroppedSection(strings.Join(h, " ")) {
			return h
		}
	}
}

// safeWord draws a word that can stand in markup (a title, a link target, a heading) and
// weighs one word to the splitter (a heavier one would take the "Title > Heading |" prefix
// past what MaxWords leaves it).
func (pw *pageWriter) safeWord() string {
	w, _ := pw.g.wordWhere(func(w string) bool { return markupSafe(w) && corpus.WordWeight(w) == 1 })
	return w
}

// maxRedraws bounds the draws for a word that passes a check. A model none of whose words
// pass (one learned from Chinese text, where nearly every word weighs more than one) then
// gets a synthetic tail word, which passes every check, instead of drawing forever.
const maxRedraws = 1000

// wordWhere draws a word for which ok holds, and says whether it came from the tail.
func (g *generator) wordWhere(ok func(string) bool) (string, bool) {
	for range maxRedraws {
		if w, tail := g.word(); ok(w) {
			return w, tail
		}
	}
	return tailWord(g.tail.draw(g.rng)), true
}

func (pw *pageWriter) safePhrase(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = pw.safeWord()
	}
	return out
}

// markupSafe reports whether w is letters, digits and inner hyphens only: it reads the same
// inside a link, a heading, bold or a title.
func markupSafe(w string) bool {
	for i, r := range w {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && (r != '-' || i == 0 || i == len(w)-1) {
			return false
		}
	}
	return w != ""
}

// plainSafe reports whether w reads as itself in running text that is not at the start of a
// line: no bracket, tag, entity, pipe, quote run, signature or magic word.
func plainSafe(w string) bool {
	return !strings.ContainsAny(w, "[]{}<>&|~=") && !strings.Contains(w, "''") && !strings.Contains(w, "__") && !strings.Contains(w, "://")
}

// standsAlone reports whether the cleaner keeps w a word of its own: it joins punctuation that
// follows a space to the word before (" ." -> "."), as removed markup leaves such spaces, and
// splits words at a zero-width space. Real wikitext has no such words (the sample's come from
// tokenized text); they are redrawn. So are words the splitter weighs as more than one (Han
// or kana, corpus.WordWeight), which would take a section past MaxWords.
func standsAlone(w string) bool {
	return corpus.WordWeight(w) == 1 && !strings.ContainsRune(w, '\u200b') && !strings.ContainsAny(w[:1], ",.;)") && !strings.HasSuffix(w, "(") && !strings.Contains(w, ",,") && !strings.Contains(w, "()")
}

// hasWordChar reports whether w has a letter or a digit.
func hasWordChar(w string) bool {
	return strings.ContainsFunc(w, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) })
}

func upperFirst(w string) string {
	r, n := utf8.DecodeRuneInString(w)
	return string(unicode.ToUpper(r)) + w[n:]
}

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")

func writeEscaped(w *bufio.Writer, s string) {
	xmlEscaper.WriteString(w, s)
}
