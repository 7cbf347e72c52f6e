package corpus

import (
	"bytes"
	"io"

	"github.com/kairos-rag/kairos/corpus/document"
)

// DefaultMaxRecordBytes is the default of Options.MaxRecordBytes. The largest English
// Wikipedia pages are a few MB of wikitext; a record far beyond that is a broken or hostile
// input, and a reader would otherwise buffer it whole (a 50 MB JSON line cost 1.4 GB).
const DefaultMaxRecordBytes = document.DefaultMaxRecordBytes

// errRecordTooLarge is the error of a record over the cap; readers wrap it with the file
// and the record's position.
type errRecordTooLarge = document.RecordTooLargeError

// capReader bounds what a streaming decoder (encoding/json, encoding/csv) may buffer for
// one record. The decoder reads ahead, so the stream is only cut at twice the cap (plus a
// read buffer): the exact check is the reader's, on the record it got; this one bounds
// memory when a record never ends.
type capReader struct {
	r     io.Reader
	n     int64 // bytes read so far
	start int64 // stream offset where the current record starts
	max   int64
	lines int64 // line ends read so far, to name the line of an error found at a byte offset
	eof   bool  // r returned io.EOF: n is the input's size
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.n-c.start > 2*c.max+64<<10 {
		return 0, errRecordTooLarge{Max: c.max}
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	c.lines += int64(bytes.Count(p[:n], []byte{'\n'}))
	if err == io.EOF {
		c.eof = true
	}
	return n, err
}

// maxRecordBytes returns o.MaxRecordBytes or its default.
func (o Options) maxRecordBytes() int64 {
	if o.MaxRecordBytes > 0 {
		return o.MaxRecordBytes
	}
	return DefaultMaxRecordBytes
}
