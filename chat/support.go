package chat

import (
	"regexp"
	"strings"
)

// A summary bullet is the LLM's restatement of one retrieved passage. Nothing downstream checks
// it again: the draft prompt lists it under "Verified facts". So a bullet is kept only when the
// passage it came from supports it lexically: every number in it appears in the passage, and
// most of its content words do. This is cheap and crude on purpose; it catches a bullet that
// carries words from somewhere else (the user's own assertion, the model's memory), not a
// subtle misreading. TestSummarySupportTable measures it on faithful and laundered bullets.

// MinBulletSupport is the share of a bullet's content words that must occur in its passage.
const MinBulletSupport = 0.75

var numberRe = regexp.MustCompile(`\d+(?:[.,]\d+)*`)

// stopwords are function words, which say nothing about whether a passage supports a sentence.
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the and or but nor so yet of in on at to for from by with
		without into onto over under about above below after before during between among through
		is are was were be been being am has have had having do does did done will would shall
		should can could may might must it its it's this that these those there here he she they
		them his her hers their theirs him we us our you your i me my mine as than then also too
		very which who whom whose what when where why how not no all any both each few more most
		other some such only own same just up down out off again further once while if because
		until s known called one`) {
		m[w] = true
	}
	return m
}()

// contentWords returns the words of s that carry content, possessives stripped.
func contentWords(s string) []string {
	var out []string
	for _, w := range Words(s) {
		w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "'")
		w = strings.Trim(w, "'")
		if len(w) < 3 && !strings.ContainsAny(w, "0123456789") || stopwords[w] {
			continue
		}
		out = append(out, w)
	}
	return out
}

// sameStem reports whether two words share a prefix long enough to be forms of one word
// ("discovered", "discovery"; "deteriorate", "deteriorating").
func sameStem(a, b string) bool {
	if a == b {
		return true
	}
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n >= max(4, min(len(a), len(b))-3)
}

// bulletSupport returns the share of the bullet's content words found in the passage, and
// whether the passage supports the bullet: every number of the bullet is in the passage and the
// share is at least MinBulletSupport. A bullet with no content word is not supported.
func bulletSupport(bullet, passage string) (float64, bool) {
	nums := map[string]bool{}
	for _, n := range numberRe.FindAllString(passage, -1) {
		nums[strings.ReplaceAll(n, ",", "")] = true
	}
	for _, n := range numberRe.FindAllString(bullet, -1) {
		if !nums[strings.ReplaceAll(n, ",", "")] {
			return 0, false
		}
	}
	words := contentWords(bullet)
	if len(words) == 0 {
		return 0, false
	}
	pw := contentWords(passage)
	found := 0
	for _, w := range words {
		for _, p := range pw {
			if sameStem(w, p) {
				found++
				break
			}
		}
	}
	share := float64(found) / float64(len(words))
	return share, share >= MinBulletSupport
}
