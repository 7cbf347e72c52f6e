package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/kairos-rag/kairos/internal/atomicfile"
	"github.com/kairos-rag/kairos/search"
)

// rankedDoc is one line of a run: a document (or passage, for passage-level judgements) at
// the rank and with the score of its best passage.
type rankedDoc struct {
	ID    string  `json:"id"`
	Rank  int     `json:"rank"`
	Score float64 `json:"score"`
}

// rankedDocs groups hits (best first) by document, as search.RankDocuments does, keeping each
// document's best score.
func rankedDocs(hits []search.Hit, passages bool) []rankedDoc {
	ids := search.RankDocuments(hits, passages)
	best := make(map[string]float64, len(ids))
	for _, h := range hits {
		id := h.DocID
		if passages {
			id = h.ID
		}
		if _, ok := best[id]; !ok {
			best[id] = h.Score
		}
	}
	out := make([]rankedDoc, len(ids))
	for i, id := range ids {
		out[i] = rankedDoc{ID: id, Rank: i + 1, Score: best[id]}
	}
	return out
}

// runWriter collects the rankings of an eval run in query order.
type runWriter struct {
	qids []string
	docs [][]rankedDoc
}

func (r *runWriter) add(qid string, docs []rankedDoc) {
	r.qids = append(r.qids, qid)
	r.docs = append(r.docs, docs)
}

// write saves the run atomically at path ("-": stdout) in format trec or jsonl. TREC lines are
// "qid Q0 docid rank score tag"; trec_eval orders by score, and Kairos's scores never increase
// down a ranking (reranked ones included), so its order is the one evaluated.
func (r *runWriter) write(path, format, tag string, stdout io.Writer) error {
	return atomicfile.Write(path, atomicfile.Options{Stdout: stdout}, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		for i, qid := range r.qids {
			if format == "jsonl" {
				if err := enc.Encode(struct {
					QID  string      `json:"qid"`
					Hits []rankedDoc `json:"hits"`
				}{qid, r.docs[i]}); err != nil {
					return err
				}
				continue
			}
			if strings.ContainsAny(qid, " \t") {
				return fmt.Errorf("query id %q has white space: not representable in a TREC run", qid)
			}
			for _, d := range r.docs[i] {
				if strings.ContainsAny(d.ID, " \t") {
					return fmt.Errorf("query %s: document id %q has white space: not representable in a TREC run", qid, d.ID)
				}
				// Full precision: rounding could tie two scores, and trec_eval breaks ties by
				// document id, not by Kairos's order.
				if _, err := fmt.Fprintf(w, "%s Q0 %s %d %s %s\n", qid, d.ID, d.Rank, strconv.FormatFloat(d.Score, 'g', -1, 64), tag); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
