package corpus

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
)

var _ Reader = (*tarReader)(nil)

// isTar reports whether head starts with a POSIX/GNU tar header.
func isTar(head []byte) bool {
	return len(head) >= 262 && bytes.Equal(head[257:262], []byte("ustar"))
}

// tarReader reads the regular files of a tar archive one after another, each with its own
// format reader. Its Stats add up the entries'.
type tarReader struct {
	tr      *tar.Reader
	archive string
	opts    Options
	cur     Reader
	done    ReadStats // stats of finished entries
	fatal   error
}

func newTarReader(r io.Reader, archive string, opts Options) *tarReader {
	return &tarReader{tr: tar.NewReader(r), archive: archive, opts: opts, done: ReadStats{Skipped: map[string]int{}}}
}

func (t *tarReader) Next(ctx context.Context) (Document, error) {
	for {
		if t.fatal != nil {
			return Document{}, t.fatal
		}
		if t.cur != nil {
			doc, err := t.cur.Next(ctx)
			if err != io.EOF {
				return doc, err
			}
			t.finishEntry()
		}
		hdr, err := t.tr.Next()
		if err == io.EOF {
			return Document{}, io.EOF
		}
		if err != nil {
			t.fatal = fmt.Errorf("%s: tar: %w", t.archive, err)
			return Document{}, t.fatal
		}
		if hdr.Typeflag != tar.TypeReg || hdr.Size == 0 {
			continue
		}
		name := t.archive + ":" + hdr.Name
		br := bufio.NewReaderSize(t.tr, headSize)
		head, err := br.Peek(headSize)
		if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) {
			t.fatal = fmt.Errorf("%s: %w", name, err)
			return Document{}, t.fatal
		}
		if t.cur, _, err = newFormatReader(br, head, name, t.opts); err != nil {
			t.fatal = err
			return Document{}, err
		}
	}
}

func (t *tarReader) finishEntry() {
	addStats(&t.done, t.cur.Stats())
	t.cur.Close()
	t.cur = nil
}

func (t *tarReader) Stats() ReadStats {
	s := t.done.Clone()
	if t.cur != nil {
		addStats(&s, t.cur.Stats())
	}
	return s
}

func (t *tarReader) Close() error {
	if t.cur != nil {
		return t.cur.Close()
	}
	return nil
}

// addStats adds the counts of b to a (BytesRead excepted: the archive owns it).
func addStats(a *ReadStats, b ReadStats) {
	a.Documents += b.Documents
	a.Bad += b.Bad
	a.Repaired += b.Repaired
	for k, v := range b.Skipped {
		a.Skipped[k] += v
	}
	for k, v := range b.Languages {
		if a.Languages == nil {
			a.Languages = map[string]int{}
		}
		a.Languages[k] += v
	}
}
