package scalebench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"

	"github.com/kairos-rag/kairos/internal/childrss"
	"github.com/kairos-rag/kairos/internal/dirsize"
)

// AnchorResult is what one anchor engine (Xapian, Lucene) measured on a collection: the child
// prints the build and query figures; peak RSS and index bytes are taken here, as for Kairos.
type AnchorResult struct {
	Version    string  `json:"version,omitempty"`
	Passages   int     `json:"passages"`
	BuildS     float64 `json:"build_s"` // indexing and commit, timed inside the child (no start-up)
	BuildPerS  float64 `json:"build_passages_per_s"`
	PeakRSS    int64   `json:"peak_rss_bytes"` // the child's ru_maxrss: build and queries
	IndexBytes int64   `json:"index_bytes"`
	Segments   int     `json:"segments,omitempty"` // Lucene: segments searched
	P50MS      float64 `json:"p50_ms"`
	P99MS      float64 `json:"p99_ms"`
	MeanMS     float64 `json:"mean_ms"`
	Queries    int     `json:"queries"`
	Empty      int     `json:"empty"`
	// Lucene: the indexing threads, and the same queries on the index merged into one segment
	// (forceMerge(1), MergeS on its own), as a served index would be.
	Threads        int     `json:"threads,omitempty"`
	MergeS         float64 `json:"merge_s,omitempty"`
	MergedSegments int     `json:"merged_segments,omitempty"`
	MergedP50MS    float64 `json:"merged_p50_ms,omitempty"`
	MergedP99MS    float64 `json:"merged_p99_ms,omitempty"`
	MergedMeanMS   float64 `json:"merged_mean_ms,omitempty"`
}

// runAnchor runs an anchor child that builds into index and prints one JSON object, and adds
// the child's peak RSS (getrusage of the waited-for child, as buildIndex) and the index's size.
func runAnchor(ctx context.Context, name, index string, progress io.Writer, argv ...string) (*AnchorResult, error) {
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = &out, progress
	peak, err := childrss.Run(cmd)
	if err != nil {
		return nil, fmt.Errorf("%s anchor: %w", name, err)
	}
	var r AnchorResult
	if err := json.Unmarshal(bytes.TrimSpace(out.Bytes()), &r); err != nil {
		return nil, fmt.Errorf("%s anchor output %q: %w", name, out.String(), err)
	}
	r.PeakRSS = peak
	if r.BuildS > 0 {
		r.BuildPerS = float64(r.Passages) / r.BuildS
	}
	if r.IndexBytes, err = dirsize.Bytes(index); err != nil {
		return nil, fmt.Errorf("%s anchor index: %w", name, err)
	}
	return &r, nil
}
