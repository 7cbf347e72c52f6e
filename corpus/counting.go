package corpus

import "io"

// countingReader counts the bytes read through it: the raw (possibly compressed) input, so that
// progress can be reported against the file size, and the MediaWiki reader's byte position.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
