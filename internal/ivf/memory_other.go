//go:build !linux

package ivf

// availableMemory is unknown here: searches read their candidates' vectors as they score them.
func availableMemory() int64 { return 0 }
