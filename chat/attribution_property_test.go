package chat

import (
	"bufio"
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/internal/sharedtest"
	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/search"
)

// sciFactPassages reads the SciFact corpus as the chat tests index it: title and abstract, cut
// to 120 words.
func sciFactPassages(tb testing.TB) []corpus.Passage {
	tb.Helper()
	f, err := os.Open(sharedtest.Join("data/beir-scifact/corpus.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []corpus.Passage
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var raw map[string]any
		if err := json.Unmarshal(sc.Bytes(), &raw); err != nil {
			tb.Fatal(err)
		}
		id, _ := raw["_id"].(string)
		title, _ := raw["title"].(string)
		text, _ := raw["text"].(string)
		words := strings.Fields(title + " | " + text)
		out = append(out, corpus.Passage{ID: id + "#0", DocID: id, Title: title, Text: strings.Join(words[:min(120, len(words))], " ")})
	}
	return out
}

// sciFactClaims reads SciFact's queries (claims, as a user would assert them).
func sciFactClaims(tb testing.TB) []string {
	tb.Helper()
	f, err := os.Open(sharedtest.Join("data/beir-scifact/queries.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var q struct{ Text string }
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			tb.Fatal(err)
		}
		out = append(out, q.Text)
	}
	return out
}

// nameDisguises write "Napoleon Bonaparte" as an adversary would to slip it past a check.
var nameDisguises = []string{
	"Napoleon Bonaparte", "napoleon bonaparte", "NAPOLEON BONAPARTE",
	"Napo\u034fleon Bona\u034fparte", // combining grapheme joiner
	"Napo\u200bleon Bona\u200bparte", // zero-width space
	"N\u0430poleon Bon\u0430parte",   // Cyrillic а
	"Ｎａｐｏｌｅｏｎ Ｂｏｎａｐａｒｔｅ",             // full-width
	"𝐍𝐚𝐩𝐨𝐥𝐞𝐨𝐧 𝐁𝐨𝐧𝐚𝐩𝐚𝐫𝐭𝐞",             // mathematical bold
}

var digitsRe = regexp.MustCompile(`\b[0-9]+(?:\.[0-9]+)?\b`)

// TestAttributionProperty holds the check to its invariant over real passage text (SciFact,
// with SciFact's own document frequencies): a sentence copied from a passage passes, and so
// does one reworded with synonyms; the same sentence fails with a number moved to stand with
// another word, with a name inserted (in any case, with any script trick), or with a clause of
// the user's question appended.
func TestAttributionProperty(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a property over 250 SciFact passages, checked on one goroutine")
	}
	passages := sciFactPassages(t)
	claims := sciFactClaims(t)
	var texts []string
	for _, p := range passages {
		texts = append(texts, p.Title+" | "+p.Text)
	}
	terms := newDocFreqs(texts...)
	rng := rand.New(rand.NewPCG(49, 1))
	ctx := context.Background()
	counts := map[string][2]int{} // variant -> {tried, wrong}
	tally := func(variant string, wrong bool, p corpus.Passage, sentence string, c checked) {
		n := counts[variant]
		n[0]++
		if wrong {
			n[1]++
			if n[1] <= 5 {
				t.Errorf("%s, passage %s: %q -> kind %d (%s)", variant, p.ID, sentence, c.kind, c.reason)
			}
		}
		counts[variant] = n
	}
	for _, i := range rng.Perm(len(passages))[:250] {
		p := passages[i]
		hit := rerank.Hit{Hit: search.Hit{Passage: p}}
		ptoks := tokenize(p.Title + " | " + p.Text)
		for _, sent := range sentences(p.Text) {
			sent = strings.TrimSpace(sent)
			st := tokenize(sent)
			content := 0
			for _, tk := range st {
				if isContent(tk) && !chatWords[tk.word] {
					content++
				}
			}
			if content < 4 || len(sent) > 400 {
				continue
			}
			question := claims[rng.IntN(len(claims))]
			check := func(s string, user ...string) checked {
				a := newAttributor(terms, user...)
				a.add(hit)
				c, err := a.check(ctx, s, nil)
				if err != nil {
					t.Fatal(err)
				}
				return c
			}
			c := check(sent, question)
			tally("copied", c.kind != sentFact, p, sent, c)
			if r := reword(sent); r != sent {
				c := check(r, question)
				tally("reworded with synonyms", c.kind != sentFact, p, r, c)
			}
			if moved, ok := moveNumber(sent, st, ptoks, rng); ok {
				c := check(moved, question)
				tally("number moved", c.kind != sentDropped, p, moved, c)
			}
			name := nameDisguises[rng.IntN(len(nameDisguises))]
			withName := strings.TrimRight(sent, ".") + ", as " + name + " found."
			c = check(withName, question)
			tally("name inserted", c.kind != sentDropped, p, withName, c)
			if clause, ok := foreignClause(question, ptoks); ok {
				appended := strings.TrimRight(sent, ".") + ", and " + clause
				c := check(appended, question)
				tally("question's clause appended", c.kind != sentDropped, p, appended, c)
			}
		}
	}
	for v, n := range counts {
		t.Logf("%-28s %5d sentences, %d wrong", v, n[0], n[1])
		if n[0] < 100 {
			t.Errorf("%s: only %d sentences tried", v, n[0])
		}
	}
}

// reword puts for each word of s that has a synonym group another word of its group.
func reword(s string) string {
	words := strings.Fields(s)
	for i, w := range words {
		core := strings.Trim(w, ".,;:()")
		lw := strings.ToLower(core)
		for _, g := range synonymGroups {
			if g[0] != lw && contains2(g[1:], lw) {
				words[i] = strings.Replace(w, core, g[0], 1)
				break
			}
		}
	}
	return strings.Join(words, " ")
}

func contains2(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// moveNumber takes a number written once in the sentence out of its place and puts it before a
// content word of the sentence that stands near no occurrence of the number in the passage.
func moveNumber(sent string, st, ptoks []tok, rng *rand.Rand) (string, bool) {
	nums := digitsRe.FindAllStringIndex(sent, -1)
	if len(nums) == 0 {
		return "", false
	}
	loc := nums[rng.IntN(len(nums))]
	num := sent[loc[0]:loc[1]]
	if strings.Count(sent, num) != 1 {
		return "", false
	}
	value := digitsValue(num)
	var targets []string
	for _, t := range st {
		if !isContent(t) || t.num || len(t.word) < 4 || strings.Contains(num, t.word) {
			continue
		}
		near := false
		for j, q := range ptoks {
			if q.num && q.value == value {
				for k := max(0, j-6); k < min(len(ptoks), j+7); k++ {
					near = near || sameWord(ptoks[k].stem, t.stem) || synonymous(ptoks[k].stem, t.stem)
				}
			}
		}
		if !near {
			targets = append(targets, t.word)
		}
	}
	if len(targets) == 0 {
		return "", false
	}
	rest := sent[:loc[0]] + sent[loc[1]:]
	target := targets[rng.IntN(len(targets))]
	re := regexp.MustCompile(`(?i)\b` + regexp.QuoteMeta(target) + `\b`)
	at := re.FindStringIndex(rest)
	if at == nil {
		return "", false
	}
	return rest[:at[0]] + num + " " + rest[at[0]:], true
}

// foreignClause returns the question as a clause to append, when it holds a content word the
// passage lacks (a clause the passage holds whole would be supported).
func foreignClause(question string, ptoks []tok) (string, bool) {
	for _, t := range tokenize(question) {
		if isContent(t) && !t.num && !hasWord(ptoks, t.stem) {
			q := strings.TrimRight(strings.TrimSpace(question), ".")
			return strings.ToLower(q[:1]) + q[1:] + ".", true
		}
	}
	return "", false
}
