package search

import (
	"strconv"
	"strings"
)

// Ties between equal scores are broken by passage key, so that identical inputs always rank
// the same: left to bleve, a tie follows its internal document numbers, which depend on
// batch and segment layout (1 of 6 identical SciFact builds ranked differently). bleve sorts
// the key by its _id string, so Kairos compares keys the same way everywhere: as decimal
// strings ("10" before "9"). What matters is that one order is used at the cut and after it.

// keyLess reports whether passage key a sorts before b among equal scores.
func keyLess(a, b uint32) bool {
	return strings.Compare(strconv.FormatUint(uint64(a), 10), strconv.FormatUint(uint64(b), 10)) < 0
}

// byScoreThenKey orders candidates best first, ties by passage key.
func byScoreThenKey(cs []candidate) func(i, j int) bool {
	return func(i, j int) bool {
		if cs[i].score != cs[j].score {
			return cs[i].score > cs[j].score
		}
		return keyLess(cs[i].key, cs[j].key)
	}
}
