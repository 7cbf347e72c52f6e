package document

import (
	"net/url"
	"strings"
)

// WebURL returns u, trimmed of surrounding white space, when it is an absolute http or https
// URL with a host, and ok false otherwise: a javascript:, data:, file: or vbscript: URL, a
// relative one, or one a browser would read differently from Go (control characters, white
// space or a backslash inside, which browsers drop or read as a slash). Only such URLs are
// kept from a corpus and sent to clients, who put them in links.
func WebURL(u string) (string, bool) {
	u = strings.TrimSpace(u)
	if u == "" || len(u) > maxURLBytes {
		return "", false
	}
	for _, c := range []byte(u) {
		if c <= ' ' || c == 0x7f || c == '\\' {
			return "", false
		}
	}
	p, err := url.Parse(u)
	if err != nil || p.Host == "" || p.Opaque != "" {
		return "", false
	}
	if s := strings.ToLower(p.Scheme); s != "http" && s != "https" {
		return "", false
	}
	return u, true
}

// maxURLBytes bounds a kept URL: browsers and servers refuse far shorter ones, and a longer
// one is not a link but data.
const maxURLBytes = 8192
