package annbench

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/kairos-rag/kairos/internal/hnsw"
)

// The served forms of Kairos's HNSW graph: one build, three files' worth of searching.
const (
	SettingFloat  = "float"  // read whole into memory, the walk on float32 vectors
	SettingInt8   = "int8"   // memory-mapped, the walk on one-byte codes, float rescoring (kairos index's default)
	SettingBinary = "binary" // memory-mapped, the walk on one bit a dimension, int8 then float rescoring
)

// hnswIndex is Kairos's HNSW graph built as `kairos index` builds it (from one-byte codes, the
// floats spilled beside the index, one repair pass at the end) and saved with int8 codes and,
// in a second file, with binary codes.
func hnswIndex() kairosIndex {
	return kairosIndex{
		name:     "kairos-hnsw",
		about:    "Kairos's HNSW graph (internal/hnsw) built from int8 codes as kairos index builds it; served in float32 memory, int8 mapped and binary mapped",
		knob:     "ef",
		settings: []string{SettingFloat, SettingInt8, SettingBinary},
		params: func(o CompareOptions, n, dim int) map[string]float64 {
			return map[string]float64{"m": float64(o.M), "efc": float64(o.EfC), "seed": float64(o.Seed)}
		},
		build: buildHNSW,
		open:  openHNSW,
		files: func(dir, setting string) []string {
			if setting == SettingBinary {
				return []string{hnswFile(dir) + ".binary"}
			}
			return []string{hnswFile(dir)}
		},
	}
}

func hnswFile(dir string) string { return filepath.Join(dir, "graph.hnsw") }

func buildHNSW(ctx context.Context, d *dumpReader, dir string, threads int, p map[string]float64, log io.Writer) error {
	g, err := hnsw.New(d.meta.Dim, hnsw.Options{M: int(p["m"]), EfConstruction: int(p["efc"]), Seed: int64(p["seed"]),
		Metric: hnsw.Dot, Workers: threads, Build: hnsw.BuildCodes, SpillDir: dir})
	if err != nil {
		return err
	}
	defer g.Close()
	g.DeferRepair() // one pass at the end, as kairos index does (Build's comment says why)
	if err := g.Reserve(d.meta.N); err != nil {
		return err
	}
	t0 := time.Now()
	keys := make([]uint64, 10000)
	err = d.chunks(len(keys), func(first int, vecs [][]float32) error {
		for i := range vecs {
			keys[i] = uint64(first + i)
		}
		if err := g.Add(ctx, keys[:len(vecs)], vecs); err != nil {
			return err
		}
		done := first + len(vecs)
		rate := float64(done) / time.Since(t0).Seconds()
		fmt.Fprintf(log, "  kairos-hnsw: inserted %d/%d (%.0f/s, ETA %.0fs)\n", done, d.meta.N, rate, float64(d.meta.N-done)/rate)
		return nil
	})
	if err != nil {
		return err
	}
	tr := time.Now()
	relinked, err := g.Repair()
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "  kairos-hnsw: repair pass relinked %d nodes in %.1fs\n", relinked, time.Since(tr).Seconds())
	if err := g.Save(hnswFile(dir)); err != nil {
		return err
	}
	if err := g.SetCodes(hnsw.CodesBinary); err != nil {
		return err
	}
	return g.Save(hnswFile(dir) + ".binary")
}

func openHNSW(dir, setting string) (kairosSearcher, error) {
	var (
		g   *hnsw.Graph
		err error
	)
	switch setting {
	case SettingFloat:
		g, err = hnsw.LoadWith(hnswFile(dir), hnsw.LoadOptions{})
	case SettingInt8:
		g, err = hnsw.LoadWith(hnswFile(dir), hnsw.LoadOptions{Mapped: true})
	case SettingBinary:
		g, err = hnsw.LoadWith(hnswFile(dir)+".binary", hnsw.LoadOptions{Mapped: true})
	default:
		return nil, fmt.Errorf("no setting %q", setting)
	}
	if err != nil {
		return nil, err
	}
	return graphSearcher{g}, nil
}

type graphSearcher struct{ g *hnsw.Graph }

func (s graphSearcher) search(q []float32, k int, point map[string]float64) ([]uint64, error) {
	ef, ok := point["ef"]
	if !ok {
		return nil, fmt.Errorf("sweep point %v has no ef", point)
	}
	res, err := s.g.Search(q, k, int(ef))
	if err != nil {
		return nil, err
	}
	ids := make([]uint64, len(res))
	for i, r := range res {
		ids[i] = r.Key
	}
	return ids, nil
}

func (s graphSearcher) Close() error { return s.g.Close() }
