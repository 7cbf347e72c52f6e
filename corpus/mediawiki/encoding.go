package mediawiki

// Input encodings: invalid text repaired page by page, UTF-16 decoded to UTF-8.

import (
	"bufio"
	"bytes"
	"io"
	"unicode/utf16"
	"unicode/utf8"
)

// repairXMLText replaces invalid UTF-8 and characters XML 1.0 forbids (C0 controls other than
// tab, LF and CR; U+FFFE and U+FFFF) with U+FFFD. encoding/xml rejects both, and one stray
// byte should not cost an article.
func repairXMLText(b []byte) ([]byte, bool) {
	if xmlTextOK(b) {
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

func xmlTextOK(b []byte) bool {
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

// decodeBOM strips a UTF-8 byte order mark and decodes UTF-16 (detected by its BOM, or by a
// first '<' with a zero byte beside it) to UTF-8.
func decodeBOM(r io.Reader) io.Reader {
	br := bufio.NewReaderSize(r, 1<<16)
	p, _ := br.Peek(3)
	switch {
	case bytes.HasPrefix(p, []byte{0xEF, 0xBB, 0xBF}):
		_, _ = br.Discard(3)
		return br
	case bytes.HasPrefix(p, []byte{0xFF, 0xFE}):
		_, _ = br.Discard(2)
		return &utf16Reader{r: br}
	case bytes.HasPrefix(p, []byte{0xFE, 0xFF}):
		_, _ = br.Discard(2)
		return &utf16Reader{r: br, bigEndian: true}
	case bytes.HasPrefix(p, []byte{'<', 0}):
		return &utf16Reader{r: br}
	case bytes.HasPrefix(p, []byte{0, '<'}):
		return &utf16Reader{r: br, bigEndian: true}
	}
	return br
}

// utf16Reader decodes UTF-16 to UTF-8. Lone surrogates and a dangling final byte become an
// invalid byte (0xFF), which the page repair then replaces and counts.
type utf16Reader struct {
	r         *bufio.Reader
	bigEndian bool
	out       []byte // decoded, not yet returned
	scratch   []byte // backing array of out, reused once out is drained
	high      rune   // pending high surrogate, 0 if none
	err       error
}

func (u *utf16Reader) Read(p []byte) (int, error) {
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

func (u *utf16Reader) fill() {
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
