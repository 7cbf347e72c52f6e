package qdrant

import (
	"testing"

	"github.com/kairos-rag/kairos/indexer/backend"
)

// TestDenseRequestEf: a query's own ef wins, else the engine's HNSW.Ef, else none is sent
// (Qdrant's default); exact and the limit pass through.
func TestDenseRequestEf(t *testing.T) {
	tests := []struct {
		name      string
		engineEf  int
		q         backend.VectorQuery
		wantEf    uint64 // 0: not sent
		wantExact bool
	}{
		{"query ef", 64, backend.VectorQuery{K: 10, Ef: 200}, 200, false},
		{"engine ef", 64, backend.VectorQuery{K: 10}, 64, false},
		{"server default", 0, backend.VectorQuery{K: 10}, 0, false},
		{"exact", 0, backend.VectorQuery{K: 5, Exact: true}, 0, true},
	}
	for _, tc := range tests {
		e := &Engine{opts: Options{HNSW: HNSW{Ef: tc.engineEf}}}
		req := e.denseRequest("c", tc.q)
		p := req.GetParams()
		if p.HnswEf == nil && tc.wantEf != 0 || p.HnswEf != nil && p.GetHnswEf() != tc.wantEf {
			t.Errorf("%s: hnsw_ef %v, want %d", tc.name, p.HnswEf, tc.wantEf)
		}
		if p.GetExact() != tc.wantExact || req.GetLimit() != uint64(tc.q.K) || req.GetUsing() != vecDense {
			t.Errorf("%s: exact %v limit %d using %q", tc.name, p.GetExact(), req.GetLimit(), req.GetUsing())
		}
	}
}
