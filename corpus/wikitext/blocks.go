package wikitext

import (
	"html"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kairos-rag/kairos/corpus/document"
)

// Pass 3: lines, sections, paragraphs.

type lineKind uint8

const (
	lineNone lineKind = iota
	linePara
	lineList
)

// sectionWriter accumulates the text of the current section.
type sectionWriter struct {
	out []document.Section
	document.SectionPath
	text     strings.Builder
	last     lineKind
	pendingP bool // a blank line was seen since the last text line
}

func splitBlocks(s string) []document.Section {
	var w sectionWriter
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

func (w *sectionWriter) line(line string) {
	line = strings.TrimRight(line, " \t\r")
	if level, name, ok := parseHeading(line); ok {
		w.heading(level, name)
		return
	}
	if w.Dropping() {
		return
	}
	kind := linePara
	trimmed := strings.TrimLeft(line, " \t")
	if len(trimmed) > 0 {
		switch trimmed[0] {
		case '*', '#', ':', ';':
			kind = lineList
			trimmed = strings.TrimLeft(trimmed, "*#:; \t")
		case '-':
			if strings.HasPrefix(trimmed, "----") {
				trimmed = strings.TrimLeft(trimmed, "-")
			}
		}
	}
	text := normalizeLine(trimmed)
	if !hasWordChar(text) {
		// A blank line, or a line that held only removed markup, ends the paragraph.
		w.pendingP = w.last != lineNone
		return
	}
	switch {
	case w.last == lineNone:
	case w.last == kind && !w.pendingP:
		if kind == lineList {
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

// parseHeading recognises "== Name ==" (levels 1..6). The name is cleaned text.
func parseHeading(line string) (int, string, bool) {
	if len(line) < 3 || line[0] != '=' || line[len(line)-1] != '=' {
		return 0, "", false
	}
	open, close := runLen(line, 0, '='), 0
	for close < len(line) && line[len(line)-1-close] == '=' {
		close++
	}
	level := min(open, close, 6)
	if 2*level >= len(line) {
		return 0, "", false
	}
	name := normalizeLine(strings.TrimSpace(line[level : len(line)-level]))
	if !hasWordChar(name) {
		return 0, "", false
	}
	return level, name, true
}

func (w *sectionWriter) heading(level int, name string) {
	w.flush()
	w.Enter(level, name)
}

func (w *sectionWriter) flush() {
	if w.text.Len() > 0 {
		w.out = append(w.out, document.Section{Name: w.Name, Text: w.text.String()})
	}
	w.text.Reset()
	w.last, w.pendingP = lineNone, false
}

// normalizeLine decodes entities, collapses whitespace and tidies the punctuation that removed
// markup leaves behind ("word ," and empty parentheses).
func normalizeLine(s string) string {
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
	if needsTidy(out) {
		out = tidyPunct(out)
	}
	return out
}

// needsTidy is a quick test for the patterns tidyOnce repairs; most lines have none.
func needsTidy(s string) bool {
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

func tidyPunct(s string) string {
	for range 3 { // fixes can uncover each other: "( ( ) )"
		t := tidyOnce(s)
		if t == s {
			break
		}
		s = t
	}
	return strings.TrimSpace(strings.ReplaceAll(s, "  ", " "))
}

// tidyOnce makes one left-to-right pass of the repairs: "()" and "( )" go, "(; ", "(, " and
// "( " become "(", " ,", " .", " ;" and " )" lose their space, ",," becomes ",". Two of them
// look at what is around, because text that is no residue of markup has the same shapes:
// parentheses right after a word are a call ("main()", "f( )"), and a '.' that begins a word
// is part of it (".NET", ".22 calibre", "the .com boom"), as one that begins an ellipsis is the
// source's spacing ("our American friend ... has"), so their space stays.
func tidyOnce(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		rest := s[i:]
		switch {
		case strings.HasPrefix(rest, "()") && !endsWithWord(b):
			i += 2
		case strings.HasPrefix(rest, "( )") && !endsWithWord(b):
			i += 3
		case strings.HasPrefix(rest, "(; "), strings.HasPrefix(rest, "(, "):
			b = append(b, '(')
			i += 3
		case strings.HasPrefix(rest, "( "):
			b = append(b, '(')
			i += 2
		case strings.HasPrefix(rest, " ."):
			if startsWithWord(rest[2:]) || strings.HasPrefix(rest[2:], ".") {
				b = append(b, " ."...)
			} else {
				b = append(b, '.')
			}
			i += 2
		case strings.HasPrefix(rest, " ,"), strings.HasPrefix(rest, " ;"), strings.HasPrefix(rest, " )"):
			b = append(b, rest[1])
			i += 2
		case strings.HasPrefix(rest, ",,"):
			b = append(b, ',')
			i += 2
		default:
			b = append(b, s[i])
			i++
		}
	}
	return string(b)
}

// endsWithWord reports whether b ends with an ASCII letter, digit or '_': what a call's name
// ends with ("main()"). Not any letter: scripts written without spaces ("北京({{IPA|x}})是")
// put markup's residue right after a word.
func endsWithWord(b []byte) bool {
	return len(b) > 0 && (b[len(b)-1] == '_' || isASCIIAlnum(b[len(b)-1]))
}

// startsWithWord reports whether s begins with a letter or a digit.
func startsWithWord(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

func hasWordChar(s string) bool {
	for _, r := range s {
		if r < utf8.RuneSelf {
			if isASCIIAlnum(byte(r)) {
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
