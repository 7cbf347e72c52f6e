package blevebm25

import (
	"context"
	"fmt"
	"strconv"

	"github.com/blevesearch/bleve/v2"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer/backend"
)

// Writer writes one generation's bleve index.
type Writer struct {
	idx    bleve.Index
	docs   *docBuilder
	closed bool
}

var _ backend.LexicalWriter = (*Writer)(nil)

// Batch is a bleve batch of passages to add and keys to delete.
type Batch struct {
	bb   *bleve.Batch
	docs *docBuilder
}

var _ backend.LexicalBatch = (*Batch)(nil)

// NewBatch starts a batch.
func (w *Writer) NewBatch() backend.LexicalBatch { return &Batch{bb: w.idx.NewBatch(), docs: w.docs} }

// Add adds passage p under key.
func (b *Batch) Add(key uint32, p *corpus.Passage) error {
	d, err := b.docs.build(key, p)
	if err != nil {
		return err
	}
	if err := b.bb.IndexAdvanced(d); err != nil {
		return fmt.Errorf("passage %s: %w", p.ID, err)
	}
	return nil
}

// Delete removes key (bleve's postings counts leave deleted documents out by themselves).
func (b *Batch) Delete(key uint32, _ *corpus.Passage) {
	b.bb.Delete(strconv.FormatUint(uint64(key), 10))
}

// Len is the number of operations in the batch.
func (b *Batch) Len() int { return b.bb.Size() }

// Apply indexes a batch. bleve analyses its passages here, on all cores.
func (w *Writer) Apply(ctx context.Context, b backend.LexicalBatch) error {
	bb, ok := b.(*Batch)
	if !ok {
		return fmt.Errorf("blevebm25: batch of another engine (%T)", b)
	}
	if bb.bb.Size() == 0 {
		return nil
	}
	return w.idx.Batch(bb.bb)
}

// Commit closes the index; bleve has synced its segments.
func (w *Writer) Commit(ctx context.Context, _ backend.CommitOptions) (backend.LexicalCommit, error) {
	n, err := w.idx.DocCount()
	if err != nil {
		w.Abort()
		return backend.LexicalCommit{}, fmt.Errorf("BM25 statistics: %w", err)
	}
	w.closed = true
	if err := w.idx.Close(); err != nil {
		return backend.LexicalCommit{}, fmt.Errorf("closing bleve index: %w", err)
	}
	// Every batch applied has been analysed, so the counter is complete.
	return backend.LexicalCommit{Docs: int(n), TokensAdded: w.docs.tokens.Load()}, nil
}

// Abort closes the index unless Commit or an earlier Abort has: closing bleve twice panics
// ("close of closed channel").
func (w *Writer) Abort() {
	if w.closed {
		return
	}
	w.closed = true
	w.idx.Close()
}
