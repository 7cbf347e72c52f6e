package document

import (
	"net/url"
	"strings"
	"testing"
)

func TestWebURL(t *testing.T) {
	for _, tt := range []struct {
		in, want string
		ok       bool
	}{
		{"https://en.wikipedia.org/wiki/Frozen_(2013_film)", "https://en.wikipedia.org/wiki/Frozen_(2013_film)", true},
		{"  HTTP://example.org/a?b=c#d \n", "HTTP://example.org/a?b=c#d", true},
		{"javascript:alert(1)", "", false},
		{" JavaScript:alert(document.cookie)", "", false},
		{"javascript://example.org/%0aalert(1)", "", false},
		{"java\tscript:alert(1)", "", false},
		{"data:text/html,<script>alert(1)</script>", "", false},
		{"file:///etc/passwd", "", false},
		{"vbscript:msgbox(1)", "", false},
		{"//evil.example/x", "", false},
		{"/wiki/Frozen", "", false},
		{"https:example.org", "", false},
		{"http:/\\evil.example", "", false},
		{"https://exa mple.org/", "", false},
		{"http://", "", false},
		{"", "", false},
	} {
		got, ok := WebURL(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("WebURL(%q) = %q %v, want %q %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// What WebURL keeps parses as an absolute http(s) URL with a host and holds nothing a browser
// would read differently (white space, control characters, backslashes).
func FuzzWebURL(f *testing.F) {
	for _, s := range []string{"https://a.b/c", "javascript:alert(1)", "http://x\\y", "HTTPS://[::1]:80/", "http://%zz", "\x00http://a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, ok := WebURL(s)
		if !ok {
			if u != "" {
				t.Fatalf("%q refused but returned %q", s, u)
			}
			return
		}
		p, err := url.Parse(u)
		if err != nil || p.Host == "" || (strings.ToLower(p.Scheme) != "http" && strings.ToLower(p.Scheme) != "https") {
			t.Fatalf("%q kept as %q: %v %+v", s, u, err, p)
		}
		if strings.ContainsAny(u, " \t\r\n\\\x00\x7f") || u != strings.TrimSpace(s) {
			t.Fatalf("%q kept as %q", s, u)
		}
	})
}
