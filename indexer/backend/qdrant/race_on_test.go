//go:build race

package qdrant

// raceEnabled: under the race detector (make test's second pass) bleve's analysis and the
// client run several times slower, so the SciFact comparisons take a subset; the ordinary
// pass covers all of it.
const raceEnabled = true
