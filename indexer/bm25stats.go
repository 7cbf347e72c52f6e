package indexer

import (
	"context"
	"fmt"

	"github.com/blevesearch/bleve/v2"
	bsearch "github.com/blevesearch/bleve/v2/search"
)

// BM25Stats are the collection statistics BM25 scores with, recorded in the manifest so that
// scores depend only on the live passages.
//
// Why: bleve 2.5 computes the average field length of BM25 as the sum, over the index's
// segments, of each segment's term-dictionary size, divided by the document count. That sum
// depends on how the passages happen to be split into segments (batch size, background merges,
// deletes), so two builds of the same input could rank differently, and an updated index
// differently from a fresh build. Kairos records the value a single segment of the live
// passages has, the number of distinct terms of the text field, and search passes it to
// bleve (BM25Stats.Context), which keeps bleve's formula but makes it deterministic.
type BM25Stats struct {
	Docs  int `json:"docs"`  // live passages
	Terms int `json:"terms"` // distinct terms of the text field in the live passages
}

// Context returns ctx carrying s for bleve's BM25 scorer.
func (s *BM25Stats) Context(ctx context.Context) context.Context {
	card := map[string]int{FieldText: s.Terms, FieldDoc: s.Terms, FieldSource: s.Terms, FieldDate: s.Terms}
	return context.WithValue(ctx, bsearch.BM25StatsKey, &bsearch.BM25Stats{DocCount: float64(s.Docs), FieldCardinality: card})
}

// bm25Stats counts the live passages and the distinct terms of the text field that occur in at
// least one live passage. Dictionary entries count postings of deleted passages too, so a
// term with no more postings than there are tombstones is checked against the live postings.
func bm25Stats(ctx context.Context, idx bleve.Index, tombstones int) (*BM25Stats, error) {
	docs, err := idx.DocCount()
	if err != nil {
		return nil, err
	}
	adv, err := idx.Advanced()
	if err != nil {
		return nil, err
	}
	r, err := adv.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	fd, err := r.FieldDict(FieldText)
	if err != nil {
		return nil, err
	}
	defer fd.Close()
	terms := 0
	for {
		e, err := fd.Next()
		if err != nil {
			return nil, fmt.Errorf("reading the term dictionary: %w", err)
		}
		if e == nil {
			break
		}
		if e.Count > uint64(tombstones) {
			terms++
			continue
		}
		tfr, err := r.TermFieldReader(ctx, []byte(e.Term), FieldText, false, false, false)
		if err != nil {
			return nil, err
		}
		if tfr.Count() > 0 {
			terms++
		}
		tfr.Close()
	}
	return &BM25Stats{Docs: int(docs), Terms: terms}, nil
}
