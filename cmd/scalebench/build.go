package scalebench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"

	"github.com/kairos-rag/kairos/internal/childrss"
	"strconv"
	"strings"
	"time"
)

// childBuild is what one `kairos index` child process cost.
type childBuild struct {
	Passages int           // as the index reports them
	Wall     time.Duration // process start to exit
	PeakRSS  int64         // bytes: the child's ru_maxrss (its VmHWM at exit)
	// SlowestRate is the passages indexed per second over the slowest stretch of
	// rateWindow while passages were being indexed (0: too short a build to tell), and
	// Tail the time from the last passage indexed to the exit (final merge and commit).
	SlowestRate float64
	Tail        time.Duration
	// Progress are the progress lines' counts with their time since the start.
	Progress []ProgressPoint
}

// rateWindow is the stretch over which bench scale watches a build's rate: long enough to
// smooth the progress lines' 5-second steps, short enough to catch a collector or a merge
// that stalls the build (issue 28: a build whose rate fell to a tenth of its start).
const rateWindow = 30 * time.Second

// rateWatch reads a build's progress lines ("... indexed N (...") as they pass to the
// progress writer and keeps when each count was reached.
type rateWatch struct {
	w       io.Writer
	now     func() time.Time
	partial []byte
	times   []time.Time
	counts  []int
}

func (r *rateWatch) Write(p []byte) (int, error) {
	r.partial = append(r.partial, p...)
	for {
		i := bytes.IndexAny(r.partial, "\r\n")
		if i < 0 {
			break
		}
		r.line(r.partial[:i])
		r.partial = r.partial[i+1:]
	}
	return r.w.Write(p)
}

func (r *rateWatch) line(l []byte) {
	_, after, ok := bytes.Cut(l, []byte("indexed "))
	if !ok {
		return
	}
	f := bytes.Fields(after)
	if len(f) == 0 {
		return
	}
	n, err := strconv.Atoi(string(f[0]))
	if err != nil || (len(r.counts) > 0 && n <= r.counts[len(r.counts)-1]) {
		return
	}
	r.times, r.counts = append(r.times, r.now()), append(r.counts, n)
}

// slowest returns the lowest rate over any stretch of at least window between two progress
// lines (0 when the lines span less than a window).
func (r *rateWatch) slowest(window time.Duration) float64 {
	low, i := 0.0, 0
	for j := range r.times {
		for i+1 < j && r.times[j].Sub(r.times[i+1]) >= window {
			i++
		}
		if d := r.times[j].Sub(r.times[i]); d >= window {
			rate := float64(r.counts[j]-r.counts[i]) / d.Seconds()
			if low == 0 || rate < low {
				low = rate
			}
		}
	}
	return low
}

// buildIndex runs `kairos index` as a child process, so that its peak resident memory is the
// build's own (getrusage of the waited-for child, childrss.Run) and not this process's, which holds the
// queries and, later, the opened index. The child's progress lines go to progress.
func buildIndex(ctx context.Context, kairos string, args []string, progress io.Writer) (childBuild, error) {
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, kairos, append([]string{"index"}, args...)...)
	cmd.Stdout = &out
	watch := &rateWatch{w: progress, now: time.Now}
	cmd.Stderr = watch
	start := time.Now()
	peak, err := childrss.Run(cmd)
	end := time.Now()
	b := childBuild{Wall: end.Sub(start), SlowestRate: watch.slowest(rateWindow), PeakRSS: peak}
	if n := len(watch.times); n > 0 {
		b.Tail = end.Sub(watch.times[n-1])
	}
	for i, t := range watch.times {
		b.Progress = append(b.Progress, ProgressPoint{S: t.Sub(start).Seconds(), Passages: watch.counts[i]})
	}
	if err != nil {
		return b, fmt.Errorf("%s index %s: %w\n%s", kairos, strings.Join(args, " "), err, out.String())
	}
	n, err := summaryPassages(out.String())
	if err != nil {
		return b, fmt.Errorf("%s index: %w", kairos, err)
	}
	b.Passages = n
	return b, nil
}

// summaryPassages reads the "passages N" line of kairos index's summary.
func summaryPassages(summary string) (int, error) {
	for i, line := range strings.Split(summary, "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "passages" {
			n, err := strconv.Atoi(f[1])
			if err != nil || n < 0 {
				return 0, fmt.Errorf("summary line %d: %q is not a passage count", i+1, line)
			}
			return n, nil
		}
	}
	return 0, fmt.Errorf("summary has no \"passages\" line:\n%s", summary)
}
