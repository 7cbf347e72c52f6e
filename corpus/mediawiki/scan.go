package mediawiki

import (
	"bufio"
	"bytes"
	"fmt"
	"io"

	"github.com/kairos-rag/kairos/corpus/document"
)

// scanner cuts a dump's text into <page> chunks, reading <siteinfo> (header.go) before the
// first one. It never hands the whole dump to an XML decoder: one bad byte would end the
// stream. It tracks line numbers, so that every page can be located in the file.
type scanner struct {
	file      string
	in        *bufio.Reader // UTF-8 text after BOM/UTF-16 handling
	line      int           // 1-based line number of the next unread byte
	pages     int           // <page> starts seen
	startLine int           // line of the pending page start
	pending   bool
	header    []byte
	headerOK  bool // header parsed (first page seen or EOF)
	sawRoot   bool
	// sawEnd says "</mediawiki>" was read since the last page start: without it at the end of
	// the input, the dump was cut between two pages (a page start clears it, so an end tag
	// before a later page does not vouch for the rest).
	sawEnd  bool
	endLine int    // line of the last page's end, for the truncation error
	buf     []byte // the current chunk, reused from one page to the next
	maxPage int64  // Options.MaxPageBytes: a bigger <page> is a bad record, not buffered
	site    site   // filled by parseHeader, fixed from the first page on
}

// chunk is one <page>...</page> of a dump, or the reason it is malformed (err: unterminated,
// oversized) without its bytes.
type chunk struct {
	data  []byte // "<page>...</page>"; owned by the scanner until the next call
	index int    // 1-based page number in the dump
	line  int    // line of its start tag
	err   error
}

// pos locates the page in a *document.RecordError.
func (c chunk) pos() string { return fmt.Sprintf("page %d (line %d)", c.index, c.line) }

// nextChunk returns the next page chunk. err is fatal (I/O, truncated input) or io.EOF.
func (r *scanner) nextChunk() (chunk, error) {
	if !r.pending {
		found, err := r.seekPage()
		if err != nil {
			return chunk{}, err
		}
		if !found {
			if err := r.parseHeader(); err != nil {
				return chunk{}, err
			}
			if r.pages == 0 && !r.sawRoot {
				return chunk{}, fmt.Errorf("%s: no <mediawiki> element: not a MediaWiki XML dump", r.file)
			}
			if r.sawRoot && !r.sawEnd {
				// Cut between pages: every page read was whole, but the ones after the cut are
				// missing, and a clean EOF would index half a dump as a success. A stream of
				// pages without the root (one block of a multistream dump, extracted on its
				// own) has no end tag to miss.
				if r.pages == 0 {
					return chunk{}, fmt.Errorf("%s: truncated input: end of file at line %d before any page and without </mediawiki>", r.file, r.line)
				}
				return chunk{}, fmt.Errorf("%s: truncated input: end of file at line %d after page %d (which ended on line %d) without </mediawiki>",
					r.file, r.line, r.pages, r.endLine)
			}
			return chunk{}, io.EOF
		}
	}
	r.pending = false
	if err := r.parseHeader(); err != nil {
		return chunk{}, err
	}
	c := chunk{index: r.pages, line: r.startLine}
	r.buf = append(r.buf[:0], "<page>"...)
	oversized := false
	add := func(b []byte) {
		if oversized || int64(len(r.buf)+len(b)) > r.maxPage {
			oversized = true
			return
		}
		r.buf = append(r.buf, b...)
	}
	for {
		err := r.readThrough('<', add)
		if err == io.EOF {
			// A truncated dump, not a bad page: fatal even with --skip-bad, or half a dump
			// would be indexed and reported as a success.
			return chunk{}, fmt.Errorf("%s: truncated input: end of file inside page %d (line %d), %d bytes into it",
				r.file, c.index, c.line, len(r.buf))
		}
		if err != nil {
			return chunk{}, fmt.Errorf("%s: reading line %d: %w", r.file, r.line, err)
		}
		switch r.peekTag() {
		case tagPageEnd:
			r.discard(len("/page>"))
			r.endLine = r.line
			if oversized {
				c.err = document.RecordTooLargeError{Max: r.maxPage}
				return c, nil
			}
			r.buf = append(r.buf, "/page>"...)
			c.data = r.buf
			return c, nil
		case tagPageStart:
			// The page never closed; the new one starts here and is read on the next call.
			r.startPage()
			c.err = fmt.Errorf("unterminated <page>: a new <page> starts at line %d", r.startLine)
			return c, nil
		}
	}
}

type pageTag uint8

const (
	tagOther pageTag = iota
	tagPageStart
	tagPageEnd
)

// peekTag looks at the bytes after a '<' already consumed.
func (r *scanner) peekTag() pageTag {
	p, _ := r.in.Peek(6)
	switch {
	case bytes.HasPrefix(p, []byte("/page>")):
		return tagPageEnd
	case len(p) >= 5 && bytes.HasPrefix(p, []byte("page")) && (p[4] == '>' || p[4] == ' ' || p[4] == '\t' || p[4] == '\n' || p[4] == '\r'):
		return tagPageStart
	}
	return tagOther
}

// seekPage consumes input up to and including the next "<page" start tag, keeping what comes
// before the first page as the header.
func (r *scanner) seekPage() (bool, error) {
	for {
		err := r.readThrough('<', func(b []byte) {
			if !r.headerOK && len(r.header)+len(b) <= maxHeaderBytes {
				r.header = append(r.header, b...)
			}
		})
		if err == io.EOF {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("%s: reading line %d: %w", r.file, r.line, err)
		}
		if r.peekTag() == tagPageStart {
			r.startPage()
			return true, nil
		}
		if p, _ := r.in.Peek(len("/mediawiki>")); string(p) == "/mediawiki>" {
			r.sawEnd = true
		}
	}
}

// startPage consumes the rest of a "<page ...>" start tag (the '<' is already consumed).
func (r *scanner) startPage() {
	r.pages++
	r.startLine = r.line
	r.pending = true
	r.sawEnd = false
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
func (r *scanner) readThrough(delim byte, sink func([]byte)) error {
	for {
		b, err := r.in.ReadSlice(delim)
		r.line += bytes.Count(b, []byte{'\n'})
		sink(b)
		if err != bufio.ErrBufferFull {
			return err
		}
	}
}

func (r *scanner) discard(n int) {
	p, _ := r.in.Peek(n)
	r.line += bytes.Count(p, []byte{'\n'})
	_, _ = r.in.Discard(len(p))
}
