package manifest

import "github.com/kairos-rag/kairos/indexer/backend"

// BM25Stats are the collection statistics BM25 scores with, recorded in the manifest so that
// scores depend only on the live passages.
//
// Why: bleve 2.5 computes BM25's average field length as ceil(C / N), where N is the document
// count and C the "field cardinality", which bleve takes as the sum over the index's segments
// of each segment's term-dictionary size (search/searcher/search_term.go, bm25ScoreMetrics;
// index/scorch/snapshot_index.go). That is a vocabulary size, not a length: on TimeQA it makes
// the average about 2 tokens instead of 23.4, so every passage looks ten times longer than
// average and short headings win. It also depends on how passages are split into segments.
// Kairos records the true total length instead, the number of tokens of the text field
// summed over the live passages, and passes it to bleve as C, so bleve's
// average is the mean number of tokens per live passage (rounded up to a whole token, which
// bleve's formula does). A passage's length, for bleve and here, is the number of tokens the
// English analyzer emits: after stop-word removal, one per remaining word (TextField.Analyze
// sets the field length to len(tokens); zap stores it as the posting's norm). The lexical
// engine scores with these (indexer/backend/blevebm25 hands them to bleve).
type BM25Stats struct {
	Docs int `json:"docs"` // live passages
	// Tokens is the total number of analysed tokens of the text field in the live passages.
	Tokens int64 `json:"tokens,omitempty"`
}

// AvgLength returns the mean number of tokens per live passage (0 for an empty index).
func (s *BM25Stats) AvgLength() float64 {
	if s.Docs == 0 || s.Tokens == 0 {
		return 0
	}
	return float64(s.Tokens) / float64(s.Docs)
}

// Collection returns s as the engines take it.
func (s *BM25Stats) Collection() backend.CollectionStats {
	return backend.CollectionStats{Docs: s.Docs, Tokens: s.Tokens}
}
