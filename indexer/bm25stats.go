package indexer

import (
	"context"
	"fmt"

	"github.com/blevesearch/bleve/v2"
	bsearch "github.com/blevesearch/bleve/v2/search"
	index "github.com/blevesearch/bleve_index_api"
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
	r, err := bleveReader(idx)
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

// bm25StatsDelta derives the statistics of an updated index from its base's without walking
// the dictionary: only the terms of passages added or tombstoned can have changed between
// "in some live passage" and "in none".
func bm25StatsDelta(ctx context.Context, before, after bleve.Index, base *BM25Stats, terms map[string]struct{}) (*BM25Stats, error) {
	docs, err := after.DocCount()
	if err != nil {
		return nil, err
	}
	rb, err := bleveReader(before)
	if err != nil {
		return nil, err
	}
	defer rb.Close()
	ra, err := bleveReader(after)
	if err != nil {
		return nil, err
	}
	defer ra.Close()
	n := base.Terms
	for t := range terms {
		b, err := live(ctx, rb, t)
		if err != nil {
			return nil, err
		}
		a, err := live(ctx, ra, t)
		if err != nil {
			return nil, err
		}
		switch {
		case a && !b:
			n++
		case b && !a:
			n--
		}
	}
	return &BM25Stats{Docs: int(docs), Terms: n}, nil
}

func bleveReader(idx bleve.Index) (index.IndexReader, error) {
	adv, err := idx.Advanced()
	if err != nil {
		return nil, err
	}
	return adv.Reader()
}

// live reports whether term occurs in a live passage's text field.
func live(ctx context.Context, r index.IndexReader, term string) (bool, error) {
	tfr, err := r.TermFieldReader(ctx, []byte(term), FieldText, false, false, false)
	if err != nil {
		return false, err
	}
	defer tfr.Close()
	return tfr.Count() > 0, nil
}
