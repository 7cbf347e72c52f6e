package mediawiki

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kairos-rag/kairos/corpus/document"
	"github.com/kairos-rag/kairos/corpus/wikitext"
)

type xmlPage struct {
	Title    string `xml:"title"`
	NS       string `xml:"ns"`
	ID       string `xml:"id"`
	Redirect *struct {
		Title string `xml:"title,attr"`
	} `xml:"redirect"`
	Revisions []struct {
		Timestamp string `xml:"timestamp"`
		Text      string `xml:"text"`
	} `xml:"revision"`
}

// site is what a dump's <siteinfo> says about its wiki, with the reader's source name. It is
// fixed before the first page is decoded and only read afterwards, so pages can be decoded on
// any number of goroutines at once.
type site struct {
	source   string           // fills Document.Source
	base     string           // URL prefix of article titles
	language string           // from <siteinfo> (Language); "" when it names none
	nsByName map[string]int   // lowercased namespace name -> key, from <siteinfo>
	cleaner  wikitext.Cleaner // with the wiki's local File and Category namespace names
}

// decodedPage is the outcome of decoding one <page> chunk: a document, the reason it is
// skipped, or a record error. repaired says invalid text was replaced with U+FFFD.
type decodedPage struct {
	doc      document.Document
	skip     string
	repaired bool
	err      error
}

// decode turns one chunk, which starts on line line of its file, into a document, or names
// the reason it is skipped.
func (s *site) decode(chunk []byte, line int) decodedPage {
	chunk, repaired := repairXMLText(chunk)
	doc, skip, err := s.decodePage(chunk, line)
	return decodedPage{doc: doc, skip: skip, repaired: repaired, err: err}
}

// decodePage decodes a chunk whose text is valid XML text (see repairXMLText).
func (s *site) decodePage(chunk []byte, line int) (document.Document, string, error) {
	var p xmlPage
	meta, fastText, fast := splitText(chunk)
	if !fast {
		meta = chunk
	}
	if err := xml.Unmarshal(meta, &p); err != nil {
		var se *xml.SyntaxError
		if errors.As(err, &se) && se.Line > 0 {
			// The file's line: meta lacks the text's lines (an error after them is that many
			// lines further into the page), and the page starts on line.
			if open := bytes.Index(meta, []byte("<text")); fast && open >= 0 && se.Line > 1+bytes.Count(meta[:open], []byte("\n")) {
				se.Line += bytes.Count(chunk, []byte("\n")) - bytes.Count(meta, []byte("\n"))
			}
			se.Line += max(line, 1) - 1
		}
		return document.Document{}, "", fmt.Errorf("decoding page: %w", err)
	}
	if fast && len(p.Revisions) == 1 {
		p.Revisions[0].Text = fastText
	}
	title := strings.TrimSpace(p.Title)
	if title == "" {
		return document.Document{}, "", errors.New("page has no <title>")
	}
	ns, err := s.namespace(p.NS, title)
	if err != nil {
		return document.Document{}, "", fmt.Errorf("page %q: %w", title, err)
	}
	if ns != 0 {
		return document.Document{}, document.SkipNamespace, nil
	}
	id := strings.TrimSpace(p.ID)
	if id == "" {
		return document.Document{}, "", fmt.Errorf("page %q has no <id>", title)
	}
	var text, stamp string
	if n := len(p.Revisions); n > 0 { // history dumps: the last revision is the current one
		text, stamp = p.Revisions[n-1].Text, p.Revisions[n-1].Timestamp
	}
	if p.Redirect != nil || isRedirectText(text) {
		return document.Document{}, document.SkipRedirect, nil
	}
	// A page without a <timestamp> is undated; a malformed one is a bad page, not silently
	// undated: a date filter would drop the article without a word about why.
	var date time.Time
	if stamp = strings.TrimSpace(stamp); stamp != "" {
		if date, err = time.Parse(time.RFC3339, stamp); err != nil {
			return document.Document{}, "", fmt.Errorf("page %q: bad <timestamp> %q: want RFC 3339, e.g. 2006-01-02T15:04:05Z", title, stamp)
		}
	}
	c := s.cleaner
	c.Title = title
	sections := c.Clean(text)
	if len(sections) == 0 {
		return document.Document{}, document.SkipEmpty, nil
	}
	return document.Document{
		ID:       id,
		Title:    title,
		URL:      s.base + escapeTitle(title),
		Date:     date,
		Source:   s.source,
		Sections: sections,
	}, "", nil
}

// splitText cuts the one <text>...</text> element out of a page chunk. encoding/xml reads
// byte by byte, and the text is nearly all of a page: decoding only the rest with it and
// unescaping the text here in bulk doubles the reader's speed. ok is false when the chunk is
// not that simple (several revisions, CDATA, an unknown entity): the caller then decodes the
// whole chunk with encoding/xml, which also reports any error.
func splitText(chunk []byte) (meta []byte, text string, ok bool) {
	start := bytes.Index(chunk, []byte("<text"))
	if start < 0 || start+5 >= len(chunk) || bytes.Contains(chunk[start+5:], []byte("<text")) {
		return nil, "", false
	}
	if c := chunk[start+5]; c != '>' && c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '/' {
		return nil, "", false
	}
	gt := bytes.IndexByte(chunk[start:], '>')
	if gt < 0 || chunk[start+gt-1] == '/' {
		return nil, "", false // self-closing or broken: rare, let encoding/xml handle it
	}
	body := start + gt + 1
	end := bytes.Index(chunk[body:], []byte("</text>"))
	if end < 0 {
		return nil, "", false
	}
	content := chunk[body : body+end]
	if bytes.IndexByte(content, '<') >= 0 {
		return nil, "", false
	}
	text, ok = unescapeXML(content)
	if !ok {
		return nil, "", false
	}
	meta = make([]byte, 0, len(chunk)-len(content))
	meta = append(append(meta, chunk[:body]...), chunk[body+end:]...)
	return meta, text, true
}

// unescapeXML decodes XML character data: the five predefined entities, character
// references, and line ends normalised to "\n" as XML requires. ok is false on anything else.
func unescapeXML(b []byte) (string, bool) {
	if bytes.IndexByte(b, '&') < 0 && bytes.IndexByte(b, '\r') < 0 {
		return string(b), true
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		c := b[i]
		switch c {
		case '\r':
			out = append(out, '\n')
			i++
			if i < len(b) && b[i] == '\n' {
				i++
			}
			continue
		case '&':
		default:
			out = append(out, c)
			i++
			continue
		}
		semi := bytes.IndexByte(b[i:min(len(b), i+12)], ';')
		if semi < 0 {
			return "", false
		}
		ent := string(b[i+1 : i+semi])
		switch ent {
		case "lt":
			out = append(out, '<')
		case "gt":
			out = append(out, '>')
		case "amp":
			out = append(out, '&')
		case "quot":
			out = append(out, '"')
		case "apos":
			out = append(out, '\'')
		default:
			if len(ent) < 2 || ent[0] != '#' {
				return "", false
			}
			var n uint64
			var err error
			if ent[1] == 'x' {
				n, err = strconv.ParseUint(ent[2:], 16, 32)
			} else {
				n, err = strconv.ParseUint(ent[1:], 10, 32)
			}
			r := rune(n)
			if err != nil || !isXMLChar(r) {
				return "", false
			}
			out = utf8.AppendRune(out, r)
		}
		i += semi + 1
	}
	return string(out), true
}

// isXMLChar reports whether XML 1.0 allows r in a document.
func isXMLChar(r rune) bool {
	return r == '\t' || r == '\n' || r == '\r' || r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF
}

// namespace parses <ns>; dumps without it (schema < 0.5) are resolved by the title prefix.
func (s *site) namespace(ns, title string) (int, error) {
	ns = strings.TrimSpace(ns)
	if ns != "" {
		n, err := strconv.Atoi(ns)
		if err != nil {
			return 0, fmt.Errorf("bad <ns> %q", ns)
		}
		return n, nil
	}
	if k := strings.IndexByte(title, ':'); k > 0 {
		if n, ok := s.nsByName[strings.ToLower(title[:k])]; ok {
			return n, nil
		}
	}
	return 0, nil
}

// isRedirectText recognises "#REDIRECT [[Target]]" (any case, leading space allowed).
func isRedirectText(text string) bool {
	text = strings.TrimLeft(text, " \t\r\n\ufeff")
	return len(text) >= 9 && strings.EqualFold(text[:9], "#redirect")
}

// escapeTitle builds the URL path of a title as MediaWiki does (wfUrlencode): spaces become
// underscores and everything outside [A-Za-z0-9-._~;:@$!*(),/] is percent-encoded.
func escapeTitle(title string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(title) * 2)
	for i := 0; i < len(title); i++ {
		c := title[i]
		switch {
		case c == ' ':
			b.WriteByte('_')
		case isASCIIAlnum(c) || strings.IndexByte("-._~;:@$!*(),/", c) >= 0:
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}

func isASCIIAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
