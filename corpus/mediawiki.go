package corpus

import (
	"bufio"
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// MediaWiki pages-articles reading.
//
// The reader never hands the whole dump to an XML decoder: one bad byte would end the stream.
// It scans the bytes for <page>...</page> chunks, tracking line numbers, and decodes each chunk
// on its own, so a malformed page becomes a *RecordError and the next page is read normally.
// Memory is bounded by the largest page (and Options.MaxRecordBytes caps that).

const (
	// mwMaxHeaderBytes caps what is kept before the first <page> to find <siteinfo>.
	mwMaxHeaderBytes = 1 << 20
	// defaultWikiBase is used when the dump has no <siteinfo><base>.
	defaultWikiBase = "https://en.wikipedia.org/wiki/"
)

// MediaWikiReader streams main-namespace articles from a MediaWiki pages-articles XML dump.
type MediaWikiReader struct {
	file, source string
	raw          *countingReader
	in           *bufio.Reader // UTF-8 text after BOM/UTF-16 handling

	line      int // 1-based line number of the next unread byte
	pages     int // <page> starts seen
	startLine int // line of the pending page start
	pending   bool
	header    []byte
	headerOK  bool // header parsed (first page seen or EOF)
	sawRoot   bool
	base      string
	language  string         // from <siteinfo> (WikiLanguage); "" when it names none
	nsByName  map[string]int // lowercased namespace name -> key, from <siteinfo>
	cleaner   wikiCleaner
	chunk     []byte
	maxPage   int64 // Options.MaxRecordBytes: a bigger <page> is a bad record, not buffered
	stats     ReadStats
	err       error // sticky: I/O error or closed
}

var _ Reader = (*MediaWikiReader)(nil)

// NewMediaWikiReader reads an already-decompressed pages-articles XML stream, UTF-8 or UTF-16 (BOM).
// file names the input in errors; source fills Document.Source.
//
// Pages outside namespace 0, redirects and pages with no text left after cleaning are skipped
// and counted in Stats. Invalid UTF-8 (and characters XML forbids) are replaced with U+FFFD and
// the page counted in Stats().Repaired. BytesRead counts the bytes read from r. Close does not
// close r: the caller owns it.
func NewMediaWikiReader(r io.Reader, file, source string) *MediaWikiReader {
	raw := &countingReader{r: r}
	return &MediaWikiReader{
		file:    file,
		source:  source,
		raw:     raw,
		in:      bufio.NewReaderSize(mwDecodeBOM(raw), 1<<16),
		line:    1,
		base:    defaultWikiBase,
		maxPage: DefaultMaxRecordBytes,
		stats:   ReadStats{Skipped: map[string]int{}},
	}
}

// Stats counts what the reader has seen so far.
func (r *MediaWikiReader) Stats() ReadStats {
	s := r.stats
	s.Skipped = make(map[string]int, len(r.stats.Skipped))
	for k, v := range r.stats.Skipped {
		s.Skipped[k] = v
	}
	s.Languages = cloneCounts(r.stats.Languages)
	s.BytesRead = r.raw.n
	return s
}

// Close releases the reader; later calls to Next fail.
func (r *MediaWikiReader) Close() error {
	if r.err == nil {
		r.err = errors.New("mediawiki reader closed")
	}
	return nil
}

// Next returns the next main-namespace article, io.EOF at the end, or a *RecordError for a
// malformed page (call Next again to continue after it).
func (r *MediaWikiReader) Next(ctx context.Context) (Document, error) {
	for {
		if r.err != nil {
			return Document{}, r.err
		}
		if err := ctx.Err(); err != nil {
			return Document{}, err
		}
		chunk, index, line, perr, err := r.nextChunk()
		if err != nil {
			r.err = err
			return Document{}, err
		}
		pos := fmt.Sprintf("page %d (line %d)", index, line)
		if perr != nil {
			r.stats.Bad++
			return Document{}, &RecordError{File: r.file, Pos: pos, Err: perr}
		}
		doc, skip, perr := r.decodePage(chunk)
		switch {
		case perr != nil:
			r.stats.Bad++
			return Document{}, &RecordError{File: r.file, Pos: pos, Err: perr}
		case skip != "":
			r.stats.Skipped[skip]++
		default:
			r.stats.Documents++
			if r.language != "" {
				if r.stats.Languages == nil {
					r.stats.Languages = map[string]int{}
				}
				r.stats.Languages[r.language]++
			}
			return doc, nil
		}
	}
}

// ---------- chunk scanning ----------

// nextChunk returns the next <page>...</page> chunk with its 1-based index and start line.
// perr reports a malformed chunk (unterminated, oversized); err is fatal (I/O) or io.EOF.
func (r *MediaWikiReader) nextChunk() (chunk []byte, index, line int, perr, err error) {
	if !r.pending {
		found, err := r.seekPage()
		if err != nil {
			return nil, 0, 0, nil, err
		}
		if !found {
			r.parseHeader()
			if r.pages == 0 && !r.sawRoot {
				return nil, 0, 0, nil, fmt.Errorf("%s: no <mediawiki> element: not a MediaWiki XML dump", r.file)
			}
			return nil, 0, 0, nil, io.EOF
		}
	}
	r.pending = false
	r.parseHeader()
	index, line = r.pages, r.startLine
	r.chunk = append(r.chunk[:0], "<page>"...)
	oversized := false
	add := func(b []byte) {
		if oversized || int64(len(r.chunk)+len(b)) > r.maxPage {
			oversized = true
			return
		}
		r.chunk = append(r.chunk, b...)
	}
	for {
		err := r.readThrough('<', add)
		if err == io.EOF {
			// A truncated dump, not a bad page: fatal even with --skip-bad, or half a dump
			// would be indexed and reported as a success.
			return nil, index, line, nil, fmt.Errorf("%s: truncated input: end of file inside page %d (line %d), %d bytes into it",
				r.file, index, line, len(r.chunk))
		}
		if err != nil {
			return nil, 0, 0, nil, fmt.Errorf("%s: reading line %d: %w", r.file, r.line, err)
		}
		switch r.peekTag() {
		case mwTagPageEnd:
			r.discard(len("/page>"))
			if oversized {
				return nil, index, line, errRecordTooLarge{r.maxPage}, nil
			}
			return append(r.chunk, "/page>"...), index, line, nil, nil
		case mwTagPageStart:
			// The page never closed; the new one starts here and is read on the next call.
			r.startPage()
			return nil, index, line, fmt.Errorf("unterminated <page>: a new <page> starts at line %d", r.startLine), nil
		}
	}
}

type mwPageTag uint8

const (
	mwTagOther mwPageTag = iota
	mwTagPageStart
	mwTagPageEnd
)

// peekTag looks at the bytes after a '<' already consumed.
func (r *MediaWikiReader) peekTag() mwPageTag {
	p, _ := r.in.Peek(6)
	switch {
	case bytes.HasPrefix(p, []byte("/page>")):
		return mwTagPageEnd
	case len(p) >= 5 && bytes.HasPrefix(p, []byte("page")) && (p[4] == '>' || p[4] == ' ' || p[4] == '\t' || p[4] == '\n' || p[4] == '\r'):
		return mwTagPageStart
	}
	return mwTagOther
}

// seekPage consumes input up to and including the next "<page" start tag, keeping what comes
// before the first page as the header.
func (r *MediaWikiReader) seekPage() (bool, error) {
	for {
		err := r.readThrough('<', func(b []byte) {
			if !r.headerOK && len(r.header)+len(b) <= mwMaxHeaderBytes {
				r.header = append(r.header, b...)
			}
		})
		if err == io.EOF {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("%s: reading line %d: %w", r.file, r.line, err)
		}
		if r.peekTag() == mwTagPageStart {
			r.startPage()
			return true, nil
		}
	}
}

// startPage consumes the rest of a "<page ...>" start tag (the '<' is already consumed).
func (r *MediaWikiReader) startPage() {
	r.pages++
	r.startLine = r.line
	r.pending = true
	for {
		c, err := r.in.ReadByte()
		if err != nil || c == '>' {
			return
		}
		if c == '\n' {
			r.line++
		}
	}
}

// readThrough reads up to and including delim, counting lines, and hands what it reads to
// sink piece by piece (each piece is valid only during the call): a long run without delim,
// such as a page's text, is never buffered here, so the caller alone bounds memory.
// At EOF it returns io.EOF after handing over what was left.
func (r *MediaWikiReader) readThrough(delim byte, sink func([]byte)) error {
	for {
		b, err := r.in.ReadSlice(delim)
		r.line += bytes.Count(b, []byte{'\n'})
		sink(b)
		if err != bufio.ErrBufferFull {
			return err
		}
	}
}

func (r *MediaWikiReader) discard(n int) {
	p, _ := r.in.Peek(n)
	r.line += bytes.Count(p, []byte{'\n'})
	_, _ = r.in.Discard(len(p))
}

// ---------- header ----------

// parseHeader reads <siteinfo> once: the base URL and the namespace names. A missing or
// unreadable siteinfo leaves the defaults (English Wikipedia URLs, built-in namespace names).
func (r *MediaWikiReader) parseHeader() {
	if r.headerOK {
		return
	}
	r.headerOK = true
	h := r.header
	r.header = nil
	r.sawRoot = bytes.Contains(h, []byte("<mediawiki"))
	start := bytes.Index(h, []byte("<siteinfo"))
	end := bytes.Index(h, []byte("</siteinfo>"))
	if start < 0 || end < start {
		return
	}
	h, _ = mwRepairXMLText(h[start : end+len("</siteinfo>")])
	var si struct {
		DBName     string `xml:"dbname"`
		Base       string `xml:"base"`
		Namespaces []struct {
			Key  int    `xml:"key,attr"`
			Name string `xml:",chardata"`
		} `xml:"namespaces>namespace"`
	}
	if xml.Unmarshal(h, &si) != nil {
		return
	}
	r.language = WikiLanguage(si.DBName, si.Base)
	if k := strings.LastIndexByte(si.Base, '/'); k > len("https://") && strings.Contains(si.Base, "://") {
		r.base = si.Base[:k+1]
	}
	r.nsByName = map[string]int{}
	r.cleaner.fileNS = map[string]bool{}
	r.cleaner.categoryNS = map[string]bool{}
	for _, ns := range si.Namespaces {
		name := strings.ToLower(strings.TrimSpace(ns.Name))
		if name == "" {
			continue
		}
		r.nsByName[name] = ns.Key
		switch ns.Key {
		case 6, -2:
			r.cleaner.fileNS[name] = true
		case 14:
			r.cleaner.categoryNS[name] = true
		}
	}
}

// ---------- page decoding ----------

type mwXmlPage struct {
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

// decodePage turns one chunk into a document, or names the reason it is skipped.
func (r *MediaWikiReader) decodePage(chunk []byte) (Document, string, error) {
	chunk, repaired := mwRepairXMLText(chunk)
	if repaired {
		r.stats.Repaired++
	}
	var p mwXmlPage
	meta, fastText, fast := mwSplitText(chunk)
	if !fast {
		meta = chunk
	}
	if err := xml.Unmarshal(meta, &p); err != nil {
		return Document{}, "", fmt.Errorf("decoding page: %w", err)
	}
	if fast && len(p.Revisions) == 1 {
		p.Revisions[0].Text = fastText
	}
	title := strings.TrimSpace(p.Title)
	if title == "" {
		return Document{}, "", errors.New("page has no <title>")
	}
	ns, err := r.namespace(p.NS, title)
	if err != nil {
		return Document{}, "", fmt.Errorf("page %q: %w", title, err)
	}
	if ns != 0 {
		return Document{}, SkipNamespace, nil
	}
	id := strings.TrimSpace(p.ID)
	if id == "" {
		return Document{}, "", fmt.Errorf("page %q has no <id>", title)
	}
	var text, stamp string
	if n := len(p.Revisions); n > 0 { // history dumps: the last revision is the current one
		text, stamp = p.Revisions[n-1].Text, p.Revisions[n-1].Timestamp
	}
	if p.Redirect != nil || mwIsRedirectText(text) {
		return Document{}, SkipRedirect, nil
	}
	c := r.cleaner
	c.title = title
	sections := c.clean(text)
	if len(sections) == 0 {
		return Document{}, SkipEmpty, nil
	}
	// A malformed timestamp only loses the date; the article is still worth indexing.
	date, _ := time.Parse(time.RFC3339, strings.TrimSpace(stamp))
	return Document{
		ID:       id,
		Title:    title,
		URL:      r.base + mwEscapeWikiTitle(title),
		Date:     date,
		Source:   r.source,
		Sections: sections,
	}, "", nil
}

// mwSplitText cuts the one <text>...</text> element out of a page chunk. encoding/xml reads
// byte by byte, and the text is nearly all of a page: decoding only the rest with it and
// unescaping the text here in bulk doubles the reader's speed. ok is false when the chunk is
// not that simple (several revisions, CDATA, an unknown entity): the caller then decodes the
// whole chunk with encoding/xml, which also reports any error.
func mwSplitText(chunk []byte) (meta []byte, text string, ok bool) {
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
	text, ok = mwUnescapeXML(content)
	if !ok {
		return nil, "", false
	}
	meta = make([]byte, 0, len(chunk)-len(content))
	meta = append(append(meta, chunk[:body]...), chunk[body+end:]...)
	return meta, text, true
}

// mwUnescapeXML decodes XML character data: the five predefined entities, character
// references, and line ends normalised to "\n" as XML requires. ok is false on anything else.
func mwUnescapeXML(b []byte) (string, bool) {
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
			if err != nil || !mwXMLChar(r) {
				return "", false
			}
			out = utf8.AppendRune(out, r)
		}
		i += semi + 1
	}
	return string(out), true
}

// mwXMLChar reports whether XML 1.0 allows r in a document.
func mwXMLChar(r rune) bool {
	return r == '\t' || r == '\n' || r == '\r' || r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF
}

// namespace parses <ns>; dumps without it (schema < 0.5) are resolved by the title prefix.
func (r *MediaWikiReader) namespace(ns, title string) (int, error) {
	ns = strings.TrimSpace(ns)
	if ns != "" {
		n, err := strconv.Atoi(ns)
		if err != nil {
			return 0, fmt.Errorf("bad <ns> %q", ns)
		}
		return n, nil
	}
	if k := strings.IndexByte(title, ':'); k > 0 {
		if n, ok := r.nsByName[strings.ToLower(title[:k])]; ok {
			return n, nil
		}
	}
	return 0, nil
}

// mwIsRedirectText recognises "#REDIRECT [[Target]]" (any case, leading space allowed).
func mwIsRedirectText(text string) bool {
	text = strings.TrimLeft(text, " \t\r\n\ufeff")
	return len(text) >= 9 && strings.EqualFold(text[:9], "#redirect")
}

// mwEscapeWikiTitle builds the URL path of a title as MediaWiki does (wfUrlencode): spaces become
// underscores and everything outside [A-Za-z0-9-._~;:@$!*(),/] is percent-encoded.
func mwEscapeWikiTitle(title string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(title) * 2)
	for i := 0; i < len(title); i++ {
		c := title[i]
		switch {
		case c == ' ':
			b.WriteByte('_')
		case wkIsASCIIAlnum(c) || strings.IndexByte("-._~;:@$!*(),/", c) >= 0:
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}

// mwRepairXMLText replaces invalid UTF-8 and characters XML 1.0 forbids (C0 controls other than
// tab, LF and CR; U+FFFE and U+FFFF) with U+FFFD. encoding/xml rejects both, and one stray
// byte should not cost an article.
func mwRepairXMLText(b []byte) ([]byte, bool) {
	if mwXmlTextOK(b) {
		return b, false
	}
	out := make([]byte, 0, len(b)+16)
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		switch {
		case r == utf8.RuneError && size <= 1, r < 0x20 && r != '\t' && r != '\n' && r != '\r',
			r == 0xFFFE, r == 0xFFFF:
			out = utf8.AppendRune(out, utf8.RuneError)
		default:
			out = append(out, b[:size]...)
		}
		b = b[size:]
	}
	return out, true
}

func mwXmlTextOK(b []byte) bool {
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 || r == 0xFFFE || r == 0xFFFF {
			return false
		}
		i += size
	}
	return true
}

// ---------- input encoding ----------

// mwDecodeBOM strips a UTF-8 byte order mark and decodes UTF-16 (detected by its BOM, or by a
// first '<' with a zero byte beside it) to UTF-8.
func mwDecodeBOM(r io.Reader) io.Reader {
	br := bufio.NewReaderSize(r, 1<<16)
	p, _ := br.Peek(3)
	switch {
	case bytes.HasPrefix(p, []byte{0xEF, 0xBB, 0xBF}):
		_, _ = br.Discard(3)
		return br
	case bytes.HasPrefix(p, []byte{0xFF, 0xFE}):
		_, _ = br.Discard(2)
		return &mwUtf16Reader{r: br}
	case bytes.HasPrefix(p, []byte{0xFE, 0xFF}):
		_, _ = br.Discard(2)
		return &mwUtf16Reader{r: br, bigEndian: true}
	case bytes.HasPrefix(p, []byte{'<', 0}):
		return &mwUtf16Reader{r: br}
	case bytes.HasPrefix(p, []byte{0, '<'}):
		return &mwUtf16Reader{r: br, bigEndian: true}
	}
	return br
}

// mwUtf16Reader decodes UTF-16 to UTF-8. Lone surrogates and a dangling final byte become an
// invalid byte (0xFF), which the page repair then replaces and counts.
type mwUtf16Reader struct {
	r         *bufio.Reader
	bigEndian bool
	out       []byte // decoded, not yet returned
	scratch   []byte // backing array of out, reused once out is drained
	high      rune   // pending high surrogate, 0 if none
	err       error
}

func (u *mwUtf16Reader) Read(p []byte) (int, error) {
	for len(u.out) == 0 {
		if u.err != nil {
			return 0, u.err
		}
		u.fill()
	}
	n := copy(p, u.out)
	u.out = u.out[n:]
	return n, nil
}

func (u *mwUtf16Reader) fill() {
	if u.scratch == nil {
		u.scratch = make([]byte, 0, 4096)
	}
	buf := u.scratch[:0]
	for len(buf) < cap(buf)-8 {
		var pair [2]byte
		n, err := io.ReadFull(u.r, pair[:])
		if err != nil {
			if u.high != 0 {
				buf = append(buf, 0xFF)
				u.high = 0
			}
			if n == 1 {
				buf = append(buf, 0xFF)
			}
			if err == io.ErrUnexpectedEOF {
				err = io.EOF
			}
			u.err = err
			break
		}
		v := rune(pair[0]) | rune(pair[1])<<8
		if u.bigEndian {
			v = rune(pair[1]) | rune(pair[0])<<8
		}
		switch {
		case utf16.IsSurrogate(v) && v < 0xDC00: // high surrogate
			if u.high != 0 {
				buf = append(buf, 0xFF)
			}
			u.high = v
		case utf16.IsSurrogate(v): // low surrogate
			if u.high == 0 {
				buf = append(buf, 0xFF)
				continue
			}
			buf = utf8.AppendRune(buf, utf16.DecodeRune(u.high, v))
			u.high = 0
		default:
			if u.high != 0 {
				buf = append(buf, 0xFF)
				u.high = 0
			}
			buf = utf8.AppendRune(buf, v)
		}
	}
	u.out = buf
}
