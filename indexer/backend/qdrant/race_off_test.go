//go:build !race

package qdrant

const raceEnabled = false
