package server

import (
	"flag"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"testing"
)

// A client is its connection's address, unless that is a trusted proxy: then the nearest hop of
// X-Forwarded-For that is not one. What a client writes left of the proxies' hops never counts.
func TestClientAddrBehindTrustedProxies(t *testing.T) {
	s := &Server{opts: Options{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::1/128")}}}
	for _, tt := range []struct {
		name, peer string
		xff        []string
		want       string
	}{
		{"no proxy", "192.0.2.7:4000", nil, "192.0.2.7"},
		{"an untrusted peer's header is ignored", "192.0.2.7:4000", []string{"198.51.100.1"}, "192.0.2.7"},
		{"one trusted proxy", "10.1.2.3:4000", []string{"198.51.100.1"}, "198.51.100.1"},
		{"a forged hop left of the real one", "10.1.2.3:4000", []string{"203.0.113.9, 198.51.100.1"}, "198.51.100.1"},
		{"two trusted proxies", "10.1.2.3:4000", []string{"198.51.100.1, 10.9.9.9"}, "198.51.100.1"},
		{"hops in two header lines", "10.1.2.3:4000", []string{"203.0.113.9", "198.51.100.1"}, "198.51.100.1"},
		{"IPv6 proxy, IPv4-mapped client", "[fd00::1]:4000", []string{"::ffff:198.51.100.1"}, "198.51.100.1"},
		{"a proxy without the header", "10.1.2.3:4000", nil, "10.1.2.3"},
		{"a malformed hop from the proxy", "10.1.2.3:4000", []string{"198.51.100.1, garbage"}, "10.1.2.3"},
		{"only trusted hops", "10.1.2.3:4000", []string{"10.4.4.4"}, "10.1.2.3"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/v1/chat", nil)
			r.RemoteAddr = tt.peer
			for _, v := range tt.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := s.clientAddr(r); got != tt.want {
				t.Errorf("clientAddr = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestTrustedProxiesFlag(t *testing.T) {
	for _, tt := range []struct {
		arg, want, err string
	}{
		{"127.0.0.1, 10.0.0.0/8,fd00::/8", "127.0.0.1/32 10.0.0.0/8 fd00::/8", ""},
		{"10.1.2.3/8", "10.0.0.0/8", ""},
		{"::ffff:10.0.0.1", "10.0.0.1/32", ""},
		{"::ffff:10.0.0.0/104", "10.0.0.0/8", ""},
		{"::ffff:0:0/80", "", `"::ffff:0:0/80": an IPv4-mapped prefix must be /96 or longer`},
		{"proxy.example", "", `"proxy.example" is neither an IP address nor a CIDR prefix`},
	} {
		var o Options
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		fs.SetOutput(new(strings.Builder))
		o.Flags(fs)
		err := fs.Parse([]string{"--trusted-proxies", tt.arg})
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), "trusted-proxies") {
				t.Errorf("%q: error %v, want one naming the flag and %q", tt.arg, err, tt.err)
			}
			continue
		}
		var got []string
		for _, p := range o.TrustedProxies {
			got = append(got, p.String())
		}
		if err != nil || !slices.Equal(got, strings.Fields(tt.want)) {
			t.Errorf("%q: %v %v, want %s", tt.arg, got, err, tt.want)
		}
	}
}
