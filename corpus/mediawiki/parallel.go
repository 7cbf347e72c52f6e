package mediawiki

import (
	"bytes"
	"context"

	"github.com/kairos-rag/kairos/corpus/document"
	"github.com/kairos-rag/kairos/internal/ordered"
)

// scanned is a page chunk as the workers hand it back: located, decoded, its bytes dropped.
type scanned struct {
	chunk chunk
	page  decodedPage
}

// startWorkers scans on one goroutine and decodes on r.workers others (see Options.Workers).
// The scan's fatal error (io.EOF at the end) reaches Next after every page before it.
func (r *Reader) startWorkers() {
	ctx, stop := context.WithCancel(context.Background())
	r.stop = stop
	site := &r.scan.site // fixed by the scanner before it hands out the first page
	next := func() (chunk, error) {
		c, err := r.nextChunk()
		c.data = bytes.Clone(c.data) // the scanner reuses its buffer for the next page
		return c, err
	}
	r.pipe = ordered.Start(ctx, r.workers, next, func(c chunk) (scanned, error) {
		p := decodedPage{err: c.err}
		if c.err == nil {
			p = r.decode(site, c.data, c.line)
		}
		c.data = nil
		return scanned{chunk: c, page: p}, nil
	})
}

// nextParallel is Next with workers.
func (r *Reader) nextParallel(ctx context.Context) (document.Document, error) {
	if r.pipe == nil {
		r.startWorkers()
	}
	for {
		s, err := r.pipe.Next(ctx)
		if err != nil {
			if ctx.Err() == nil || err != ctx.Err() {
				r.err = err // the scan's end, or a worker's panic
			} // else the page it waited for is still ahead: a later call returns it
			return document.Document{}, err
		}
		if doc, err, done := tally(&r.stats, r.scan.site.language, r.scan.file, s.chunk, s.page); done {
			return doc, err
		}
	}
}
