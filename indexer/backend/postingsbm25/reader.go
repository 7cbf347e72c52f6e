package postingsbm25

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/tombstones"
	"github.com/kairos-rag/kairos/internal/postings"
)

// Reader searches one generation's lexical part. It is safe for concurrent use.
type Reader struct {
	segs    []*postings.Segment
	x       *postings.Searcher
	deleted *tombstones.Set
	// deletedDF: per term, the deleted passages that hold it, taken from its document frequency
	deletedDF *postings.TermCounts
	sc        postings.Scoring
	meta      backend.Meta
	docs      int
}

var _ backend.LexicalReader = (*Reader)(nil)

// Open opens the lexical part of the generation at genDir; meta answers filters (nil: a
// filtered search fails).
func Open(ctx context.Context, genDir string, sc backend.Scoring, meta backend.Meta) (*Reader, error) {
	dir := Dir(genDir)
	deleted, err := tombstones.Read(filepath.Join(dir, deletedName))
	if err != nil {
		return nil, &backend.DamagedError{Path: filepath.Join(dir, deletedName), What: err.Error()}
	}
	segs, err := openSegments(dir, false)
	if err != nil {
		return nil, err
	}
	deletedDF, err := deletedTermCounts(ctx, dir, deleted, segs)
	if err != nil {
		closeAll(segs)
		return nil, err
	}
	x, err := postings.NewSearcher(segs, postings.SearcherOptions{})
	if err != nil {
		closeAll(segs)
		return nil, err
	}
	docs := 0
	for _, s := range segs {
		docs += s.Len()
	}
	r := &Reader{segs: segs, x: x, deleted: deleted, deletedDF: deletedDF, docs: docs - deleted.Len(), meta: meta,
		sc: postings.Scoring{K1: sc.Params.K1, B: sc.Params.B, Docs: int64(sc.Stats.Docs), Tokens: sc.Stats.Tokens}}
	return r, nil
}

// Search returns the q.N best passages for the terms that pass q.Filter, applied inside the
// search: the N best that pass, not the passing few of the N best.
func (r *Reader) Search(ctx context.Context, q backend.LexicalQuery) ([]backend.Hit, error) {
	// A filter that passes nothing answers at once: the Keeper would refuse every posting. So
	// does a collection whose live passages hold no token (all stop words, or every passage
	// with words deleted): no live passage can match, and BM25 has no average length.
	if len(q.Terms) == 0 || q.N <= 0 || r.sc.Docs == 0 || r.sc.Tokens == 0 || q.Filter.None {
		return nil, nil
	}
	if r.sc.K1 == 0 && r.sc.B == 0 {
		return nil, errors.New("postingsbm25: opened without BM25 parameters")
	}
	pq := r.postingsQuery(q)
	var keeper *backend.Keeper
	if !q.Filter.Empty() {
		var err error
		if keeper, err = backend.NewKeeper(ctx, r.meta, q.Filter); err != nil {
			return nil, fmt.Errorf("postingsbm25: %w", err)
		}
		pq.Allow = keeper.Keep // safe for the segments searched in parallel
	}
	hits, err := r.x.Search(ctx, pq, r.sc)
	if err == nil && keeper != nil {
		err = keeper.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("bm25 search: %w", err)
	}
	out := make([]backend.Hit, len(hits))
	for i, h := range hits {
		out[i] = backend.Hit{Key: h.Key, Score: h.Score}
	}
	return out, nil
}

// postingsQuery is the search of q's terms over the segments, without its filter. The
// tombstone set goes along only when something is deleted: a non-nil set makes the search
// read every candidate's key (a random read into the key array, 40 MB at 10M passages)
// to look it up, where without one it reads keys of the hits alone.
func (r *Reader) postingsQuery(q backend.LexicalQuery) postings.Query {
	pq := postings.Query{Terms: q.Terms, K: q.N}
	if r.deleted.Len() > 0 {
		pq.Deleted = r.deleted
	}
	if r.deletedDF.Len() > 0 {
		pq.DeletedDocFreq = r.deletedDF.Get
	}
	return pq
}

// Docs is the number of live passages indexed.
func (r *Reader) Docs(ctx context.Context) (int, error) { return r.docs, nil }

// Has reports which keys the part holds, deleted ones excluded.
func (r *Reader) Has(ctx context.Context, keys []uint32) ([]bool, error) {
	out := make([]bool, len(keys))
	for i, k := range keys {
		if r.deleted.Has(k) {
			continue
		}
		for _, s := range r.segs {
			if _, ok := s.Length(k); ok {
				out[i] = true
				break
			}
		}
	}
	return out, nil
}

// Check reports an error when the deleted term counts the reader scores with are not what its
// segments give for its deleted set (verify: counts made from a deleted passage's text that is
// not the text indexed would skew every score of its terms).
func (r *Reader) Check(ctx context.Context) error {
	counted, err := countDeleted(ctx, r.segs, r.deleted)
	if err != nil {
		return err
	}
	if !counted.Equal(r.deletedDF) {
		return fmt.Errorf("%s: %d terms counted, the segments' %d deleted passages hold %d (or other counts)",
			deletedDFName, r.deletedDF.Len(), r.deleted.Len(), counted.Len())
	}
	return nil
}

// DocFreq returns how many live passages hold each term: the segments' counts less the
// deleted passages'.
func (r *Reader) DocFreq(ctx context.Context, terms []string) ([]int, error) {
	out := make([]int, len(terms))
	for i, t := range terms {
		n, err := r.x.DocFreq(t)
		if err != nil {
			return nil, fmt.Errorf("postingsbm25: document frequency of %q: %w", t, err)
		}
		if r.deletedDF.Len() > 0 {
			n -= r.deletedDF.Get(t)
		}
		out[i] = max(n, 0)
	}
	return out, nil
}

// Close unmaps the segments.
func (r *Reader) Close() error {
	var errs []error
	for _, s := range r.segs {
		errs = append(errs, s.Close())
	}
	return errors.Join(errs...)
}
