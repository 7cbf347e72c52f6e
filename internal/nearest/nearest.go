// Package nearest names the word a mistyped one most likely meant: the one "did you mean"
// of Kairos, which the HTTP API (unknown JSON fields), the CLI (commands, flags, index
// locations) and a batch file's lines all ask, so that a typo gets the same answer
// everywhere.
package nearest

// Name returns the candidate nearest to word by edit distance, or "" when none is close: at
// most 2 edits, and fewer than half the candidate's length (so "k" does not suggest "q").
// Ties go to the candidate first in byte order, so the answer does not depend on the order
// of candidates.
func Name(word string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		d := Distance(word, c)
		if 2*d >= len(c) {
			continue
		}
		if d < bestD || d == bestD && c < best {
			best, bestD = c, d
		}
	}
	return best
}

// Distance is the optimal-string-alignment distance between a and b, in bytes: inserts,
// deletes, substitutions and swaps of neighbours, the usual typos ("txet", "serach").
func Distance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
