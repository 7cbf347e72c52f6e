// Package svgplot draws the small charts Kairos's commands write (kairos bench scale --plot,
// kairos bench ann --plot, kairos eval --plot): line charts and grouped bar charts as standalone SVG files, with no
// script, no external font or style sheet and nothing fetched, so that any browser or image
// viewer shows them and a diff of two runs' files is readable.
package svgplot

import (
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"strings"
)

// Series is one named line of a line chart, or one named bar of each group of a bar chart.
type Series struct {
	Name string
	X, Y []float64 // line charts: the points; bar charts: Y alone, one value per group
}

// LineChart is a chart of lines over a shared x axis.
type LineChart struct {
	Title, XLabel, YLabel string
	Series                []Series
	// LogX draws the x axis on a logarithmic scale (every x must be positive), ticked at
	// powers of ten, and at 2 and 5 times them when the data spans four decades or fewer:
	// the scale of query rates, which differ between engines by orders of magnitude.
	LogX bool
	// Markers marks every point with a shape as well as the line's colour: a circle, square,
	// triangle or diamond, so that more series than colours stay apart, in print too.
	Markers bool
}

// BarChart is a chart of groups of bars, one bar per series in each group.
type BarChart struct {
	Title, YLabel string
	Groups        []string // the group labels along the x axis
	Series        []Series
}

// Chart is what Page lays out: a LineChart or a BarChart.
type Chart interface {
	draw(b *strings.Builder, x, y float64)
}

// Chart sizes: each chart is a panel of the page, one under another.
const (
	panelW, panelH = 760.0, 300.0
	marginL        = 70.0
	marginR        = 170.0 // the legend
	marginT        = 34.0
	marginB        = 46.0
)

// palette are the series' colours, distinct in print and for the common colour blindnesses
// (Okabe and Ito's).
var palette = []string{"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"}

// titleChars is about how many characters of the 16-point bold title fit across a page: a
// longer title (kairos bench ann's names the model's folder) is wrapped, not cut off.
const titleChars = 88

// Page writes the charts one under another as one SVG document, with a title on top, wrapped
// at spaces onto as many lines as it needs.
func Page(w io.Writer, title string, charts ...Chart) error {
	var b strings.Builder
	lines := wrap(title, titleChars)
	top := 40 + 20*float64(len(lines)-1)
	h := top + float64(len(charts))*(panelH+20)
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`+"\n",
		panelW, h, panelW, h)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	for i, l := range lines {
		fmt.Fprintf(&b, `<text x="%.0f" y="%d" font-size="16" font-weight="bold">%s</text>`+"\n", marginL, 24+20*i, esc(l))
	}
	for i, c := range charts {
		c.draw(&b, 0, top+float64(i)*(panelH+20))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func esc(s string) string { return html.EscapeString(s) }

// wrap cuts s at spaces into lines of at most n characters (a longer word stays whole).
func wrap(s string, n int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		if line != "" && len(line)+1+len(w) > n {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return append(lines, line)
}

// axis is a linear (or logarithmic) scale from data to pixels with round tick values.
type axis struct {
	lo, hi     float64
	p0, p1     float64
	ticks      []float64
	tickFormat func(float64) string
	log        bool
}

func newAxis(lo, hi, p0, p1 float64) axis {
	if lo == hi {
		hi = lo + 1
	}
	step := niceStep((hi - lo) / 5)
	lo = math.Floor(lo/step) * step
	hi = math.Ceil(hi/step) * step
	a := axis{lo: lo, hi: hi, p0: p0, p1: p1, tickFormat: formatTick}
	for v := lo; v <= hi+step/2; v += step {
		a.ticks = append(a.ticks, v)
	}
	return a
}

func (a axis) at(v float64) float64 {
	if a.log {
		return a.p0 + (math.Log10(v)-math.Log10(a.lo))/(math.Log10(a.hi)-math.Log10(a.lo))*(a.p1-a.p0)
	}
	return a.p0 + (v-a.lo)/(a.hi-a.lo)*(a.p1-a.p0)
}

// newLogAxis is a logarithmic scale over whole decades around lo..hi (both positive).
func newLogAxis(lo, hi, p0, p1 float64) axis {
	d0, d1 := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if d1 <= d0 {
		d1 = d0 + 1
	}
	a := axis{lo: math.Pow(10, d0), hi: math.Pow(10, d1), p0: p0, p1: p1, tickFormat: formatTick, log: true}
	steps := []float64{1}
	if d1-d0 <= 4 {
		steps = []float64{1, 2, 5}
	}
	for d := d0; d <= d1; d++ {
		for _, m := range steps {
			if v := m * math.Pow(10, d); v <= a.hi*1.0001 {
				a.ticks = append(a.ticks, v)
			}
		}
	}
	return a
}

// niceStep rounds a step up to 1, 2 or 5 times a power of ten.
func niceStep(s float64) float64 {
	if s <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(s)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= s {
			return m * p
		}
	}
	return 10 * p
}

// formatTick writes a tick value shortly: 1200 as 1.2k, 3000000 as 3M.
func formatTick(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e6:
		return strconv.FormatFloat(v/1e6, 'g', 3, 64) + "M"
	case a >= 1e3:
		return strconv.FormatFloat(v/1e3, 'g', 3, 64) + "k"
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// frame draws a panel's title, axes, grid and labels.
func frame(b *strings.Builder, x, y float64, title, xLabel, yLabel string, ya axis) {
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" font-size="13" font-weight="bold">%s</text>`+"\n", x+marginL, y+18, esc(title))
	for _, t := range ya.ticks {
		py := ya.at(t)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", x+marginL, py, x+panelW-marginR, py)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", x+marginL-6, py+4, esc(ya.tickFormat(t)))
	}
	fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`+"\n", x+marginL, y+marginT, x+marginL, y+panelH-marginB)
	fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`+"\n", x+marginL, y+panelH-marginB, x+panelW-marginR, y+panelH-marginB)
	if xLabel != "" {
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", x+(marginL+panelW-marginR)/2, y+panelH-8, esc(xLabel))
	}
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" transform="rotate(-90 %.1f %.1f)">%s</text>`+"\n",
		x+16, y+(marginT+panelH-marginB)/2, x+16, y+(marginT+panelH-marginB)/2, esc(yLabel))
}

// legend draws the series' names beside the panel, each with its colour (and its marker).
func legend(b *strings.Builder, x, y float64, series []Series, markers bool) {
	for i, s := range series {
		ly := y + marginT + 8 + float64(i)*18
		if markers {
			marker(b, i, x+panelW-marginR+18, ly-4)
		} else {
			fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="12" height="12" fill="%s"/>`+"\n", x+panelW-marginR+12, ly-10, palette[i%len(palette)])
		}
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f">%s</text>`+"\n", x+panelW-marginR+30, ly, esc(s.Name))
	}
}

// marker draws series i's shape centred on (cx, cy): the shape steps on by one each time the
// colours come round again, so that series i and i+len(palette) differ.
func marker(b *strings.Builder, i int, cx, cy float64) {
	c := palette[i%len(palette)]
	const r = 4.0
	switch (i + i/len(palette)) % 4 {
	case 0:
		fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="%.1f" fill="%s"/>`+"\n", cx, cy, r, c)
	case 1:
		fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`+"\n", cx-r, cy-r, 2*r, 2*r, c)
	case 2:
		fmt.Fprintf(b, `<polygon points="%.1f,%.1f %.1f,%.1f %.1f,%.1f" fill="%s"/>`+"\n", cx, cy-r-1, cx+r+1, cy+r, cx-r-1, cy+r, c)
	default:
		fmt.Fprintf(b, `<polygon points="%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f" fill="%s"/>`+"\n", cx, cy-r-1, cx+r+1, cy, cx, cy+r+1, cx-r-1, cy, c)
	}
}

func (c LineChart) draw(b *strings.Builder, x, y float64) {
	xlo, xhi, ylo, yhi := math.Inf(1), math.Inf(-1), 0.0, math.Inf(-1)
	for _, s := range c.Series {
		for i := range s.X {
			xlo, xhi = math.Min(xlo, s.X[i]), math.Max(xhi, s.X[i])
			ylo, yhi = math.Min(ylo, s.Y[i]), math.Max(yhi, s.Y[i])
		}
	}
	if math.IsInf(xlo, 0) {
		xlo, xhi, yhi = 0, 1, 1
		if c.LogX {
			xlo, xhi = 1, 10
		}
	}
	xa := newAxis(xlo, xhi, x+marginL, x+panelW-marginR)
	if c.LogX {
		xa = newLogAxis(xlo, xhi, x+marginL, x+panelW-marginR)
	}
	ya := newAxis(ylo, yhi, y+panelH-marginB, y+marginT)
	frame(b, x, y, c.Title, c.XLabel, c.YLabel, ya)
	for _, t := range xa.ticks {
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", xa.at(t), y+panelH-marginB+16, esc(xa.tickFormat(t)))
	}
	for i, s := range c.Series {
		var pts []string
		for j := range s.X {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", xa.at(s.X[j]), ya.at(s.Y[j])))
		}
		fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", palette[i%len(palette)], strings.Join(pts, " "))
		if c.Markers {
			for j := range s.X {
				marker(b, i, xa.at(s.X[j]), ya.at(s.Y[j]))
			}
		}
	}
	legend(b, x, y, c.Series, c.Markers)
}

func (c BarChart) draw(b *strings.Builder, x, y float64) {
	yhi := 0.0
	for _, s := range c.Series {
		for _, v := range s.Y {
			if !math.IsNaN(v) {
				yhi = math.Max(yhi, v)
			}
		}
	}
	ya := newAxis(0, yhi, y+panelH-marginB, y+marginT)
	frame(b, x, y, c.Title, "", c.YLabel, ya)
	if len(c.Groups) == 0 || len(c.Series) == 0 {
		return
	}
	gw := (panelW - marginL - marginR) / float64(len(c.Groups))
	bw := gw * 0.8 / float64(len(c.Series))
	for g, name := range c.Groups {
		gx := x + marginL + float64(g)*gw
		groupLabel(b, gx+gw/2, y+panelH-marginB+16, name)
		for i, s := range c.Series {
			if g >= len(s.Y) || math.IsNaN(s.Y[g]) {
				continue // this series has no bar in this group
			}
			top := ya.at(s.Y[g])
			fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s: %s</title></rect>`+"\n",
				gx+gw*0.1+float64(i)*bw, top, bw*0.92, y+panelH-marginB-top, palette[i%len(palette)],
				esc(s.Name), strconv.FormatFloat(s.Y[g], 'g', 4, 64))
		}
	}
	legend(b, x, y, c.Series, false)
}

// groupLabel writes a bar group's label one word per line, so that labels of narrow groups
// ("1M lucene merged") stand in their own column instead of running into their neighbours.
func groupLabel(b *strings.Builder, cx, y float64, name string) {
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle">`, cx, y)
	for i, w := range strings.Fields(name) {
		dy := "0"
		if i > 0 {
			dy = "1.1em"
		}
		fmt.Fprintf(b, `<tspan x="%.1f" dy="%s">%s</tspan>`, cx, dy, esc(w))
	}
	b.WriteString("</text>\n")
}
