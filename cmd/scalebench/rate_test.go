package scalebench

import (
	"io"
	"math"
	"strconv"
	"testing"
	"time"
)

// TestRateWatchFindsTheSlowestStretch feeds progress lines as kairos index writes them (in
// pieces, with a stall in the middle) and checks the slowest 30-second rate.
func TestRateWatchFindsTheSlowestStretch(t *testing.T) {
	t0 := time.Unix(0, 0)
	for _, tc := range []struct {
		name   string
		counts []int // one progress line every 5 s
		want   float64
	}{
		{"steady", []int{0, 5000, 10000, 15000, 20000, 25000, 30000, 35000, 40000}, 1000},
		// 6 lines of 1,000 passages each from 15 s to 45 s: 6,000 in 30 s
		{"a stall", []int{0, 10000, 20000, 30000, 31000, 32000, 33000, 34000, 35000, 36000, 46000, 56000}, 200},
		{"shorter than the window", []int{0, 1000, 2000}, 0},
		// repeats are dropped: 20,000 passages at 30 s is the slowest
		{"repeated counts ignored", []int{0, 0, 5000, 5000, 10000, 15000, 20000, 25000, 30000}, 20000.0 / 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			i := 0
			w := &rateWatch{w: io.Discard, now: func() time.Time { return t0.Add(time.Duration(5*i) * time.Second) }}
			for ; i < len(tc.counts); i++ {
				line := "read 1 docs (1% of input), split 9 passages, indexed " + strconv.Itoa(tc.counts[i]) + " (1/s), 5s, ETA 1s\n"
				w.Write([]byte(line[:10])) // a line may come in pieces
				w.Write([]byte(line[10:]))
			}
			if got := w.slowest(30 * time.Second); math.Abs(got-tc.want) > 1e-9 {
				t.Fatalf("slowest = %v, want %v", got, tc.want)
			}
		})
	}
}
