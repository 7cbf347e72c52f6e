package multistream

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	dsbzip2 "github.com/dsnet/compress/bzip2"
)

// WriteOptions configures Write.
type WriteOptions struct {
	// PagesPerStream is how many pages each stream holds; 0 means 100, as in Wikipedia's dumps.
	PagesPerStream int
	// Level is the bzip2 level, 1..9; 0 means 9.
	Level int
}

// Write recompresses a MediaWiki XML dump (text, not compressed) as a multistream bzip2 file
// laid out as Wikipedia's: a first stream with everything before the first <page> (the
// <siteinfo> header), then streams of PagesPerStream pages, then a last stream with what
// follows the last </page>. When index is not nil it gets one "offset:pageid:title" line per
// page, as Wikipedia's -index.txt files (uncompressed; compress it as the caller likes).
//
// It expects MediaWiki's export layout, where <page> and </page> stand on lines of their own,
// and fails on input with no such page.
func Write(ctx context.Context, out io.Writer, index io.Writer, xml io.Reader, opts WriteOptions) error {
	if opts.PagesPerStream < 0 || opts.Level < 0 || opts.Level > 9 {
		return fmt.Errorf("bad WriteOptions %+v", opts)
	}
	if opts.PagesPerStream == 0 {
		opts.PagesPerStream = 100
	}
	if opts.Level == 0 {
		opts.Level = 9
	}
	w := &streamWriter{out: &countingWriter{w: out}, level: opts.Level}
	var idx *bufio.Writer
	if index != nil {
		idx = bufio.NewWriter(index)
	}
	br := bufio.NewReaderSize(xml, 1<<16)
	var page bytes.Buffer
	inPage, pages, inStream := false, 0, 0
	var streamStart int64
	var pending []string // index lines of the current stream, written once its offset is known
	for lineNo := 1; ; lineNo++ {
		line, err := br.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return err
		}
		t := bytes.TrimSpace(line)
		switch {
		case !inPage && bytes.Equal(t, []byte("<page>")):
			if pages == 0 { // the header ends: it is the first stream
				if err := w.flush(); err != nil {
					return err
				}
			}
			inPage = true
			page.Reset()
			page.Write(line)
		case inPage:
			page.Write(line)
			if !bytes.Equal(t, []byte("</page>")) {
				break
			}
			inPage = false
			pages++
			if _, err := w.Write(page.Bytes()); err != nil {
				return err
			}
			streamStart = w.start
			pending = append(pending, pageIndexEntry(page.Bytes()))
			inStream++
			if inStream == opts.PagesPerStream {
				if err := w.flush(); err != nil {
					return err
				}
				if err := writeIndex(idx, streamStart, pending); err != nil {
					return err
				}
				pending, inStream = pending[:0], 0
			}
		default:
			if _, err := w.Write(line); err != nil {
				return err
			}
		}
		if err == io.EOF {
			break
		}
		if lineNo%65536 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
	if inPage {
		return errors.New("multistream: input ends inside a <page>")
	}
	if pages == 0 {
		return errors.New("multistream: no <page> line in the input: not a MediaWiki XML dump laid out one tag a line")
	}
	if inStream > 0 {
		if err := w.flush(); err != nil {
			return err
		}
		if err := writeIndex(idx, streamStart, pending); err != nil {
			return err
		}
	}
	if err := w.flush(); err != nil { // the trailer: "</mediawiki>"
		return err
	}
	if idx != nil {
		return idx.Flush()
	}
	return nil
}

func writeIndex(idx *bufio.Writer, off int64, entries []string) error {
	if idx == nil {
		return nil
	}
	for _, e := range entries {
		if _, err := fmt.Fprintf(idx, "%d:%s\n", off, e); err != nil {
			return err
		}
	}
	return nil
}

var xmlUnescaper = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&quot;", `"`, "&#039;", "'", "&apos;", "'", "&amp;", "&")

// pageIndexEntry returns "pageid:title" for a page, from its first <id> and <title>.
func pageIndexEntry(page []byte) string {
	field := func(tag string) string {
		_, rest, ok := bytes.Cut(page, []byte("<"+tag+">"))
		if !ok {
			return ""
		}
		v, _, _ := bytes.Cut(rest, []byte("</"+tag+">"))
		return xmlUnescaper.Replace(string(v))
	}
	return field("id") + ":" + field("title")
}

// streamWriter compresses what it is given into one bzip2 stream per flush.
type streamWriter struct {
	out   *countingWriter
	level int
	zw    *dsbzip2.Writer
	start int64 // file offset of the current stream
}

func (s *streamWriter) Write(p []byte) (int, error) {
	if s.zw == nil {
		zw, err := dsbzip2.NewWriter(s.out, &dsbzip2.WriterConfig{Level: s.level})
		if err != nil {
			return 0, err
		}
		s.zw, s.start = zw, s.out.n
	}
	return s.zw.Write(p)
}

// flush ends the current stream, if it holds anything.
func (s *streamWriter) flush() error {
	if s.zw == nil {
		return nil
	}
	err := s.zw.Close()
	s.zw = nil
	return err
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// Create writes a MediaWiki XML dump (text) to path as a multistream bzip2 file (Write) and,
// when path is named as Wikipedia names such dumps ("...-multistream.xml.bz2"), its index
// beside it, bzip2-compressed, at IndexPath(path), where readers look for it.
func Create(ctx context.Context, path string, xml io.Reader, opts WriteOptions) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	var index bytes.Buffer
	var idx io.Writer
	indexPath := IndexPath(path)
	if indexPath != "" {
		idx = &index
	}
	err = Write(ctx, bw, idx, xml, opts)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if indexPath == "" {
		return nil
	}
	return writeCompressed(indexPath, index.Bytes(), opts.Level)
}

// writeCompressed writes data to path as one bzip2 stream.
func writeCompressed(path string, data []byte, level int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	zw, err := dsbzip2.NewWriter(f, &dsbzip2.WriterConfig{Level: cmp.Or(level, 9)})
	if err == nil {
		_, err = zw.Write(data)
		if cerr := zw.Close(); err == nil {
			err = cerr
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
