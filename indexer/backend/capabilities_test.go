package backend_test

import (
	"slices"
	"testing"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/blevebm25"
	"github.com/kairos-rag/kairos/indexer/backend/hnswvec"
	"github.com/kairos-rag/kairos/indexer/backend/kpst"
	"github.com/kairos-rag/kairos/indexer/backend/postingsbm25"
	"github.com/kairos-rag/kairos/indexer/backend/qdrant"
)

// capabilities are the optional interfaces the indexer and search look for on an engine's
// values. Each is a check rather than a type so that the table below names them.
var capabilities = map[string]func(v any) bool{
	"HybridSearcher":       func(v any) bool { _, ok := v.(backend.HybridSearcher); return ok },
	"LanguageMeta":         func(v any) bool { _, ok := v.(backend.LanguageMeta); return ok },
	"HNSWOptioner":         func(v any) bool { _, ok := v.(backend.HNSWOptioner); return ok },
	"Reopener":             func(v any) bool { _, ok := v.(backend.Reopener); return ok },
	"Reserver":             func(v any) bool { _, ok := v.(backend.Reserver); return ok },
	"RepairReporter":       func(v any) bool { _, ok := v.(backend.RepairReporter); return ok },
	"DeletedCountsChecker": func(v any) bool { _, ok := v.(backend.DeletedCountsChecker); return ok },
	"FileSummer":           func(v any) bool { _, ok := v.(backend.FileSummer); return ok },
}

// TestCapabilities pins which engine values offer which optional capability. A capability is
// found by a type assertion where it is used: a method renamed or a signature changed on one
// side would drop it without a compile error (hnswvec's Reopen unused: every checkpoint loads
// its graph again; Options unused: the manifest records no HNSW parameters). Here it fails.
// (Qdrant's vector writer is unexported: its row is in the qdrant package's tests.)
func TestCapabilities(t *testing.T) {
	engines := []struct {
		name string
		v    any
		has  []string
	}{
		{"blevebm25.Reader", (*blevebm25.Reader)(nil), nil},
		{"postingsbm25.Reader", (*postingsbm25.Reader)(nil), []string{"DeletedCountsChecker"}},
		{"qdrant.LexReader", (*qdrant.LexReader)(nil), []string{"HybridSearcher"}},
		{"hnswvec.Writer", (*hnswvec.Writer)(nil), []string{"HNSWOptioner", "Reopener", "Reserver", "RepairReporter", "FileSummer"}},
		{"hnswvec.Reader", (*hnswvec.Reader)(nil), []string{"HNSWOptioner"}},
		{"qdrant.VecReader", (*qdrant.VecReader)(nil), nil},
		{"kpst.Store", (*kpst.Store)(nil), []string{"LanguageMeta"}},
		{"qdrant.PassageReader", (*qdrant.PassageReader)(nil), []string{"LanguageMeta"}},
	}
	for capName, offers := range capabilities {
		t.Run(capName, func(t *testing.T) {
			for _, e := range engines {
				if got, want := offers(e.v), slices.Contains(e.has, capName); got != want {
					t.Errorf("%s offers %s: %v, want %v", e.name, capName, got, want)
				}
			}
		})
	}
	for _, e := range engines {
		for _, c := range e.has {
			if capabilities[c] == nil {
				t.Errorf("%s: capability %q is not in the table", e.name, c)
			}
		}
	}
}
