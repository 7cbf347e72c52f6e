package indexer

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// A build reports its true counts per stage, in plain lines when not on a terminal.
func TestBuildProgressCounts(t *testing.T) {
	var log bytes.Buffer
	enc := &countingEncoder{dim: 32}
	sum, err := Build(context.Background(), Options{Dir: t.TempDir(), Inputs: []InputSpec{{Path: shared(t, enwiki)}},
		EmbedInline: true, Encoder: enc, HNSW: fastHNSW, Progress: &log})
	if err != nil {
		t.Fatal(err)
	}
	out := log.String()
	if strings.ContainsAny(out, "\r\x1b") {
		t.Errorf("progress off a terminal has carriage returns or escape codes: %q", out)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	last := lines[len(lines)-1]
	n := sum.Counts.Passages
	if n == 0 {
		t.Fatal("the sample built no passages")
	}
	for _, want := range []string{
		fmt.Sprintf("read %d documents (100%% of input)", sum.Counts.Documents),
		fmt.Sprintf("split %d passages, indexed %d (done)", n, n),
		fmt.Sprintf(", embedded %d (done)", n),
	} {
		if !strings.Contains(last, want) {
			t.Errorf("final progress line lacks %q:\n%s", want, last)
		}
	}
	// The final commit's repair pass of the graph reports how far it got: all of its nodes.
	if m := regexp.MustCompile(`, graph repair: checked (\d+) of (\d+) nodes with few in-links, linking and saving,`).FindStringSubmatch(last); m == nil || m[1] != m[2] || m[2] == "0" {
		t.Errorf("final progress line: want the graph repair's nodes, all checked:\n%s", last)
	}
}

// The ETA is the slowest stage's: the rest of the input, or the passages a stage still has to
// do at its own rate.
// The progress line counts in words: "read 1 document", never "read 1 docs".
func TestProgressLineCountsInWords(t *testing.T) {
	tests := []struct {
		docs, split int64
		want        string
	}{
		{1, 1, "read 1 document, split 1 passage, indexed "},
		{1, 4, "read 1 document, split 4 passages, indexed "},
		{300, 773, "read 300 documents, split 773 passages, indexed "},
		{0, 0, "read 0 documents, split 0 passages, indexed "},
	}
	for _, tc := range tests {
		p := newProgress(nil, 0, false)
		p.docs.Store(tc.docs)
		p.split.Store(tc.split)
		if got := p.line(time.Second); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%d documents, %d passages: %q, want it to start %q", tc.docs, tc.split, got, tc.want)
		}
	}
}

func TestProgressETA(t *testing.T) {
	tests := []struct {
		name                     string
		frac                     float64
		split, indexed, embedded int64
		dense                    bool
		want                     time.Duration
		ok                       bool
	}{
		// 10 s in, a quarter of the input read: reading needs 30 s more.
		{"reading is slowest", 0.25, 1000, 1000, 0, false, 30 * time.Second, true},
		// 4,000 passages expected; embedding did 100 in 10 s, so 3,900 more take 390 s.
		{"embedding is slowest", 0.25, 1000, 1000, 100, true, 390 * time.Second, true},
		// indexing did 500 of 4,000 in 10 s: 70 s more.
		{"indexing is slowest", 0.25, 1000, 500, 4000, true, 70 * time.Second, true},
		{"unknown input size", 0, 1000, 1000, 1000, true, 0, false},
		{"embedding not started", 0.5, 1000, 1000, 0, true, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newProgress(nil, 0, tc.dense)
			p.split.Store(tc.split)
			p.indexed.Store(tc.indexed)
			p.embedded.Store(tc.embedded)
			got, ok := p.eta(10*time.Second, tc.frac)
			if ok != tc.ok || (ok && (got-tc.want).Abs() > time.Millisecond) {
				t.Errorf("eta = %v, %v; want %v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

// The ETA and the rates follow the current pace over the last minute, not the average since
// the start: embedding ran at 10 passages/s for two minutes (a slow start), then at 50/s for
// one, arriving a chunk every 5 s; the ETA is the passages still to embed at 50/s, not at the
// 23/s average.
func TestProgressETAFollowsTheWindow(t *testing.T) {
	const totalBytes, totalPassages = 72000, 20000
	p := newProgress(nil, totalBytes, true)
	var embedded int64
	at := func(sec int) time.Duration { return time.Duration(sec) * time.Second }
	for sec := 0; sec <= 180; sec++ {
		if sec > 0 && sec%5 == 0 { // a chunk of embeddings every 5 s
			if sec <= 120 {
				embedded += 50 // 10/s
			} else {
				embedded += 250 // 50/s
			}
		}
		read := int64(200 * sec) // bytes: half the input at 180 s
		p.bytes.Store(read)
		p.split.Store(read * totalPassages / totalBytes)
		p.indexed.Store(read * totalPassages / totalBytes)
		p.embedded.Store(embedded)
		p.observe(at(sec))
	}
	// 1,200 + 3,000 = 4,200 embedded; 15,800 to go at 50/s: 316 s (reading needs 180 s).
	got, ok := p.eta(at(180), 0.5)
	if !ok || (got-316*time.Second).Abs() > 10*time.Second {
		t.Errorf("eta = %v, %v; want about 316s (the average rate would say %v)", got, ok,
			time.Duration(float64(totalPassages-embedded)/(float64(embedded)/180)*float64(time.Second)).Round(time.Second))
	}
	if l := p.line(at(180)); !strings.Contains(l, "embedded 4200 (50/s)") {
		t.Errorf("line %q: want the current rate, 50/s", l)
	}
}

// Once every passage is embedded, the graph's repair pass is what is left: the line counts its
// nodes with their rate over the last minute, or since the pass began (the window's older
// samples would make it look slow), and the ETA is the rest of them at that rate.
func TestProgressGraphRepair(t *testing.T) {
	p := newProgress(nil, 1, true)
	p.bytes.Store(1)
	p.split.Store(5000)
	p.indexed.Store(5000)
	p.embedded.Store(5000)
	p.inputsRead()
	at := func(sec int) time.Duration { return time.Duration(sec) * time.Second }
	for sec := 0; sec <= 100; sec++ {
		if sec == 40 {
			p.graphRepair(0, 9000)
		}
		if sec > 40 {
			p.graphRepair(30*(sec-40), 9000)   // 30 nodes/s from 40 s
			p.graphRepair(30*(sec-40)-5, 9000) // a goroutine's late report moves nothing back
		}
		p.observe(at(sec))
		if sec == 50 { // 300 checked in 10 s, 8,700 to go: 290 s at 30/s
			if got, ok := p.eta(at(sec), 1); !ok || got < 290*time.Second || got > 320*time.Second {
				t.Errorf("10 s into the pass: eta = %v, %v; want about 4m50s", got, ok)
			}
		}
	}
	// 1,800 checked; 7,200 to go at 30/s: 240 s.
	if got, ok := p.eta(at(100), 1); !ok || (got-240*time.Second).Abs() > time.Second {
		t.Errorf("eta = %v, %v; want 4m0s", got, ok)
	}
	if l := p.line(at(100)); !strings.Contains(l, "embedded 5000 (done), graph repair: checked 1800 of 9000 nodes with few in-links (30/s), 1m40s, ETA 4m0s") {
		t.Errorf("line %q: want the repair's count, rate and ETA", l)
	}
}
