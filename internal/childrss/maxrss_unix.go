//go:build unix

package childrss

import (
	"runtime"
	"syscall"
)

// maxRSS is a waited-for child's ru_maxrss in bytes: Linux and the BSDs give it in kilobytes,
// macOS in bytes.
func maxRSS(usage any) int64 {
	ru, ok := usage.(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss)
	}
	return int64(ru.Maxrss) * 1024
}
