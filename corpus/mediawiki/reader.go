package mediawiki

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/kairos-rag/kairos/corpus/document"
	"github.com/kairos-rag/kairos/internal/ordered"
)

const (
	// maxHeaderBytes caps what is kept before the first <page> to find <siteinfo>.
	maxHeaderBytes = 1 << 20
	// defaultBase is used when the dump has no <siteinfo><base>.
	defaultBase = "https://en.wikipedia.org/wiki/"
)

// Options configures a Reader. The zero value is valid.
type Options struct {
	File   string // names the input in errors
	Source string // fills Document.Source
	// MaxPageBytes caps one <page>: a bigger one is a bad record (a *document.RecordError),
	// read past without being buffered. 0 means document.DefaultMaxRecordBytes.
	MaxPageBytes int64
	// Workers is how many pages are decoded and cleaned at once, on goroutines of their own,
	// while one more scans the input for the next pages. 0 or 1 does everything on the
	// caller's goroutine, in Next. Either way Next returns the same documents and errors in
	// the same order, and Stats counts only what Next returned (with workers, Stats's
	// BytesRead runs ahead of Next: the scan reads ahead).
	Workers int
	// Clock, when set, gets the parsing's busy time: the scan for pages (less its waits for
	// the input) and the decoding and cleaning of each, summed over the goroutines that do
	// them; one item per page decoded, with its bytes of XML.
	Clock *document.StageClock
}

// Validate reports a negative cap.
func (o Options) Validate() error {
	if o.MaxPageBytes < 0 {
		return fmt.Errorf("MaxPageBytes is negative (%d)", o.MaxPageBytes)
	}
	if o.Workers < 0 {
		return fmt.Errorf("options: Workers is negative (%d)", o.Workers)
	}
	return nil
}

func (o Options) maxPageBytes() int64 {
	if o.MaxPageBytes > 0 {
		return o.MaxPageBytes
	}
	return document.DefaultMaxRecordBytes
}

// Reader streams main-namespace articles from a MediaWiki pages-articles XML dump.
type Reader struct {
	scan    scanner
	raw     *document.CountingReader
	in      *document.TimedReader // raw, timed: the scan's waits for its input
	clock   *document.StageClock
	stats   document.ReadStats
	err     error // sticky: I/O error or closed
	workers int
	pipe    *ordered.Pipeline[chunk, scanned] // with workers, started by the first Next
	stop    context.CancelFunc
}

var _ document.Reader = (*Reader)(nil)

// NewReader is New with only a file name and a source.
func NewReader(r io.Reader, file, source string) *Reader {
	return New(r, Options{File: file, Source: source})
}

// New reads an already-decompressed pages-articles XML stream, UTF-8 or UTF-16 (BOM).
//
// Pages outside namespace 0, redirects and pages with no text left after cleaning are skipped
// and counted in Stats. Invalid UTF-8 (and characters XML forbids) are replaced with U+FFFD and
// the page counted in Stats().Repaired. BytesRead counts the bytes read from r. Close does not
// close r: the caller owns it. Negative options are taken as their defaults.
func New(r io.Reader, opts Options) *Reader {
	raw := &document.CountingReader{R: r}
	in := &document.TimedReader{R: raw}
	return &Reader{
		scan:    newScanner(decodeBOM(in), opts),
		raw:     raw,
		in:      in,
		clock:   opts.Clock,
		stats:   document.ReadStats{Skipped: map[string]int{}},
		workers: opts.Workers,
	}
}

// Stats counts what the reader has seen so far.
func (r *Reader) Stats() document.ReadStats {
	s := r.stats.Clone()
	s.BytesRead = r.raw.Count()
	return s
}

// Close releases the reader and stops its workers; later calls to Next fail. A scan in
// progress on the worker side ends when its read of the input returns.
func (r *Reader) Close() error {
	if r.pipe != nil {
		r.stop()
		r.pipe.Close()
	}
	if r.err == nil {
		r.err = errors.New("mediawiki reader closed")
	}
	return nil
}

// Next returns the next main-namespace article, io.EOF at the end, or a *document.RecordError
// for a malformed page (call Next again to continue after it).
func (r *Reader) Next(ctx context.Context) (document.Document, error) {
	for {
		if r.err != nil {
			return document.Document{}, r.err
		}
		if err := ctx.Err(); err != nil {
			return document.Document{}, err
		}
		if r.workers > 1 {
			return r.nextParallel(ctx)
		}
		c, err := r.nextChunk()
		if err != nil {
			r.err = err
			return document.Document{}, err
		}
		p := decodedPage{err: c.err}
		if c.err == nil {
			p = r.decode(&r.scan.site, c.data, c.line)
		}
		if doc, err, done := tally(&r.stats, r.scan.site.language, r.scan.file, c, p); done {
			return doc, err
		}
	}
}

// tally counts the outcome of one page in stats and returns what Next returns for it; done is
// false for a skipped page, after which Next reads on. The sequential and the parallel reader
// share it, so that they count alike.
func tally(stats *document.ReadStats, language, file string, c chunk, p decodedPage) (doc document.Document, err error, done bool) {
	if p.repaired {
		stats.Repaired++
	}
	switch {
	case p.err != nil:
		stats.Bad++
		return document.Document{}, &document.RecordError{File: file, Pos: c.pos(), Err: p.err}, true
	case p.skip != "":
		stats.Skipped[p.skip]++
		return document.Document{}, nil, false
	}
	stats.Documents++
	p.doc.Pos = c.pos() // the page, for errors about the document found later (a repeated id)
	if language != "" {
		if stats.Languages == nil {
			stats.Languages = map[string]int{}
		}
		stats.Languages[language]++
	}
	return p.doc, nil, true
}

// nextChunk is the scanner's next page, its busy time (less the waits for input) recorded.
func (r *Reader) nextChunk() (chunk, error) {
	start, waited := time.Now(), r.in.Waited
	c, err := r.scan.nextChunk()
	r.clock.Add(time.Since(start)-(r.in.Waited-waited), 0, 0)
	return c, err
}

// decode is site.decode, timed.
func (r *Reader) decode(s *site, data []byte, line int) decodedPage {
	start := time.Now()
	p := s.decode(data, line)
	r.clock.Add(time.Since(start), 1, int64(len(data)))
	return p
}

// bufioSize is the read buffer of the text scanner.
const bufioSize = 1 << 16

func newScanner(text io.Reader, opts Options) scanner {
	return scanner{
		file:    opts.File,
		in:      bufio.NewReaderSize(text, bufioSize),
		line:    1,
		maxPage: opts.maxPageBytes(),
		site:    site{source: opts.Source, base: defaultBase},
	}
}
