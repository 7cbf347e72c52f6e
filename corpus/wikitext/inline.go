package wikitext

import (
	"strings"
)

// Pass 2: templates, tables and links, found with bracket stacks.

// special (read-only) marks the bytes at which pass 2 may have something to do.
var special = [256]bool{'{': true, '}': true, '[': true, ']': true, '\'': true, '_': true}

func (c *Cleaner) inline(s string, depth int, b *strings.Builder) {
	tpl := matchRuns(s, '{', '}', nil)
	links := matchRuns(s, '[', ']', tpl)
	unclosedTo := 0 // an external link opened before this index is unclosed (extLink)
	i := 0
	for i < len(s) {
		j := i
		for j < len(s) && !special[s[j]] {
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
			if i+1 < len(s) && s[i+1] == '|' && atLineStart(s, i) {
				i = tableEnd(s, i, tpl)
				continue
			}
			i = skipUnmatched(s, i, '{', tpl, b)
		case '}':
			i = skipRun(s, i, '}', b)
		case '[':
			if end, ok := links[i]; ok {
				c.link(s[i+2:end-2], depth, b)
				i = end
				continue
			}
			if n := runLen(s, i, '['); n == 1 {
				i = c.extLink(s, i, depth, b, &unclosedTo)
				continue
			}
			i = skipUnmatched(s, i, '[', links, b)
		case ']':
			i = skipRun(s, i, ']', b)
		case '\'':
			n := runLen(s, i, '\'')
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
			i = magicWord(s, i, b)
		}
	}
}

// matchRuns pairs runs of open and close characters ("{{" with "}}", "[[" with "]]") with a
// stack, in one pass. It maps the index of each matched opener to the index after its closer.
// A run of three braces is one unit ("{{{param}}}"); other runs are pairs, the innermost pair
// at the end of an opening run. Regions already matched in skip (templates, when matching links)
// are jumped over: MediaWiki pairs templates before links.
func matchRuns(s string, open, close byte, skip map[int]int) map[int]int {
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
		n := runLen(s, i, c)
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

func runLen(s string, i int, c byte) int {
	n := 0
	for i+n < len(s) && s[i+n] == c {
		n++
	}
	return n
}

// skipUnmatched drops the unmatched openers at the start of a run and returns the index of the
// first matched opener inside the run ("{{{{x}}" holds the template "{{x}}"), or the run's end.
func skipUnmatched(s string, i int, c byte, pairs map[int]int, b *strings.Builder) int {
	n := runLen(s, i, c)
	for k := i + 1; k < i+n; k++ {
		if _, ok := pairs[k]; ok {
			return k
		}
	}
	return skipRun(s, i, c, b)
}

// skipRun drops a run of unmatched brackets (two or more); a single one is text.
func skipRun(s string, i int, c byte, b *strings.Builder) int {
	n := runLen(s, i, c)
	if n == 1 {
		b.WriteByte(c)
	}
	return i + n
}

// atLineStart reports whether only spaces, tabs and ':' indents precede s[i] on its line.
func atLineStart(s string, i int) bool {
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

// tableEnd returns the index after the "|}" line that closes the table opened at s[i], counting
// nested tables and jumping over templates; a template that stands for "|}" on a line of its
// own ({{end}}, {{table end}}) closes one too. An unclosed table ends at the first heading line
// after it, whose section MediaWiki shows outside the table, else at the end of the text.
func tableEnd(s string, i int, tpl map[int]int) int {
	depth, heading := 0, -1
	for k := i; k < len(s); {
		if s[k] == '{' {
			if end, ok := tpl[k]; ok {
				if closesTable(s[k:end]) && atLineStart(s, k) {
					depth--
					if depth == 0 {
						return end
					}
				}
				k = end
				continue
			}
		}
		if heading < 0 && s[k] == '=' && k > i && s[k-1] == '\n' && isHeadingLine(s[k:]) {
			heading = k
		}
		switch {
		case s[k] == '{' && k+1 < len(s) && s[k+1] == '|' && atLineStart(s, k):
			depth++
			k += 2
		case s[k] == '|' && k+1 < len(s) && s[k+1] == '}' && atLineStart(s, k):
			depth--
			k += 2
			if depth == 0 {
				return k
			}
		default:
			k++
		}
	}
	if heading >= 0 {
		return heading
	}
	return len(s)
}

// closesTable says whether the template call t ("{{...}}") is one that closes a table.
func closesTable(t string) bool {
	name := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(t, "{{"), "}}")), "_", " "))
	return name == "end" || name == "table end" || name == "end table"
}

// isHeadingLine says whether the line at the start of s is a section heading ("== x ==").
func isHeadingLine(s string) bool {
	line, _, _ := strings.Cut(s, "\n")
	line = strings.TrimRight(line, " \t\r")
	return len(line) >= 3 && line[0] == '=' && line[len(line)-1] == '='
}

// magicWord drops behaviour switches such as __TOC__ and __NOTOC__.
func magicWord(s string, i int, b *strings.Builder) int {
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
