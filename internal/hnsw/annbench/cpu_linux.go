package annbench

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU is the CPU time (user + system) the calling OS thread has used; the caller must be
// locked to its thread. On a machine shared with other work, queries per CPU-second measure the
// search itself, where wall-clock QPS also measures the neighbours.
func threadCPU() time.Duration {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_THREAD, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
