package search

import (
	"context"
	"errors"
	"strings"

	"github.com/kairos-rag/kairos/corpus"
)

// isQuestionPassage reports whether p is the question-only passage of an FAQ entry
// ("Question | Question", made by the corpus FAQ readers after the answer's passages). The
// store keeps no passage kind, so it is recognised by its shape: a body that repeats the title,
// in the untitled section, after the document's first passage. A Wikipedia lead passage could
// only match if an article's later lead text were exactly its own title.
func isQuestionPassage(p corpus.Passage) bool {
	if p.Ordinal == 0 || p.Section != "" || p.Title == "" {
		return false
	}
	title, body, ok := strings.Cut(p.Text, " | ")
	return ok && body == title && title == p.Title
}

// entries turns the hits of FAQ question passages into the entry's first answer passage
// (question + answer), keeping the score: the match was on the question, but a chatbot needs
// the answer, which the question passage alone does not carry. An entry appears once: a question
// hit whose document is already among the hits is dropped, and so are the later hits of an
// entry kept through its question. It returns at most k hits, ranked 1..k; keys are the hits'
// passage keys.
func (ix *Index) entries(ctx context.Context, hits []Hit, keys []uint32, k int) ([]Hit, error) {
	out := hits[:0:0]
	seen := map[string]bool{}  // passage ids kept
	docs := map[string]bool{}  // documents kept
	entry := map[string]bool{} // documents kept through their question
	for i, h := range hits {
		if len(out) == k {
			break
		}
		if isQuestionPassage(h.Passage) {
			a, ok, err := ix.answerOf(ctx, h, keys[i])
			if err != nil {
				return nil, err
			}
			if ok {
				if docs[h.DocID] {
					continue
				}
				entry[h.DocID] = true
				h.Passage = a
			}
		} else if entry[h.DocID] {
			continue
		}
		if seen[h.ID] {
			continue
		}
		seen[h.ID], docs[h.DocID] = true, true
		h.Rank = len(out) + 1
		out = append(out, h)
	}
	return out, nil
}

// answerOf returns the first passage of h's document, the start of the entry's answer. The
// store writes a document's passages under consecutive keys, so it is looked for at the
// question's key minus its ordinal first, checked, and by id otherwise.
func (ix *Index) answerOf(ctx context.Context, h Hit, key uint32) (corpus.Passage, bool, error) {
	if key >= uint32(h.Ordinal) {
		p, err := ix.gen.Passages.Get(ctx, key-uint32(h.Ordinal))
		if err != nil {
			return corpus.Passage{}, false, err // the key is below a live one: only a failed read misses it
		}
		if p.DocID == h.DocID && p.Ordinal == 0 {
			return p, true, nil
		}
	}
	p, err := ix.Passage(ctx, h.DocID+"#0")
	if errors.Is(err, ErrNotFound) {
		return corpus.Passage{}, false, nil // no answer passage to show: keep the question
	}
	return p, err == nil, err
}

// final decodes the best candidates into at most req.K hits: FAQ question hits become their
// entries (entries), and hits scoring under req.MinScore are dropped. K candidates are decoded
// first, which is all a collection without FAQ entries needs (decoding a passage copies its
// text: under load, every passage decoded and thrown away is garbage); when entries fold some
// of them (an entry found both by its question and by its answer takes one place), twice as
// many, and so on. entries reads the hits in order and stops at K, so a longer prefix gives
// the same first hits: the result does not depend on where the doubling starts.
func (ix *Index) final(ctx context.Context, cands []candidate, req Request, single string) ([]Hit, error) {
	for n := min(len(cands), req.K); ; n = min(len(cands), 2*n) {
		hits, err := ix.hits(ctx, cands[:n], single)
		if err != nil {
			return nil, err
		}
		out := hits[:min(len(hits), req.K)]
		if !req.Passages {
			if out, err = ix.entries(ctx, hits, candidateKeys(cands[:n]), req.K); err != nil {
				return nil, err
			}
		}
		if len(out) == req.K || n == len(cands) {
			return aboveMin(out, req.MinScore), nil
		}
	}
}

// aboveMin keeps the hits scoring at least min (nil: all). Hits are best first.
func aboveMin(hits []Hit, min *float64) []Hit {
	if min == nil {
		return hits
	}
	for i, h := range hits {
		if h.Score < *min {
			return hits[:i]
		}
	}
	return hits
}
