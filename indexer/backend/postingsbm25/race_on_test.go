//go:build race

package postingsbm25

// raceEnabled: the race detector slows the tests several times, so the heaviest check fewer
// queries there (the plain pass checks them all).
const raceEnabled = true
