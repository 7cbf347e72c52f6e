package server

import (
	_ "embed"
	"net/http"
	"time"
)

//go:embed openapi.json
var openAPI []byte // read-only; go:embed needs a package-level variable

// HealthResponse answers /healthz, /readyz and the reloads. Collection names the collection
// an answer about one collection is of (/readyz/{collection} and its reload); Collections
// lists each collection's when a server of several answers for all of them.
type HealthResponse struct {
	Status      string           `json:"status"`
	Reason      string           `json:"reason,omitempty"`
	Collection  string           `json:"collection,omitempty"`
	Generation  int              `json:"generation,omitempty"` // the index's generation number
	Reloads     uint64           `json:"reloads,omitempty"`    // successful reloads since start
	Passages    int              `json:"passages,omitempty"`
	TookMS      float64          `json:"took_ms,omitempty"`
	Collections []HealthResponse `json:"collections,omitempty"`
}

// CollectionsResponse answers GET /v1/collections.
type CollectionsResponse struct {
	Collections []CollectionInfo `json:"collections"`
}

// CollectionInfo describes one collection of the server.
type CollectionInfo struct {
	Name        string `json:"name"`
	Default     bool   `json:"default"`              // served by the routes that name no collection
	Status      string `json:"status"`               // "ready", or "not ready" before its first load
	Generation  int    `json:"generation,omitempty"` // the generation number of the index served
	Reloads     uint64 `json:"reloads"`              // successful reloads since the server started
	Passages    int    `json:"passages"`
	Dense       bool   `json:"dense"`
	DefaultMode string `json:"default_mode,omitempty"`
	LoadedAt    string `json:"loaded_at,omitempty"`
}

// handleHealthz answers 200 while the process serves HTTP at all (liveness).
func (s *Server) handleHealthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, HealthResponse{Status: "ok"})
}

// handleReadyz answers 200 once an index is loaded and until shutdown begins (readiness); a
// server of several collections is ready when every one is, and lists them.
func (s *Server) handleReadyz(w http.ResponseWriter, r *http.Request) {
	if len(s.cols) == 1 {
		s.writeReadiness(w, s.cols[0], false)
		return
	}
	resp := HealthResponse{Status: "ready"}
	status := http.StatusOK
	for _, c := range s.cols {
		h, code := s.readiness(c)
		h.Collection = c.name
		resp.Collections = append(resp.Collections, h)
		if code != http.StatusOK && status == http.StatusOK {
			status, resp.Status, resp.Reason = code, h.Status, "collection "+c.name+": "+h.Reason
		}
	}
	writeJSON(w, status, resp)
}

// handleCollectionReadyz answers GET /readyz/{collection}: the readiness of one collection.
func (s *Server) handleCollectionReadyz(w http.ResponseWriter, r *http.Request) {
	c, err := s.collection(r)
	if err != nil {
		writeErr(w, err, "")
		return
	}
	s.writeReadiness(w, c, true)
}

func (s *Server) writeReadiness(w http.ResponseWriter, c *collection, named bool) {
	h, code := s.readiness(c)
	if named {
		h.Collection = c.name
	}
	writeJSON(w, code, h)
}

func (s *Server) readiness(c *collection) (HealthResponse, int) {
	if s.draining.Load() {
		return HealthResponse{Status: "not ready", Reason: "shutting down"}, http.StatusServiceUnavailable
	}
	g := c.acquire()
	if g == nil {
		return HealthResponse{Status: "not ready", Reason: "no index loaded yet"}, http.StatusServiceUnavailable
	}
	defer g.Release()
	return HealthResponse{Status: "ready", Generation: g.Stats().Generation, Reloads: g.Reloads(), Passages: g.Stats().Passages}, http.StatusOK
}

// handleCollections serves GET /v1/collections.
func (s *Server) handleCollections(w http.ResponseWriter, r *http.Request) {
	resp := CollectionsResponse{Collections: make([]CollectionInfo, len(s.cols))}
	for i, c := range s.cols {
		ci := CollectionInfo{Name: c.name, Default: i == 0, Status: "not ready"}
		if g := c.acquire(); g != nil {
			st := g.Stats()
			ci.Status, ci.Generation, ci.Reloads, ci.Passages, ci.Dense = "ready", st.Generation, g.Reloads(), st.Passages, st.Dense
			ci.DefaultMode, ci.LoadedAt = string(g.Mode()), formatTime(g.LoadedAt())
			g.Release()
		}
		resp.Collections[i] = ci
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	s.metrics.handler().ServeHTTP(w, r)
}

func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(openAPI)
}

// handleReload serves POST /v1/admin/reload, the HTTP twin of SIGHUP, which reloads every
// collection, and POST /v1/collections/{collection}/admin/reload, which reloads one.
func (s *Server) handleReload(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	cols := s.cols
	named := r.PathValue("collection") != ""
	if named {
		c, err := s.collection(r)
		if err != nil {
			writeErr(w, err, "")
			return
		}
		cols = []*collection{c}
	}
	if err := s.reloadEach(r.Context(), cols); err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	resp := HealthResponse{Status: "reloaded", TookMS: float64(time.Since(start).Microseconds()) / 1000}
	for _, c := range cols {
		h := HealthResponse{Status: "reloaded"}
		if g := c.acquire(); g != nil {
			h.Generation, h.Reloads, h.Passages = g.Stats().Generation, g.Reloads(), g.Stats().Passages
			g.Release()
		}
		if len(cols) == 1 {
			resp.Generation, resp.Reloads, resp.Passages = h.Generation, h.Reloads, h.Passages
			if named {
				resp.Collection = c.name
			}
			break
		}
		h.Collection = c.name
		resp.Collections = append(resp.Collections, h)
	}
	writeJSON(w, http.StatusOK, resp)
}
