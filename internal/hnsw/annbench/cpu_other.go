//go:build !linux

package annbench

import "time"

// threadCPU is not measured outside Linux: CPU-time QPS is then reported as 0.
func threadCPU() time.Duration { return 0 }
