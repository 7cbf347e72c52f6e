//go:build race

package qdrant

// raceEnabled: under the race detector (`go test -race` of this package; make test's race
// pass leaves it out) bleve's analysis and the client run several times slower, so the
// SciFact comparisons take a subset; the ordinary pass covers all of it.
const raceEnabled = true
