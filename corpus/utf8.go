package corpus

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// repairUTF8 returns b with every invalid UTF-8 sequence replaced by U+FFFD, and whether it
// had to change anything. Valid input is returned as is, without copying.
func repairUTF8(b []byte) ([]byte, bool) {
	if utf8.Valid(b) {
		return b, false
	}
	return bytes.ToValidUTF8(b, []byte("\uFFFD")), true
}

// lineReader yields the lines of a stream one by one, however long they are: a multi-MB
// NDJSON record is one line. bufio.Scanner is not used because it fails on lines longer than
// its buffer.
type lineReader struct {
	br   *bufio.Reader
	line int   // number of the line last returned, 1-based
	max  int64 // longest line kept; 0: no cap. A longer one is read past, not buffered
	err  error
	// unterminated says the line last returned ended the input without a line end: a file
	// cut short ends so (and so may a whole file without a final newline).
	unterminated bool
}

// next returns the next line without its "\n" or "\r\n", or io.EOF after the last one. The
// returned slice is only valid until the next call.
func (l *lineReader) next() ([]byte, error) {
	if l.err != nil {
		return nil, l.err
	}
	b, err := l.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		// A long line: copy what the buffer holds and keep reading.
		long := append([]byte(nil), b...)
		n := int64(len(b))
		for errors.Is(err, bufio.ErrBufferFull) {
			b, err = l.br.ReadSlice('\n')
			if n += int64(len(b)); l.max > 0 && n > l.max+2 { // +2: the line end
				long = nil
			} else {
				long = append(long, b...)
			}
		}
		if long == nil && (err == nil || err == io.EOF) {
			l.line++
			if err == io.EOF {
				l.err = io.EOF
			}
			return nil, errRecordTooLarge{Max: l.max}
		}
		b = long
	}
	if l.max > 0 && int64(len(b)) > l.max+2 && (err == nil || err == io.EOF) {
		l.line++
		if err == io.EOF {
			l.err = io.EOF
		}
		return nil, errRecordTooLarge{Max: l.max}
	}
	if err != nil {
		if err != io.EOF {
			// A compressed input cut short ends inside a line: say which, and that it is cut.
			what := "reading"
			if errors.Is(err, io.ErrUnexpectedEOF) {
				what = "truncated input"
			}
			l.err = fmt.Errorf("line %d: %s: %w", l.line+1, what, err)
			return nil, l.err
		}
		l.err = io.EOF
		if len(b) == 0 {
			return nil, io.EOF
		}
		l.unterminated = true
	}
	l.line++
	b = bytes.TrimSuffix(b, []byte("\n"))
	b = bytes.TrimSuffix(b, []byte("\r"))
	if l.line == 1 {
		b = bytes.TrimPrefix(b, []byte("\uFEFF"))
	}
	return b, nil
}

// dateLayouts are the date forms accepted in JSONL and FAQ inputs, most specific first.
var dateLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05", // ISO without zone: taken as UTC
	"2006-01-02 15:04:05",
	"2006-01-02",
	"2006/01/02", // the deepset COVID FAQ's last_update
}

// parseDate parses s in one of dateLayouts. An empty s is the zero time.
func parseDate(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range dateLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("date %q is neither RFC 3339 nor YYYY-MM-DD", s)
}

// paragraphs normalises plain text into paragraphs separated by "\n\n": lines are trimmed,
// and blank lines are dropped. With lineBreaks, every single newline also ends a paragraph
// (WikiExtractor writes one paragraph per line).
func paragraphs(s string, lineBreaks bool) string {
	if normalParagraphs(s) {
		// Most text already is: splitting and joining it was two fifths of converting a
		// JSONL record.
		return s
	}
	return joinParagraphs(s, lineBreaks)
}

// joinParagraphs is paragraphs without its shortcut: each line's space collapsed, the lines
// of a paragraph joined by one space, paragraphs by a blank line.
func joinParagraphs(s string, lineBreaks bool) string {
	var out []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.Join(cur, " "))
			cur = cur[:0]
		}
	}
	for line := range strings.SplitSeq(s, "\n") {
		line = collapseSpace(line)
		if line == "" {
			flush()
			continue
		}
		cur = append(cur, line)
		if lineBreaks {
			flush()
		}
	}
	flush()
	return strings.Join(out, "\n\n")
}

// normalParagraphs reports whether paragraphs returns s as it is: lines whose white space is
// collapsed (see collapsed), one blank line between each two, none at either end.
func normalParagraphs(s string) bool {
	i := 0
	for line := range strings.SplitSeq(s, "\n") {
		if (line == "") == (i%2 == 0) || !collapsed(line) {
			return false
		}
		i++
	}
	return i%2 == 1
}

// collapseSpace is strings.Join(strings.Fields(s), " "): s trimmed, each run of white space
// in it one space; s itself, not a copy, when it already is.
func collapseSpace(s string) string {
	if collapsed(s) {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// collapsed reports whether collapseSpace(s) == s: no white space (unicode.IsSpace, as
// strings.Fields) but single ASCII spaces between other characters.
func collapsed(s string) bool {
	space := true // a space at the start is one too many, as one after another
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			i++
			switch c {
			case ' ':
				if space {
					return false
				}
				space = true
			case '\t', '\n', '\v', '\f', '\r':
				return false
			default:
				space = false
			}
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		if unicode.IsSpace(r) {
			return false
		}
		space = false
	}
	return !space || s == ""
}
