//go:build amd64 && !purego

package postings

// prefetchLines asks the processor to bring each 64-byte line of b into its caches, without
// waiting for any (PREFETCHT0).
//
//go:noescape
func prefetchLines(b []byte)
