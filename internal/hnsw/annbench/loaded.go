package annbench

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kairos-rag/kairos/internal/hnsw"
)

// LoadedConfig is a run over a graph saved by an earlier Run (Config.Save), with the queries and
// ground truth that run dumped (Config.Dump). Nothing but the graph and the queries is in memory,
// so the resident-memory figures are those of search.
type LoadedConfig struct {
	Index   string // graph file
	Data    string // directory with meta.json, queries.f32 and gt.i32
	Mapped  bool   // hnsw.LoadOptions.Mapped
	Rescore int    // hnsw.LoadOptions.Rescore
	// BinaryRescore is hnsw.LoadOptions.BinaryRescore (a file with binary codes).
	BinaryRescore string
	// BinaryWalk is hnsw.LoadOptions.BinaryWalk.
	BinaryWalk string
	Efs        []int
	Repeat     int // timed passes per ef, best QPS kept (0: 1)
}

// RunLoaded loads the graph (timed), then measures every ef like Run. Each row also carries
// the load time and the process's resident memory (VmRSS, VmHWM) after loading and after that
// row's queries.
func RunLoaded(ctx context.Context, cfg LoadedConfig, log io.Writer) ([]Row, error) {
	queries, gt, err := readDump(cfg.Data)
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	g, err := hnsw.LoadWith(cfg.Index, hnsw.LoadOptions{Mapped: cfg.Mapped, Rescore: cfg.Rescore, BinaryRescore: cfg.BinaryRescore, BinaryWalk: cfg.BinaryWalk})
	if err != nil {
		return nil, err
	}
	defer g.Close()
	load := time.Since(t0).Seconds()
	rssLoad, _ := memStatus()
	mode := "memory"
	if g.Mapped() {
		mode = "mapped"
	}
	fmt.Fprintf(log, "loaded %d nodes (%s) in %.2fs, VmRSS %.0f MB\n", g.Len(), mode, load, rssLoad)
	rows := make([]Row, 0, len(cfg.Efs))
	for _, ef := range cfg.Efs {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var recall, qps, cpuQPS float64
		for range max(cfg.Repeat, 1) {
			r, q, c, err := MeasureCPU(g, queries, gt, ef)
			if err != nil {
				return nil, err
			}
			recall, qps, cpuQPS = r, max(qps, q), max(cpuQPS, c)
		}
		rss, hwm := memStatus()
		rows = append(rows, Row{Ef: ef, Recall: recall, QPS: qps, CPUQPS: cpuQPS, N: g.Len(), Dim: g.Dim(), Mode: mode,
			LoadSeconds: load, RSSLoadMB: rssLoad, RSSMB: rss, HWMMB: hwm})
	}
	return rows, nil
}

// readDump reads the queries and ground truth written by Dump.
func readDump(dir string) ([][]float32, [][]uint64, error) {
	mb, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if err != nil {
		return nil, nil, fmt.Errorf("annbench: %w", err)
	}
	var meta struct{ Dim, Queries int }
	if err := json.Unmarshal(mb, &meta); err != nil {
		return nil, nil, fmt.Errorf("annbench: %s: %w", filepath.Join(dir, "meta.json"), err)
	}
	qb, err := os.ReadFile(filepath.Join(dir, "queries.f32"))
	if err != nil {
		return nil, nil, fmt.Errorf("annbench: %w", err)
	}
	gb, err := os.ReadFile(filepath.Join(dir, "gt.i32"))
	if err != nil {
		return nil, nil, fmt.Errorf("annbench: %w", err)
	}
	if meta.Dim < 1 || meta.Queries < 1 || len(qb) != meta.Queries*meta.Dim*4 || len(gb) != meta.Queries*K*4 {
		return nil, nil, fmt.Errorf("annbench: %s: queries.f32 (%d bytes) or gt.i32 (%d bytes) do not match meta.json (%d queries of dim %d)",
			dir, len(qb), len(gb), meta.Queries, meta.Dim)
	}
	queries := make([][]float32, meta.Queries)
	gt := make([][]uint64, meta.Queries)
	for i := range queries {
		queries[i] = make([]float32, meta.Dim)
		for d := range queries[i] {
			queries[i][d] = math.Float32frombits(binary.LittleEndian.Uint32(qb[(i*meta.Dim+d)*4:]))
		}
		gt[i] = make([]uint64, K)
		for j := range gt[i] {
			gt[i][j] = uint64(binary.LittleEndian.Uint32(gb[(i*K+j)*4:]))
		}
	}
	return queries, gt, nil
}

// memStatus returns VmRSS and VmHWM of this process in MB (0 where /proc is not available).
func memStatus() (rss, hwm float64) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != "VmRSS" && name != "VmHWM" {
			continue
		}
		kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(val), " kB"), 64)
		if err != nil {
			continue
		}
		if name == "VmRSS" {
			rss = kb / 1024
		} else {
			hwm = kb / 1024
		}
	}
	return rss, hwm
}
