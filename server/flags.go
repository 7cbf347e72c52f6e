package server

import (
	"flag"
	"fmt"
	"net/netip"
	"strings"
)

// Flags registers the request limits and browser access a deployment sets, with the defaults
// SetDefaults applies: --timeout, --max-k, --max-queries, --max-query-chars, --max-candidates,
// --max-total-hits, --max-in-flight-hits (0: 4 x --max-total-hits), --max-response-bytes,
// --cors-origins and the chat limits (ChatFlags).
// The loader, the chat service, the API key (a secret, read from a file by the caller) and the
// listening address are the caller's.
func (o *Options) Flags(fs *flag.FlagSet) {
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	for _, f := range []struct {
		v   *int
		def int
	}{{&o.MaxK, DefaultMaxK}, {&o.MaxQueries, DefaultMaxQueries}, {&o.MaxQueryChars, DefaultMaxQueryChars},
		{&o.MaxCandidates, DefaultMaxCandidates}, {&o.MaxTotalHits, DefaultMaxTotalHits}} {
		setInt(f.v, f.def)
	}
	if o.MaxResponseBytes == 0 {
		o.MaxResponseBytes = DefaultMaxResponseBytes
	}
	fs.DurationVar(&o.Timeout, "timeout", o.Timeout, "per-request timeout")
	fs.IntVar(&o.MaxK, "max-k", o.MaxK, "most `hits` one query may ask for (k, num_blocks, evi_num); more get a 400 naming max_k")
	fs.IntVar(&o.MaxQueries, "max-queries", o.MaxQueries, "most `queries` of one request; more get a 400 naming max_queries")
	fs.IntVar(&o.MaxQueryChars, "max-query-chars", o.MaxQueryChars, "longest query in `characters`; longer get a 400 naming max_query_chars")
	fs.IntVar(&o.MaxCandidates, "max-candidates", o.MaxCandidates, "most retrieved `passages` rerankers may see (candidates); more get a 400 naming max_candidates")
	fs.IntVar(&o.MaxTotalHits, "max-total-hits", o.MaxTotalHits, "most `hits` one search request may ask for (the sum of its queries' k); more get a 400")
	fs.IntVar(&o.MaxInFlightHits, "max-in-flight-hits", o.MaxInFlightHits, "most `hits` the searches running at once may hold in all (bounds memory); a request that cannot get its share within --timeout gets a 429 (default 4 x --max-total-hits)")
	fs.Int64Var(&o.MaxResponseBytes, "max-response-bytes", o.MaxResponseBytes, "largest search response body in `bytes`; larger get a 400")
	o.ChatFlags(fs)
	fs.Func("cors-origins", "comma-separated `origins` allowed to call from a browser, or * (default: CORS off)", func(s string) error {
		o.CORSOrigins = splitOrigins(s)
		return nil
	})
	fs.Func("trusted-proxies", "comma-separated `addresses` or CIDR prefixes of reverse proxies in front of the server, whose X-Forwarded-For then names the client that the chat limits count (default: none; a client is its connection's address)", func(s string) error {
		ps, err := parseProxies(s)
		o.TrustedProxies = ps
		return err
	})
	fs.Func("allowed-hosts", "comma-separated host `names` a request's Host may name, e.g. a reverse proxy's public name (default: localhost and loopback addresses when --addr is a loopback address, else any)", func(s string) error {
		o.AllowedHosts = splitOrigins(s)
		return nil
	})
}

// parseProxies reads --trusted-proxies: addresses (a prefix of one address) and CIDR prefixes.
func parseProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range splitOrigins(s) {
		if a, err := netip.ParseAddr(f); err == nil {
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			return nil, fmt.Errorf("%q is neither an IP address nor a CIDR prefix", f)
		}
		a, bits := p.Addr(), p.Bits()
		if a.Is4In6() { // an IPv4 prefix written as IPv6: the peers it means are IPv4 ones
			if bits < 96 {
				return nil, fmt.Errorf("%q: an IPv4-mapped prefix must be /96 or longer", f)
			}
			a, bits = a.Unmap(), bits-96
		}
		out = append(out, netip.PrefixFrom(a, bits).Masked())
	}
	return out, nil
}

// splitOrigins splits a comma-separated list, dropping blanks.
func splitOrigins(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// ChatFlags registers the limits of POST /v1/chat, with the defaults SetDefaults applies:
// --chat-timeout, --chat-rate-limit, --chat-rate-burst, --chat-new-per-day and
// --chat-max-in-flight; and
// --chat-trace.
func (o *Options) ChatFlags(fs *flag.FlagSet) {
	if o.ChatRatePerMinute == 0 {
		o.ChatRatePerMinute = DefaultChatRatePerMinute
	}
	if o.ChatBurst == 0 {
		o.ChatBurst = DefaultChatBurst
	}
	if o.ChatMaxInFlight == 0 {
		o.ChatMaxInFlight = DefaultChatMaxInFlight
	}
	if o.ChatNewPerDay == 0 {
		o.ChatNewPerDay = DefaultChatNewPerDay
	}
	if o.ChatTimeout == 0 {
		o.ChatTimeout = DefaultChatTimeout
	}
	fs.DurationVar(&o.ChatTimeout, "chat-timeout", o.ChatTimeout, "longest a chat turn may run, its LLM calls and retries included; past it a 504")
	fs.Float64Var(&o.ChatRatePerMinute, "chat-rate-limit", o.ChatRatePerMinute, "chat `turns` per minute one client may run (without an API key its address, whatever session; with one the key, or the key and a session); past it a 429 with Retry-After (negative: no limit)")
	fs.IntVar(&o.ChatBurst, "chat-rate-burst", o.ChatBurst, "chat `turns` one client may run back to back before --chat-rate-limit applies")
	fs.IntVar(&o.ChatNewPerDay, "chat-new-per-day", o.ChatNewPerDay, "`conversations` one client may start a day on a server without an API key (by its address), a hundred back to back; past it a 429 with Retry-After (negative: no limit)")
	fs.IntVar(&o.ChatMaxInFlight, "chat-max-in-flight", o.ChatMaxInFlight, "most chat `turns` running at once, all owners together; more get a 503 with Retry-After")
	fs.BoolVar(&o.ChatTrace, "chat-trace", o.ChatTrace, "send each chat turn's stage outputs and timings to its caller (the web page's trace panel): what the LLM wrote before any check, for development, not for users")
}
