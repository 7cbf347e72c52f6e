//go:build !race

package postingsbm25

const raceEnabled = false
