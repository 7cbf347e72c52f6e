//go:build race

package indexer

// raceEnabled: the race detector slows the crash test's children several times over.
const raceEnabled = true
