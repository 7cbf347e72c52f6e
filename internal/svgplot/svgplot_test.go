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

// TestPageWrapsTitle: a title wider than the page is wrapped at spaces onto more lines, the
// charts moved down by as much; a short one stays one line.
func TestPageWrapsTitle(t *testing.T) {
	for _, tc := range []struct {
		title  string
		lines  []string
		height string
	}{
		{"short", []string{"short"}, `height="360"`},
		{"kairos bench ann: 200,000 x 256 vectors, topic fixture (1000 topics) embedded with build/topic-model-1000, 2026-11-29",
			[]string{"kairos bench ann: 200,000 x 256 vectors, topic fixture (1000 topics) embedded with", "build/topic-model-1000, 2026-11-29"}, `height="380"`},
	} {
		var b bytes.Buffer
		if err := Page(&b, tc.title, LineChart{Title: "c", Series: []Series{{Name: "a", X: []float64{1, 2}, Y: []float64{1, 2}}}}); err != nil {
			t.Fatal(err)
		}
		if err := wellFormed(b.Bytes()); err != nil {
			t.Fatal(err)
		}
		for _, l := range tc.lines {
			if !strings.Contains(b.String(), `font-weight="bold">`+l+"</text>") {
				t.Errorf("%q: no title line %q in\n%s", tc.title, l, b.String())
			}
		}
		if !strings.Contains(b.String(), tc.height) {
			t.Errorf("%q: want %s", tc.title, tc.height)
		}
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

// TestLogMarkersGolden holds a line chart on a logarithmic x axis with marked points (the
// recall against queries-per-second plot of kairos bench ann --engines) to testdata: nine
// series, so that the ninth takes the first colour with the next shape.
func TestLogMarkersGolden(t *testing.T) {
	var series []Series
	for i := range 9 {
		f := float64(i + 1)
		series = append(series, Series{Name: "engine " + string(rune('a'+i)), X: []float64{90 * f, 900 * f, 9000 * f}, Y: []float64{0.95, 0.8 - f/50, 0.5 - f/40}})
	}
	var b bytes.Buffer
	if err := Page(&b, "engines", LineChart{Title: "recall", XLabel: "queries/s", YLabel: "recall@10", Series: series, LogX: true, Markers: true}); err != nil {
		t.Fatal(err)
	}
	if err := wellFormed(b.Bytes()); err != nil {
		t.Fatalf("not well-formed XML: %v", err)
	}
	// 27 points and 9 legend entries: shapes cycle circle, square, triangle, diamond, and the
	// ninth series (colour 0 again) is a square, not series 1's circle.
	s := b.String()
	if n := strings.Count(s, "<circle") + strings.Count(s, "<rect x=") + strings.Count(s, "<polygon"); n != 36 {
		t.Errorf("%d markers, want 36", n)
	}
	path := filepath.Join("testdata", "logmarkers.svg")
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

func TestLogAxis(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		ticks  []float64
	}{
		{90, 81000, []float64{10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000}},
		{3, 2e6, []float64{1, 10, 100, 1000, 1e4, 1e5, 1e6, 1e7}},
		{500, 500, []float64{100, 200, 500, 1000}},
	} {
		a := newLogAxis(tc.lo, tc.hi, 0, 100)
		if len(a.ticks) != len(tc.ticks) {
			t.Errorf("%v..%v: ticks %v, want %v", tc.lo, tc.hi, a.ticks, tc.ticks)
			continue
		}
		for i := range a.ticks {
			if math.Abs(a.ticks[i]-tc.ticks[i]) > 1e-9*tc.ticks[i] {
				t.Errorf("%v..%v: ticks %v, want %v", tc.lo, tc.hi, a.ticks, tc.ticks)
				break
			}
		}
		if a.at(a.lo) != 0 || math.Abs(a.at(a.hi)-100) > 1e-9 || math.Abs(a.at(math.Sqrt(a.lo*a.hi))-50) > 1e-9 {
			t.Errorf("%v..%v: the scale is not logarithmic", tc.lo, tc.hi)
		}
	}
}
