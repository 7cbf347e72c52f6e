package corpus

import (
	"encoding/json"
	"unicode/utf8"
)

// decodeJSONLRecord decodes a JSON lines record into r as json.Unmarshal would, for the
// records most collections hold: an object whose keys are plain ASCII and whose values are
// strings, numbers, true, false or null. It reports false, leaving r in any state, for
// everything else: nested values, escaped or non-ASCII keys, keys equal to a field's but for
// case (json.Unmarshal matches them), surrogate escapes, invalid UTF-8 or any syntax error.
// The caller then runs json.Unmarshal on a fresh record, which decodes or rejects it. So the
// shortcut never decides what a record means: it takes the common case without reflection
// (reading the records fell from 14% to 8% of the CPU of building a BM25 index of a million
// JSON lines passages).
func decodeJSONLRecord(data []byte, r *jsonlRecord) bool {
	d := jsonScan{b: data}
	if !d.byte('{') {
		return false
	}
	if d.byte('}') {
		return d.end()
	}
	for {
		key, ok := d.key()
		if !ok || !d.byte(':') {
			return false
		}
		d.space()
		if d.i >= len(d.b) {
			return false
		}
		switch key {
		case "id", "_id", "docid", "doc_id", "pid":
			start := d.i
			if !d.scalar() {
				return false
			}
			raw := json.RawMessage(append([]byte(nil), d.b[start:d.i]...))
			switch key {
			case "id":
				r.ID = raw
			case "_id":
				r.UID = raw
			case "docid":
				r.DocID = raw
			case "doc_id":
				r.DocU = raw
			default:
				r.PID = raw
			}
		case "title", "text":
			p := &r.Title
			if key == "text" {
				p = &r.Text
			}
			if d.literal("null") {
				*p = nil
				break
			}
			s, ok := d.str()
			if !ok {
				return false
			}
			*p = &s
		case "url", "date", "block_type":
			if d.literal("null") {
				break // json.Unmarshal leaves a string as it was
			}
			s, ok := d.str()
			if !ok {
				return false
			}
			switch key {
			case "url":
				r.URL = s
			case "date":
				r.Date = s
			default:
				r.BlockType = s
			}
		default:
			if foldsToField(key) || !d.scalar() {
				return false
			}
		}
		d.space()
		if d.byte('}') {
			return d.end()
		}
		if !d.byte(',') {
			return false
		}
	}
}

// foldsToField reports whether the ASCII key equals one of jsonlRecord's keys but for case:
// json.Unmarshal fills the field from it.
func foldsToField(key string) bool {
	var lower [len("block_type")]byte
	if len(key) > len(lower) {
		return false
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	switch string(lower[:len(key)]) {
	case "id", "_id", "docid", "doc_id", "pid", "title", "text", "url", "date", "block_type":
		return true
	}
	return false
}

// jsonScan reads JSON from b at i. Every method reports false on anything it does not take,
// and the caller gives up.
type jsonScan struct {
	b []byte
	i int
}

// space skips JSON white space.
func (d *jsonScan) space() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// byte skips white space and then c, if c is next.
func (d *jsonScan) byte(c byte) bool {
	d.space()
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// end reports whether nothing but white space is left.
func (d *jsonScan) end() bool {
	d.space()
	return d.i == len(d.b)
}

// literal takes s (true, false or null) if it is next.
func (d *jsonScan) literal(s string) bool {
	if len(d.b)-d.i >= len(s) && string(d.b[d.i:d.i+len(s)]) == s {
		d.i += len(s)
		return true
	}
	return false
}

// key takes an object key of printable ASCII without escapes.
func (d *jsonScan) key() (string, bool) {
	if !d.byte('"') {
		return "", false
	}
	start := d.i
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			return string(d.b[start : d.i-1]), true
		case c < 0x20 || c >= utf8.RuneSelf || c == '\\':
			return "", false
		}
		d.i++
	}
	return "", false
}

// scalar takes a string, a number, true, false or null.
func (d *jsonScan) scalar() bool {
	switch c := d.b[d.i]; {
	case c == '"':
		_, ok := d.str()
		return ok
	case c == '-' || '0' <= c && c <= '9':
		return d.number()
	}
	return d.literal("true") || d.literal("false") || d.literal("null")
}

// number takes a number of JSON's grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (d *jsonScan) number() bool {
	b, i := d.b, d.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i)
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		if j := digits(b, i+1); j > i+1 {
			i = j
		} else {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return false
		}
		i = j
	}
	d.i = i
	return true
}

// digits returns the end of the run of ASCII digits at b[i].
func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

// str takes a string. Its escapes are decoded but for \u escapes of surrogates (json.Unmarshal
// pairs them or writes U+FFFD); a string with bytes beyond ASCII must be valid UTF-8
// (json.Unmarshal writes U+FFFD for each invalid byte).
func (d *jsonScan) str() (string, bool) {
	if d.i >= len(d.b) || d.b[d.i] != '"' {
		return "", false
	}
	d.i++
	start, high := d.i, false
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			s := d.b[start:d.i]
			d.i++
			if high && !utf8.Valid(s) {
				return "", false
			}
			return string(s), true
		case c == '\\':
			return d.escaped(start, high)
		case c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			high = true
		}
		d.i++
	}
	return "", false
}

// escaped finishes a string from start whose first escape is at d.i.
func (d *jsonScan) escaped(start int, high bool) (string, bool) {
	buf := append(make([]byte, 0, len(d.b)-start), d.b[start:d.i]...)
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			if high && !utf8.Valid(buf) {
				return "", false
			}
			return string(buf), true
		case c < 0x20:
			return "", false
		case c != '\\':
			if c >= utf8.RuneSelf {
				high = true
			}
			buf = append(buf, c)
			d.i++
			continue
		}
		if d.i+1 >= len(d.b) {
			return "", false
		}
		e := d.b[d.i+1]
		d.i += 2
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			if d.i+4 > len(d.b) {
				return "", false
			}
			r := rune(0)
			for _, h := range d.b[d.i : d.i+4] {
				switch {
				case '0' <= h && h <= '9':
					h -= '0'
				case 'a' <= h && h <= 'f':
					h -= 'a' - 10
				case 'A' <= h && h <= 'F':
					h -= 'A' - 10
				default:
					return "", false
				}
				r = r<<4 | rune(h)
			}
			if 0xD800 <= r && r < 0xE000 {
				return "", false
			}
			d.i += 4
			buf = utf8.AppendRune(buf, r)
		default:
			return "", false
		}
	}
	return "", false
}
