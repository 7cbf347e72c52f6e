package childrss

import "syscall"

// maxRSS is a waited-for child's ru_maxrss in bytes: macOS gives it in bytes.
func maxRSS(usage any) int64 {
	if ru, ok := usage.(*syscall.Rusage); ok {
		return ru.Maxrss
	}
	return 0
}
