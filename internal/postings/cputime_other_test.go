//go:build !linux

package postings_test

import "time"

var cpuStart = time.Now()

// threadCPU falls back to wall time where the thread clock is not read.
func threadCPU() time.Duration { return time.Since(cpuStart) }

// processCPU falls back to wall time too.
func processCPU() time.Duration { return time.Since(cpuStart) }

// peakRSS is not read on this system.
func peakRSS() int64 { return 0 }
