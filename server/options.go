package server

import (
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/netip"
	"net/url"
	"time"

	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/rerank/live"
)

// Options configure a Server. The zero value of every field but Index and Collections
// means its default.
type Options struct {
	// Index is the live index of a server of one collection (named DefaultCollection); the
	// server reloads it (SIGHUP, POST /v1/admin/reload) and closes it on Close. Exactly one of
	// Index and Collections is required.
	Index *live.Index
	// Collections are several indexes behind one server, each routed by its name; the first
	// is the default one, served by the routes that name none.
	Collections []Collection
	// Chat answers POST /v1/chat; nil makes that endpoint answer 501.
	Chat Chatter
	// Logger receives access logs (Info) and failures (Warn/Error); nil discards them.
	Logger *slog.Logger

	// APIKey, when set, is required as "Authorization: Bearer <key>" on every API endpoint
	// (/v1/..., /search); /healthz, /readyz, /metrics and /openapi.json stay open so that
	// probes and scrapers need no secret. Default: no authentication.
	APIKey string
	// CORSOrigins lists the origins browsers may call from ("*" for any). Default: none, and
	// no CORS headers are sent at all.
	CORSOrigins []string
	// AllowedHosts are the host names (any port) a request's Host may name; another gets a
	// 403. A server listening on a loopback address should allow only loopback names
	// (LoopbackHosts, what kairos serve sets then): a web page whose name an attacker's DNS
	// points at 127.0.0.1 is the browser's same origin as the server, and could read the
	// index and spend the LLM. Default: any host.
	AllowedHosts []string
	// TrustedProxies are the addresses of reverse proxies in front of the server. A request
	// whose peer is one of them is counted, for the chat limits kept per client address,
	// against the address its X-Forwarded-For names: the nearest hop, from the right, that is
	// not itself a trusted proxy (the entries to its left are the client's to forge). Default:
	// none, and a client is its connection's address.
	TrustedProxies []netip.Prefix

	// Timeout bounds one search request (all its queries). Default 10s.
	Timeout time.Duration
	// ChatTimeout bounds one chat turn, which waits on a remote LLM. Default 2m.
	ChatTimeout time.Duration
	// ChatRatePerMinute is the rate at which one owner (an API key, a session; a client
	// without a session, by its address, for the turns that start one) may run chat turns:
	// a token bucket refilled at this rate, holding ChatBurst. A turn past it gets a 429 with
	// Retry-After. Default 30; negative: no limit.
	ChatRatePerMinute float64
	// ChatBurst is how many turns an owner may run back to back before the rate applies.
	// Default 10.
	ChatBurst int
	// ChatNewPerDay is how many conversations one client of a server without an API key (its
	// address) may start a day, a hundred of them back to back; past it a 429 with
	// Retry-After. Sessions cost nothing to mint, and each starts conversations of its own:
	// without this one client could fill the conversation store, which then refuses every
	// newcomer until the others' conversations idle out. Default DefaultChatNewPerDay;
	// negative: no limit.
	ChatNewPerDay int
	// ChatMaxInFlight bounds the chat turns running at once, all owners together; more get a
	// 503 with Retry-After, since each holds LLM calls for up to ChatTimeout. Default 64.
	ChatMaxInFlight int
	// ChatTrace sends each chat turn's stage outputs and timings (ChatResponse.Stages and
	// Trace) to its caller, for developing prompts and pipelines: they hold what the LLM
	// wrote before any check (drafts, claims, refuted sentences, its reasoning), so a
	// server whose users should see only checked sentences leaves it off. Default off.
	ChatTrace bool
	// SessionSecret signs the session tokens the server issues (HMAC-SHA256), so that only
	// tokens it issued are accepted. Give the conversation store's (chat.Store.SessionSecret)
	// so that tokens live as long as the conversations they own. Default: random per
	// server, at least 16 bytes when given.
	SessionSecret []byte
	// MaxBodyBytes bounds a request body. Default 1 MiB.
	MaxBodyBytes int64
	// MaxQueries bounds the queries of one request. Default 100 (WikiChat's limit).
	MaxQueries int
	// MaxQueryChars bounds one query's length in characters (Unicode code points, as
	// WikiChat counts them). Default 512.
	MaxQueryChars int
	// MaxK bounds the hits per query (k, num_blocks, evi_num). Default 300.
	MaxK int
	// MaxCandidates bounds how many retrieved passages rerankers may see. Default 1000.
	MaxCandidates int
	// Workers bounds how many queries of one batch run at once. Default 4.
	Workers int
	// MaxInFlight bounds the API requests served at once; more get a 429 with Retry-After
	// rather than queueing without bound. Health, readiness and metrics are not counted.
	// Default 1024.
	MaxInFlight int
	// MaxTotalHits bounds the hits of one search request, the sum of its queries' k, or of
	// their candidates where they rerank more (a request of 100 queries at k 300 asks for
	// 30,000 passages, about 32 MB of JSON); over it the request gets a 400 naming
	// max_total_hits. Default 10000.
	MaxTotalHits int
	// MaxResponseBytes bounds the JSON body of one search response; a larger one is not
	// sent and the request gets a 400 naming max_response_bytes. Default 16 MiB.
	MaxResponseBytes int64
	// MaxInFlightHits bounds memory across requests: the searches running at once hold at
	// most this many hits in all (each holds its total hits, as for MaxTotalHits). A request
	// that cannot get its hits within Timeout gets a 429 with Retry-After. At least
	// MaxTotalHits. Default 4 x MaxTotalHits.
	MaxInFlightHits int
	// FreeMemoryHits: when a request of at least this many hits finishes and no other such
	// request is running, the heap is returned to the OS (debug.FreeOSMemory), at most once
	// per FreeMemoryInterval, so a burst does not leave the server holding its peak.
	// Default 1000; set it above MaxTotalHits to never do so.
	FreeMemoryHits int
	// FreeMemoryInterval rate-limits FreeMemoryHits. Default 1s.
	FreeMemoryInterval time.Duration

	// WikiChatRerank are the stages run when a WikiChat request sets "rerank": true (WikiChat
	// reranks with an LLM; Kairos's nearest equivalent is its cross-encoder). nil means
	// [cross]; an empty non-nil slice serves such requests unreranked (no cross-encoder).
	WikiChatRerank []rerank.Stage
	// Language overrides the language of the index, matched by WikiChat's "language" search
	// filter and reported in block_metadata. Default: the loaded index's (its manifest),
	// DefaultLanguage when it records none.
	Language string
}

// Defaults of Options, exported so the CLI can show them in its help.
const (
	DefaultTimeout     = 10 * time.Second
	DefaultChatTimeout = 2 * time.Minute
	// DefaultChatRatePerMinute is Options.ChatRatePerMinute: a turn every two seconds,
	// faster than a person types, with DefaultChatBurst for a client that retries.
	DefaultChatRatePerMinute = 30
	DefaultChatBurst         = 10
	// DefaultChatNewPerDay is Options.ChatNewPerDay: a tenth of the conversation store's
	// default size (chat.DefaultMaxConversations), so that one client fills at most that.
	DefaultChatNewPerDay   = 1000
	DefaultChatMaxInFlight = 64
	DefaultMaxBodyBytes    = 1 << 20
	DefaultMaxQueries      = 100
	DefaultMaxQueryChars   = 512
	DefaultMaxK            = 300
	DefaultMaxCandidates   = 1000
	DefaultWorkers         = 4
	DefaultMaxInFlight     = 1024
	DefaultMaxTotalHits    = 10000
	// DefaultMaxResponseBytes is 16 MiB: about 15,000 hits of SciFact-sized passages.
	DefaultMaxResponseBytes   = 16 << 20
	DefaultFreeMemoryHits     = 1000
	DefaultFreeMemoryInterval = time.Second
	DefaultLanguage           = "en"
)

// SetDefaults sets the zero fields to their defaults (the Default constants above; a random
// SessionSecret; MaxInFlightHits four times MaxTotalHits; a discarding Logger).
func (o *Options) SetDefaults() {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	setDur(&o.Timeout, DefaultTimeout)
	setDur(&o.ChatTimeout, DefaultChatTimeout)
	if o.ChatRatePerMinute == 0 {
		o.ChatRatePerMinute = DefaultChatRatePerMinute
	}
	setInt(&o.ChatBurst, DefaultChatBurst)
	setInt(&o.ChatNewPerDay, DefaultChatNewPerDay)
	setInt(&o.ChatMaxInFlight, DefaultChatMaxInFlight)
	if o.SessionSecret == nil {
		o.SessionSecret = make([]byte, 32)
		rand.Read(o.SessionSecret)
	}
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	setInt(&o.MaxQueries, DefaultMaxQueries)
	setInt(&o.MaxQueryChars, DefaultMaxQueryChars)
	setInt(&o.MaxK, DefaultMaxK)
	setInt(&o.MaxCandidates, DefaultMaxCandidates)
	setInt(&o.Workers, DefaultWorkers)
	setInt(&o.MaxInFlight, DefaultMaxInFlight)
	setInt(&o.MaxTotalHits, DefaultMaxTotalHits)
	if o.MaxResponseBytes == 0 {
		o.MaxResponseBytes = DefaultMaxResponseBytes
	}
	setInt(&o.MaxInFlightHits, 4*o.MaxTotalHits)
	setInt(&o.FreeMemoryHits, DefaultFreeMemoryHits)
	setDur(&o.FreeMemoryInterval, DefaultFreeMemoryInterval)
	if o.WikiChatRerank == nil {
		o.WikiChatRerank = []rerank.Stage{rerank.StageCross}
	}
}

// validate reports the first field of o (defaults set) a server cannot run with.
func (o *Options) validate() error {
	if len(o.SessionSecret) < 16 {
		return fmt.Errorf("server options: SessionSecret of %d bytes: want at least 16", len(o.SessionSecret))
	}
	// In a fixed order (not a map's), so that the first negative option is the one reported.
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"Timeout", int64(o.Timeout)}, {"ChatTimeout", int64(o.ChatTimeout)},
		{"MaxBodyBytes", o.MaxBodyBytes}, {"MaxQueries", int64(o.MaxQueries)},
		{"MaxQueryChars", int64(o.MaxQueryChars)}, {"MaxK", int64(o.MaxK)},
		{"MaxCandidates", int64(o.MaxCandidates)}, {"Workers", int64(o.Workers)}, {"MaxInFlight", int64(o.MaxInFlight)},
		{"MaxTotalHits", int64(o.MaxTotalHits)}, {"MaxResponseBytes", o.MaxResponseBytes},
		{"MaxInFlightHits", int64(o.MaxInFlightHits)}, {"FreeMemoryHits", int64(o.FreeMemoryHits)},
		{"ChatBurst", int64(o.ChatBurst)}, {"ChatMaxInFlight", int64(o.ChatMaxInFlight)},
		{"FreeMemoryInterval", int64(o.FreeMemoryInterval)},
	} {
		if f.v < 0 {
			return fmt.Errorf("server options: %s is negative (%d)", f.name, f.v)
		}
	}
	if o.MaxInFlightHits < o.MaxTotalHits {
		return fmt.Errorf("server options: MaxInFlightHits (%d) is below MaxTotalHits (%d): a legal request could never run",
			o.MaxInFlightHits, o.MaxTotalHits)
	}
	for _, origin := range o.CORSOrigins {
		if origin == "*" {
			continue
		}
		u, err := url.Parse(origin)
		if err != nil || u.Scheme == "" || u.Host == "" || u.Path != "" {
			return fmt.Errorf("server options: CORS origin %q: want scheme://host[:port] or *", origin)
		}
	}
	return nil
}

func setDur(p *time.Duration, def time.Duration) {
	if *p == 0 {
		*p = def
	}
}

func setInt(p *int, def int) {
	if *p == 0 {
		*p = def
	}
}
