package document

import (
	"fmt"
	"io"
	"sync/atomic"
)

// DefaultMaxRecordBytes is the default cap on one record (corpus.Options.MaxRecordBytes). The
// largest English Wikipedia pages are a few MB of wikitext; a record far beyond that is a broken
// or hostile input, and a reader would otherwise buffer it whole (a 50 MB JSON line cost 1.4 GB).
const DefaultMaxRecordBytes = 64 << 20

// RecordTooLargeError is the error of a record over the cap; readers wrap it in a *RecordError
// with the file and the record's position.
type RecordTooLargeError struct{ Max int64 }

func (e RecordTooLargeError) Error() string {
	return fmt.Sprintf("record larger than the cap of %d bytes (MaxRecordBytes; kairos index --max-record-bytes)", e.Max)
}

// CountingReader counts the bytes read through it: the raw (possibly compressed) input, so that
// progress can be reported against the file size, and a reader's byte position. Count may be
// called from any goroutine while another reads: parallel readers read ahead of the caller.
type CountingReader struct {
	R io.Reader
	n atomic.Int64
}

func (c *CountingReader) Read(p []byte) (int, error) {
	n, err := c.R.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// Count returns the bytes read so far.
func (c *CountingReader) Count() int64 { return c.n.Load() }
