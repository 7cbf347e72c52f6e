package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kairos-rag/kairos/chat"
	"github.com/kairos-rag/kairos/rerank/live"
)

// Latency histogram bounds in seconds: fine around the 1-50 ms a BM25 query takes, coarse
// up to the request timeout.
var latencyBounds = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// metrics holds what /metrics exposes, in a registry of the server's own (never the global
// default one, so two servers in a process, as in the tests, count apart). Besides Kairos's
// series it carries the Go runtime's (go_*) and the process's (process_*: CPU, RSS, open files).
type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	inflight prometheus.Gauge
	reloads  *prometheus.CounterVec
	// LLM usage of chat turns, by pipeline and stage.
	llmTokens    *prometheus.CounterVec
	llmCalls     *prometheus.CounterVec
	llmEstimated *prometheus.CounterVec
	llmCost      *prometheus.CounterVec
	// Chat turns refused before they ran, by reason; sentences the attribution check dropped.
	chatRefusals *prometheus.CounterVec
	dropped      *prometheus.CounterVec
}

// Reasons a chat turn is refused (kairos_chat_refusals_total).
const (
	refusedRateLimited = "rate_limited" // the owner's rate (--chat-rate-limit)
	refusedBusy        = "busy"         // --chat-max-in-flight turns running
	refusedStoreFull   = "store_full"   // no room for a new conversation (--chat-max-conversations)
)

// newMetrics registers every series; the index gauges read each collection's current load
// at scrape time, labelled with the collection's name.
func newMetrics(cols []*collection) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kairos_http_requests_total", Help: "HTTP requests by endpoint, search mode and status code.",
		}, []string{"endpoint", "mode", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "kairos_http_request_duration_seconds", Help: "HTTP request latency by endpoint and search mode.",
			Buckets: latencyBounds,
		}, []string{"endpoint", "mode"}),
		inflight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "kairos_http_requests_in_flight", Help: "Requests being served.",
		}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kairos_index_reloads_total", Help: "Reloads of each collection's index after its load at start, by result: ok (kairos_index_generation says which generation it loaded) or error (the current index kept).",
		}, []string{"collection", "result"}),
		llmTokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kairos_chat_llm_tokens_total", Help: "LLM tokens of chat turns by pipeline, stage and kind (prompt, completion), as the LLM reported them or, for calls it sent no usage for, estimated.",
		}, []string{"pipeline", "stage", "kind"}),
		llmCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kairos_chat_llm_calls_total", Help: "LLM calls of chat turns by pipeline, stage and outcome: ok, or how the call failed after its retries (rate_limited, upstream_error, rejected, bad_response, unreachable, timeout, canceled).",
		}, []string{"pipeline", "stage", "outcome"}),
		llmEstimated: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kairos_chat_llm_estimated_calls_total", Help: "LLM calls of chat turns whose tokens were estimated from the text (the LLM sent no usage), by pipeline and stage.",
		}, []string{"pipeline", "stage"}),
		llmCost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kairos_chat_llm_cost_total", Help: "Estimated LLM cost of chat turns at serve's --llm-price-prompt and --llm-price-completion (per 1,000 tokens), by pipeline and stage.",
		}, []string{"pipeline", "stage"}),
		chatRefusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kairos_chat_refusals_total", Help: "Chat turns refused before they ran, by reason: rate_limited (the owner's --chat-rate-limit), busy (--chat-max-in-flight), store_full (no conversation may be evicted for a new one).",
		}, []string{"reason"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kairos_chat_dropped_sentences_total", Help: "Sentences an LLM wrote that the attribution check removed from chat turns, by pipeline and stage.",
		}, []string{"pipeline", "stage"}),
	}
	for _, r := range []string{refusedRateLimited, refusedBusy, refusedStoreFull} {
		m.chatRefusals.WithLabelValues(r) // every reason exists from the start, at 0
	}
	for _, c := range cols {
		m.reloads.WithLabelValues(c.name, "ok")
		m.reloads.WithLabelValues(c.name, "error") // both series exist from the start, at 0
	}
	index := func(name, help string, v func(g *live.Load) float64) prometheus.Collector {
		return indexGauge{desc: prometheus.NewDesc(name, help, []string{"collection"}, nil), cols: cols, value: v}
	}
	m.reg.MustRegister(m.requests, m.latency, m.inflight, m.reloads, m.llmTokens, m.llmCalls, m.llmEstimated, m.llmCost,
		m.chatRefusals, m.dropped,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		index("kairos_index_generation", "Generation number of the loaded index (the N of g-NNNNNN, as kairos stats reports it); kairos_index_reloads_total counts the reloads.",
			func(g *live.Load) float64 { return float64(g.Stats().Generation) }),
		index("kairos_index_documents", "Documents in the loaded index.",
			func(g *live.Load) float64 { return float64(g.Stats().Documents) }),
		index("kairos_index_passages", "Passages in the loaded index.",
			func(g *live.Load) float64 { return float64(g.Stats().Passages) }),
		index("kairos_index_size_bytes", "On-disk size of the loaded index.",
			func(g *live.Load) float64 { return float64(g.Stats().SizeBytes) }),
		index("kairos_index_loaded_timestamp_seconds", "Unix time the loaded index was opened.",
			func(g *live.Load) float64 { return float64(g.LoadedAt().UnixNano()) / 1e9 }),
	)
	return m
}

func (m *metrics) observe(endpoint, mode string, code int, d time.Duration) {
	m.requests.WithLabelValues(endpoint, mode, strconv.Itoa(code)).Inc()
	m.latency.WithLabelValues(endpoint, mode).Observe(d.Seconds())
}

func (m *metrics) reloaded(collection string, ok bool) {
	if ok {
		m.reloads.WithLabelValues(collection, "ok").Inc()
	} else {
		m.reloads.WithLabelValues(collection, "error").Inc()
	}
}

// chatTurn counts the LLM usage of a chat turn, stage by stage, and the sentences its
// attribution check dropped. Its calls are counted as they end (llmCall), failed ones too.
func (m *metrics) chatTurn(resp ChatResponse) {
	for _, st := range resp.Trace {
		u := st.Usage
		if u == nil {
			continue
		}
		m.llmTokens.WithLabelValues(resp.Pipeline, st.Stage, "prompt").Add(float64(u.PromptTokens))
		m.llmTokens.WithLabelValues(resp.Pipeline, st.Stage, "completion").Add(float64(u.CompletionTokens))
		m.llmEstimated.WithLabelValues(resp.Pipeline, st.Stage).Add(float64(u.EstimatedCalls))
		m.llmCost.WithLabelValues(resp.Pipeline, st.Stage).Add(u.Cost)
	}
	for stage, n := range resp.Dropped {
		m.dropped.WithLabelValues(resp.Pipeline, stage).Add(float64(n))
	}
}

// llmCall counts one LLM call of a chat turn of pipeline, by its outcome.
func (m *metrics) llmCall(pipeline string, c chat.CallRecord) {
	m.llmCalls.WithLabelValues(pipeline, c.Stage, c.Outcome).Inc()
}

func (m *metrics) chatRefused(reason string) { m.chatRefusals.WithLabelValues(reason).Inc() }

// StoreStatser is implemented by a Chatter that can report its conversation store's counts
// (ChatService with a store): /metrics then carries them.
type StoreStatser interface {
	StoreStats() chat.StoreStats
}

// storeCollector reads the conversation store's counts at scrape time.
type storeCollector struct{ st StoreStatser }

var (
	convDesc    = prometheus.NewDesc("kairos_chat_conversations", "Conversations the chat store keeps.", nil, nil)
	ownersDesc  = prometheus.NewDesc("kairos_chat_conversation_owners", "Owners (API keys, sessions) with a conversation in the chat store.", nil, nil)
	evictedDesc = prometheus.NewDesc("kairos_chat_conversations_evicted_total",
		"Conversations the chat store removed that nobody deleted, by reason: idle (--chat-idle-ttl), owner_quota (its owner's --chat-max-conversations-per-owner), store_full (--chat-max-conversations).", []string{"reason"}, nil)
)

func (c storeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- convDesc
	ch <- ownersDesc
	ch <- evictedDesc
}

func (c storeCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.st.StoreStats()
	ch <- prometheus.MustNewConstMetric(convDesc, prometheus.GaugeValue, float64(st.Conversations))
	ch <- prometheus.MustNewConstMetric(ownersDesc, prometheus.GaugeValue, float64(st.Owners))
	for _, r := range []string{chat.EvictedIdle, chat.EvictedOwnerQuota, chat.EvictedStoreFull} {
		ch <- prometheus.MustNewConstMetric(evictedDesc, prometheus.CounterValue, float64(st.Evicted[r]), r)
	}
}

// handler serves the registry in the Prometheus text format (or OpenMetrics when asked).
func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{EnableOpenMetrics: true})
}

// indexGauge is a gauge of each collection's current load, absent before its first load.
type indexGauge struct {
	desc  *prometheus.Desc
	cols  []*collection
	value func(*live.Load) float64
}

var _ prometheus.Collector = indexGauge{}

func (c indexGauge) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c indexGauge) Collect(ch chan<- prometheus.Metric) {
	for _, col := range c.cols {
		if g := col.acquire(); g != nil {
			ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, c.value(g), col.name)
			g.Release()
		}
	}
}
