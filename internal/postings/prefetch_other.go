//go:build !amd64 || purego

package postings

// prefetchLines is a hint that b will be read soon; without assembly it does nothing.
func prefetchLines(b []byte) {}
