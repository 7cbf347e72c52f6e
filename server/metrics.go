package server

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Latency histogram bounds in seconds: fine around the 1-50 ms a BM25 query takes, coarse
// up to the request timeout.
var latencyBounds = [...]float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// metrics holds the counters /metrics exposes, written by hand in the Prometheus text format
// (version 0.0.4) to avoid a client library for a dozen series.
type metrics struct {
	mu       sync.Mutex
	series   map[seriesKey]*series
	inflight atomic.Int64
	reloadOK atomic.Int64
	reloadKO atomic.Int64
}

type seriesKey struct{ endpoint, mode string }

type series struct {
	codes   map[int]uint64
	buckets [len(latencyBounds)]uint64 // non-cumulative; cumulated when written
	count   uint64
	sum     float64
}

func newMetrics() *metrics { return &metrics{series: map[seriesKey]*series{}} }

func (m *metrics) observe(endpoint, mode string, code int, d time.Duration) {
	sec := d.Seconds()
	m.mu.Lock()
	defer m.mu.Unlock()
	k := seriesKey{endpoint, mode}
	s := m.series[k]
	if s == nil {
		s = &series{codes: map[int]uint64{}}
		m.series[k] = s
	}
	s.codes[code]++
	s.count++
	s.sum += sec
	for i, b := range latencyBounds {
		if sec <= b {
			s.buckets[i]++
			break
		}
	}
}

func (m *metrics) reloaded(ok bool) {
	if ok {
		m.reloadOK.Add(1)
	} else {
		m.reloadKO.Add(1)
	}
}

// write renders every series, sorted so that the output is stable. g may be nil.
func (m *metrics) write(w io.Writer, g *generation) {
	var b strings.Builder
	m.mu.Lock()
	keys := make([]seriesKey, 0, len(m.series))
	for k := range m.series {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].endpoint != keys[j].endpoint {
			return keys[i].endpoint < keys[j].endpoint
		}
		return keys[i].mode < keys[j].mode
	})
	header(&b, "kairos_http_requests_total", "counter", "HTTP requests by endpoint, search mode and status code.")
	for _, k := range keys {
		s := m.series[k]
		codes := make([]int, 0, len(s.codes))
		for c := range s.codes {
			codes = append(codes, c)
		}
		sort.Ints(codes)
		for _, c := range codes {
			fmt.Fprintf(&b, "kairos_http_requests_total{endpoint=%s,mode=%s,code=\"%d\"} %d\n",
				quote(k.endpoint), quote(k.mode), c, s.codes[c])
		}
	}
	header(&b, "kairos_http_request_duration_seconds", "histogram", "HTTP request latency by endpoint and search mode.")
	for _, k := range keys {
		s := m.series[k]
		labels := "endpoint=" + quote(k.endpoint) + ",mode=" + quote(k.mode)
		var cum uint64
		for i, bound := range latencyBounds {
			cum += s.buckets[i]
			fmt.Fprintf(&b, "kairos_http_request_duration_seconds_bucket{%s,le=\"%s\"} %d\n", labels, num(bound), cum)
		}
		fmt.Fprintf(&b, "kairos_http_request_duration_seconds_bucket{%s,le=\"+Inf\"} %d\n", labels, s.count)
		fmt.Fprintf(&b, "kairos_http_request_duration_seconds_sum{%s} %s\n", labels, num(s.sum))
		fmt.Fprintf(&b, "kairos_http_request_duration_seconds_count{%s} %d\n", labels, s.count)
	}
	m.mu.Unlock()

	gauge(&b, "kairos_http_requests_in_flight", "Requests being served.", float64(m.inflight.Load()))
	header(&b, "kairos_index_reloads_total", "counter", "Index loads by result.")
	fmt.Fprintf(&b, "kairos_index_reloads_total{result=\"ok\"} %d\n", m.reloadOK.Load())
	fmt.Fprintf(&b, "kairos_index_reloads_total{result=\"error\"} %d\n", m.reloadKO.Load())
	if g != nil {
		gauge(&b, "kairos_index_generation", "Generation of the loaded index; increments on each reload.", float64(g.id))
		gauge(&b, "kairos_index_documents", "Documents in the loaded index.", float64(g.stats.Documents))
		gauge(&b, "kairos_index_passages", "Passages in the loaded index.", float64(g.stats.Passages))
		gauge(&b, "kairos_index_size_bytes", "On-disk size of the loaded index.", float64(g.stats.SizeBytes))
		gauge(&b, "kairos_index_loaded_timestamp_seconds", "Unix time the loaded index was opened.",
			float64(g.loadedAt.UnixNano())/1e9)
	}
	io.WriteString(w, b.String())
}

func header(b *strings.Builder, name, typ, help string) {
	fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
}

func gauge(b *strings.Builder, name, help string, v float64) {
	header(b, name, "gauge", help)
	fmt.Fprintf(b, "%s %s\n", name, num(v))
}

func num(v float64) string {
	if math.IsInf(v, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// quote escapes a label value as the text format requires: backslash, quote and newline.
func quote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}
