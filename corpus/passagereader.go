package corpus

import (
	"context"
	"time"

	"github.com/kairos-rag/kairos/internal/ordered"
)

// PassageReaderOptions configures a PassageReader.
type PassageReaderOptions struct {
	// Workers is how many documents are split at once; 0 means GOMAXPROCS.
	Workers int
	// Want, when set, decides on a worker whether a document is split: n is its 1-based
	// position among the documents read. A document it refuses comes back with no passages
	// (the indexer skips documents that are unchanged or already indexed).
	Want func(n int, doc *Document) bool
	// Clock, when set, gets the splitting's busy time summed over the workers, one item per
	// passage.
	Clock *StageClock
}

// PassageReader reads the documents of a Reader and splits them into passages on a pool of
// workers, handing them back in input order: the same documents, passages, record errors and
// stats, in the same order, as reading and splitting one document after another.
type PassageReader struct {
	pipe  *ordered.Pipeline[readItem, readItem]
	stats ReadStats // as of the last item returned
	err   error
}

// readItem is one outcome of the Reader with, once split, its passages.
type readItem struct {
	doc      Document
	passages []Passage
	err      error     // a *RecordError
	end      error     // instead of a document: the Reader's final error (io.EOF at the end)
	stats    ReadStats // the Reader's stats just after it
	n        int       // position of doc among the documents read
}

// NewPassageReader starts reading r on a goroutine of its own, so r must not be used by the
// caller until Close. Close does not close r.
func NewPassageReader(ctx context.Context, r Reader, split *Splitter, opts PassageReaderOptions) *PassageReader {
	n, removed := 0, 0
	var ended error
	// stats are the Reader's, with the URLs removed here.
	stats := func() ReadStats {
		st := r.Stats()
		st.URLsRemoved += removed
		return st
	}
	next := func() (readItem, error) {
		if ended != nil {
			return readItem{}, ended // after the end item: stops the pipeline
		}
		doc, err := r.Next(ctx)
		switch {
		case IsRecordError(err):
			return readItem{err: err, stats: stats()}, nil
		case err != nil:
			ended = err
			return readItem{end: err, stats: stats()}, nil
		}
		n++
		// Every format's documents pass here, before their passages inherit the URL: a link
		// that is not http(s) (javascript:, data:) is removed, and counted, never served.
		if doc.URL != "" {
			u, ok := WebURL(doc.URL)
			if !ok {
				removed++
			}
			doc.URL = u
		}
		return readItem{doc: doc, stats: stats(), n: n}, nil
	}
	work := func(it readItem) (readItem, error) {
		if it.err == nil && it.end == nil && (opts.Want == nil || opts.Want(it.n, &it.doc)) {
			start := time.Now()
			it.passages = split.Split(it.doc)
			opts.Clock.Add(time.Since(start), int64(len(it.passages)), 0)
		}
		return it, nil
	}
	return &PassageReader{pipe: ordered.Start(ctx, opts.Workers, next, work), stats: ReadStats{Skipped: map[string]int{}}}
}

// Next returns the next document and its passages, a *RecordError for a malformed record
// (call Next again to go on), or the Reader's final error: io.EOF at the end.
func (p *PassageReader) Next(ctx context.Context) (Document, []Passage, error) {
	if p.err != nil {
		return Document{}, nil, p.err
	}
	it, err := p.pipe.Next(ctx)
	if err != nil {
		if ctx.Err() == nil || err != ctx.Err() {
			p.err = err
		}
		return Document{}, nil, err
	}
	p.stats = it.stats
	if it.end != nil {
		p.err = it.end
		return Document{}, nil, it.end
	}
	if it.err != nil {
		return Document{}, nil, it.err
	}
	return it.doc, it.passages, nil
}

// Stats returns the Reader's stats as of the last document or error Next returned.
func (p *PassageReader) Stats() ReadStats { return p.stats.Clone() }

// Close stops the workers and waits for the Reader's Next in progress, so that the caller
// may close the Reader after it. It does not close the Reader.
func (p *PassageReader) Close() error {
	p.pipe.Close()
	<-p.pipe.Ended()
	return nil
}
