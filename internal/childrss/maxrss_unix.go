//go:build unix && !darwin

package childrss

import "syscall"

// maxRSS is a waited-for child's ru_maxrss in bytes: Linux and the BSDs give it in kilobytes.
func maxRSS(usage any) int64 {
	if ru, ok := usage.(*syscall.Rusage); ok {
		return int64(ru.Maxrss) * 1024
	}
	return 0
}
