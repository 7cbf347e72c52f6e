package annbench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/kairos-rag/kairos/internal/ivf"
)

// SettingMapped is the inverted file's one served form: memory-mapped, as kairos index serves it.
const SettingMapped = "mapped"

// ivfIndex is Kairos's inverted file (internal/ivf) built as `kairos index --vector-index ivf`
// builds it: the number of vectors known, the centroids trained once the sample is in, every
// later vector assigned as it is added, one commit. Its sweep's knob is the lists probed.
func ivfIndex() kairosIndex {
	return kairosIndex{
		name:     "kairos-ivf",
		about:    "Kairos's inverted file (internal/ivf): one-bit RaBitQ codes in lists, int8 rescoring, memory-mapped, built as kairos index --vector-index ivf builds it",
		knob:     "probe",
		settings: []string{SettingMapped},
		params: func(o CompareOptions, n, dim int) map[string]float64 {
			return map[string]float64{"lists": float64(ivf.ListsFor(n)), "rescore": ivf.DefaultRescore, "seed": ivf.DefaultSeed}
		},
		build: buildIVF,
		open:  openIVF,
		files: func(dir, _ string) []string {
			r, err := ivf.Open(ivfDir(dir), ivf.OpenOptions{})
			if err != nil {
				return nil
			}
			defer r.Close()
			var out []string
			for _, f := range r.Files() {
				out = append(out, filepath.Join(ivfDir(dir), f))
			}
			return out
		},
	}
}

func ivfDir(dir string) string { return filepath.Join(dir, "ivf") }

func buildIVF(ctx context.Context, d *dumpReader, dir string, threads int, p map[string]float64, log io.Writer) error {
	if err := os.RemoveAll(ivfDir(dir)); err != nil {
		return err
	}
	w, err := ivf.Create(ivfDir(dir), d.meta.Dim, ivf.Options{Lists: int(p["lists"]), Rescore: int(p["rescore"]), Seed: int64(p["seed"]), Workers: threads}, d.meta.N)
	if err != nil {
		return err
	}
	t0 := time.Now()
	keys := make([]uint32, 10000)
	err = d.chunks(len(keys), func(first int, vecs [][]float32) error {
		for i := range vecs {
			keys[i] = uint32(first + i)
		}
		if err := w.Add(ctx, keys[:len(vecs)], vecs); err != nil {
			return err
		}
		done := first + len(vecs)
		rate := float64(done) / time.Since(t0).Seconds()
		fmt.Fprintf(log, "  kairos-ivf: added %d/%d (%.0f/s, ETA %.0fs)\n", done, d.meta.N, rate, float64(d.meta.N-done)/rate)
		return nil
	})
	if err == nil {
		_, err = w.Commit(ctx, true, nil)
	}
	if err != nil {
		w.Abort()
	}
	return err
}

func openIVF(dir, setting string) (kairosSearcher, error) {
	if setting != SettingMapped {
		return nil, fmt.Errorf("no setting %q", setting)
	}
	r, err := ivf.Open(ivfDir(dir), ivf.OpenOptions{})
	if err != nil {
		return nil, err
	}
	return ivfSearcher{r}, nil
}

type ivfSearcher struct{ r *ivf.Reader }

func (s ivfSearcher) search(q []float32, k int, point map[string]float64) ([]uint64, error) {
	probe, ok := point["probe"]
	if !ok {
		return nil, fmt.Errorf("sweep point %v has no probe", point)
	}
	res, err := s.r.Search(q, k, ivf.SearchOptions{Probe: int(probe)}, nil)
	if err != nil {
		return nil, err
	}
	ids := make([]uint64, len(res))
	for i, h := range res {
		ids[i] = uint64(h.Key)
	}
	return ids, nil
}

func (s ivfSearcher) Close() error { return s.r.Close() }
