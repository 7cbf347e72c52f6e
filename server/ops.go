package server

import (
	_ "embed"
	"net/http"
	"time"
)

//go:embed openapi.json
var openAPI []byte // read-only; go:embed needs a package-level variable

// HealthResponse answers /healthz, /readyz and POST /v1/admin/reload.
type HealthResponse struct {
	Status     string  `json:"status"`
	Reason     string  `json:"reason,omitempty"`
	Generation uint64  `json:"generation,omitempty"`
	Passages   int     `json:"passages,omitempty"`
	TookMS     float64 `json:"took_ms,omitempty"`
}

// handleHealthz answers 200 while the process serves HTTP at all (liveness).
func (s *Server) handleHealthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, HealthResponse{Status: "ok"})
}

// handleReadyz answers 200 once an index is loaded and until shutdown begins (readiness).
func (s *Server) handleReadyz(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		writeJSON(w, http.StatusServiceUnavailable, HealthResponse{Status: "not ready", Reason: "shutting down"})
		return
	}
	g := s.cur.Load()
	if g == nil {
		writeJSON(w, http.StatusServiceUnavailable, HealthResponse{Status: "not ready", Reason: "no index loaded yet"})
		return
	}
	writeJSON(w, http.StatusOK, HealthResponse{Status: "ready", Generation: g.id, Passages: g.stats.Passages})
}

func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	s.metrics.handler().ServeHTTP(w, r)
}

func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(openAPI)
}

// handleReload serves POST /v1/admin/reload: the HTTP twin of SIGHUP.
func (s *Server) handleReload(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	if err := s.Reload(r.Context()); err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	g := s.cur.Load()
	resp := HealthResponse{Status: "reloaded", TookMS: float64(time.Since(start).Microseconds()) / 1000}
	if g != nil {
		resp.Generation, resp.Passages = g.id, g.stats.Passages
	}
	writeJSON(w, http.StatusOK, resp)
}
