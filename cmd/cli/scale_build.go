package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// childBuild is what one `kairos index` child process cost.
type childBuild struct {
	Passages int           // as the index reports them
	Wall     time.Duration // process start to exit
	PeakRSS  int64         // bytes: the child's ru_maxrss (its VmHWM at exit)
}

// buildIndex runs `kairos index` as a child process, so that its peak resident memory is the
// build's own (getrusage of the waited-for child) and not this process's, which holds the
// queries and, later, the opened index. The child's progress lines go to progress.
func buildIndex(ctx context.Context, kairos string, args []string, progress io.Writer) (childBuild, error) {
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, kairos, append([]string{"index"}, args...)...)
	cmd.Stdout = &out
	cmd.Stderr = progress
	start := time.Now()
	err := cmd.Run()
	b := childBuild{Wall: time.Since(start)}
	if err != nil {
		return b, fmt.Errorf("%s index %s: %w\n%s", kairos, strings.Join(args, " "), err, out.String())
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		b.PeakRSS = int64(ru.Maxrss) * 1024 // kilobytes on Linux
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

// dirBytes is the size of the regular files under dir.
func dirBytes(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		n += info.Size()
		return nil
	})
	return n, err
}
