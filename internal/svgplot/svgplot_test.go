package svgplot

import (
	"bytes"
	"encoding/xml"
	"flag"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// wellFormed reports the first XML error of an SVG document, nil when it parses whole.
func wellFormed(b []byte) error {
	d := xml.NewDecoder(bytes.NewReader(b))
	for {
		if _, err := d.Token(); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
	}
}

// TestPageGolden holds a page of a line chart and a bar chart (a missing bar, a name to escape)
// to testdata, and to well-formed XML.
func TestPageGolden(t *testing.T) {
	var b bytes.Buffer
	err := Page(&b, "runs <compared> & plotted",
		LineChart{Title: "rate", XLabel: "s", YLabel: "passages/s", Series: []Series{
			{Name: "1M", X: []float64{5, 10, 15, 20}, Y: []float64{15000, 16000, 9000, 15500}},
			{Name: "10M", X: []float64{5, 10, 15}, Y: []float64{14000, 14500, 14200}},
		}},
		BarChart{Title: "latency", YLabel: "ms", Groups: []string{"1M kairos", "1M lucene"}, Series: []Series{
			{Name: "p50", Y: []float64{4.5, 8.1}},
			{Name: "p99", Y: []float64{24, math.NaN()}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	if err := wellFormed(b.Bytes()); err != nil {
		t.Fatalf("not well-formed XML: %v", err)
	}
	if strings.Count(b.String(), "<polyline") != 2 || strings.Count(b.String(), "<rect x=") != 3+4 { // 3 bars, 4 legend swatches
		t.Errorf("lines or bars miscounted:\n%s", b.String())
	}
	path := filepath.Join("testdata", "page.svg")
	if *update {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("%s differs (run with -update after checking the picture)", path)
	}
}

func TestNiceStepAndTicks(t *testing.T) {
	for _, tt := range []struct{ in, want float64 }{{0.7, 1}, {1.3, 2}, {3, 5}, {7, 10}, {1200, 2000}, {0, 1}} {
		if got := niceStep(tt.in); got != tt.want {
			t.Errorf("niceStep(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
	for v, want := range map[float64]string{1200: "1.2k", 3e6: "3M", 0.5: "0.5", 15000: "15k"} {
		if got := formatTick(v); got != want {
			t.Errorf("formatTick(%v) = %q, want %q", v, got, want)
		}
	}
}
