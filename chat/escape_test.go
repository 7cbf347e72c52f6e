package chat

import (
	"strings"
	"testing"
	"unicode"
)

func TestCleanControlEscapes(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"SGR colour", "red \x1b[31mtext\x1b[0m.", "red text."},
		{"SGR with many parameters", "\x1b[1;38;5;196mbold\x1b[m", "bold"},
		{"C1 CSI", "a\u009b2Jb", "ab"},
		{"cursor movement", "x\x1b[2Ay\x1b[10;20Hz", "xyz"},
		{"private mode", "\x1b[?25lhidden cursor\x1b[?25h", "hidden cursor"},
		{"OSC title with BEL", "\x1b]0;pwned\atext", "text"},
		{"OSC hyperlink with ST", "\x1b]8;;http://evil\x1b\\click\x1b]8;;\x1b\\", "click"},
		{"two-byte escape", "a\x1bcb\x1b7c", "abc"},
		{"charset designation", "a\x1b(Bb", "ab"},
		{"escape broken by a newline", "a\x1b[12\nb", "a\nb"},
		{"incomplete at the end", "done\x1b[3", "done"},
		{"unterminated OSC runs to the end", "ok\x1b]0;title", "ok"},
		{"lone ESC at the end", "end\x1b", "end"},
		{"ESC before non-ASCII", "a\x1béb", "aéb"},
		{"no escapes", "plain ünïcode\ttab", "plain ünïcode\ttab"},
		{"bidi override", "a\u202eb", "ab"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CleanControl(tt.in); got != tt.want {
				t.Errorf("CleanControl(%q) = %q, want %q", tt.in, got, tt.want)
			}
			// A stream in pieces of any size gives the same text.
			for n := 1; n <= 4; n++ {
				if _, got := feed(tt.in, n); got != strings.TrimFunc(tt.want, unicode.IsSpace) {
					t.Errorf("streamed in pieces of %d: %q, want %q", n, got, tt.want)
				}
			}
		})
	}
}

func FuzzCleanControl(f *testing.F) {
	f.Add("red \x1b[31mtext\x1b[0m")
	f.Add("\x1b]8;;u\x1b\\x\u009b1m")
	f.Fuzz(func(t *testing.T, s string) {
		out := CleanControl(s)
		if strings.ContainsAny(out, "\x1b\u009b\r") {
			t.Errorf("CleanControl(%q) = %q keeps an escape", s, out)
		}
		if CleanControl(out) != out {
			t.Errorf("not idempotent: %q -> %q -> %q", s, out, CleanControl(out))
		}
	})
}
