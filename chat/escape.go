package chat

import "strings"

// Terminal escape sequences in LLM output are removed whole: dropping only the ESC byte, as a
// control character, would leave their visible tail ("[31m") in the reply.

const (
	esc = "\x1b"
	csi = "\u009b" // the one-character (C1) form of ESC [
)

// escapeLen returns the length of the escape sequence at the start of s, which starts with ESC
// or C1 CSI, and whether all of it is within s. It follows ECMA-48: a CSI sequence is
// parameter bytes (0x30-0x3F), intermediate bytes (0x20-0x2F) and one final byte (0x40-0x7E);
// a command string (OSC, DCS, SOS, PM, APC) runs to BEL or ST (ESC \); other escapes are
// intermediates and one final byte. A sequence broken by an unexpected byte ends before it.
// The answer for a prefix of s never contradicts the answer for s, which is what lets a
// stream hold back an incomplete sequence and decide when more text arrives.
func escapeLen(s string) (n int, complete bool) {
	if strings.HasPrefix(s, csi) {
		return csiLen(s, len(csi))
	}
	if len(s) < 2 {
		return len(s), false
	}
	switch c := s[1]; {
	case c == '[':
		return csiLen(s, 2)
	case c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_':
		for i := 2; i < len(s); i++ {
			switch s[i] {
			case '\a':
				return i + 1, true
			case 0x1b:
				if i+1 == len(s) {
					return len(s), false
				}
				if s[i+1] == '\\' {
					return i + 2, true
				}
				return i, true // another escape starts: this string ends here
			}
		}
		return len(s), false
	case c >= 0x20 && c <= 0x2f:
		i := 2
		for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
			i++
		}
		if i == len(s) {
			return len(s), false
		}
		if s[i] >= 0x30 && s[i] <= 0x7e {
			return i + 1, true
		}
		return i, true
	case c >= 0x30 && c <= 0x7e:
		return 2, true
	}
	return 1, true // ESC followed by a control or non-ASCII byte: only the ESC goes
}

func csiLen(s string, i int) (int, bool) {
	for i < len(s) && s[i] >= 0x30 && s[i] <= 0x3f {
		i++
	}
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
		i++
	}
	if i == len(s) {
		return len(s), false
	}
	if s[i] >= 0x40 && s[i] <= 0x7e {
		return i + 1, true
	}
	return i, true
}

// nextEscape returns the index of the next ESC or C1 CSI in s at or after i, or -1.
func nextEscape(s string, i int) int {
	for j := i; j < len(s); j++ {
		if s[j] == 0x1b || (s[j] == 0xc2 && j+1 < len(s) && s[j+1] == 0x9b) {
			return j
		}
	}
	return -1
}

// stripEscapes removes every escape sequence from s; an incomplete one runs to the end.
func stripEscapes(s string) string {
	j := nextEscape(s, 0)
	if j < 0 {
		return s
	}
	var b strings.Builder
	i := 0
	for ; j >= 0; j = nextEscape(s, i) {
		b.WriteString(s[i:j])
		n, _ := escapeLen(s[j:])
		i = j + n
	}
	b.WriteString(s[i:])
	return b.String()
}

// incompleteEscape returns the start of an escape sequence that s ends inside, or -1.
func incompleteEscape(s string) int {
	for j := nextEscape(s, 0); j >= 0; {
		n, complete := escapeLen(s[j:])
		if !complete {
			return j
		}
		j = nextEscape(s, j+n)
	}
	return -1
}
