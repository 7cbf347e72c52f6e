// Package postingsbm25 is Kairos's own lexical engine: BM25 over internal/postings segments,
// searched with block-max MaxScore, so that a query reads a small part of the postings of
// its terms instead of scoring all of them as bleve does, and a build holds a bounded buffer
// instead of bleve's in-memory segments. Scores and rankings are bleve's as Kairos runs them
// (internal/postings proves it on SciFact), so an index can move from one engine to the other
// without a change in its results.
//
// A generation's lexical part is the directory "lexical": one segment file per generation
// that added passages (a derived generation hard-links its base's and adds its own) and the
// set of keys deleted since they were written ("deleted.ktmb", in kpst's tombstone format),
// with, per term, how many of those deleted passages hold it ("deleted.kpdf",
// postings.TermCounts). Deleted passages are left out of every search, and their terms are
// taken out of the document frequencies, as bleve's posting counts leave deleted documents
// out: a generation updated or deleted from without compaction scores exactly as a clean
// build of its live passages. The counts are made when passages are deleted, from the
// deleted passages' text (the indexer hands it over), so a search costs no more than on a
// clean index; an index written before they existed has them counted from its segments when
// it is opened or derived from.
package postingsbm25

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/tombstones"
	"github.com/kairos-rag/kairos/internal/atomicfile"
	"github.com/kairos-rag/kairos/internal/postings"
)

// dirName is the directory of a generation that holds its lexical part. (The engine's name
// in manifests is another string, indexer.LexicalPostings, "postings".)
const dirName = "lexical"

const (
	segSuffix     = ".kpo"
	deletedName   = "deleted.ktmb"
	deletedDFName = "deleted.kpdf"
)

// Dir returns the lexical directory of the generation at genDir.
func Dir(genDir string) string { return filepath.Join(genDir, dirName) }

// Engine is the postings lexical engine. The zero value is ready to use.
type Engine struct {
	// MaxBufferedPostings bounds a build's posting buffer (postings.BuilderOptions); 0: the
	// package default.
	MaxBufferedPostings int
	// RAMBudget bounds, in bytes, the in-memory part of a build (postings.BuilderOptions):
	// when it fills, the passages so far are flushed as a segment, and the flushed segments
	// are merged (log policy, then all of them at Commit) into the generation's one segment.
	// A segment is written in the background while the next one fills, keeping its
	// vocabulary meanwhile: up to about twice this in all. 0: postings.DefaultRAMBudget.
	RAMBudget int64
	// MaxPostings bounds the postings of a segment a build flushes, whatever its memory
	// (postings.BuilderOptions): the time a checkpoint waits for the builder to write them.
	// 0: postings.DefaultMaxPostings.
	MaxPostings int64
}

var _ backend.Lexical = Engine{}

// Begin starts gen's lexical part, empty or (base non-nil) with base's segments hard-linked
// and its deleted set carried over. A base that is the build's own checkpoint (o.Adopt) gives
// its segments, left unmerged there, to this writer as parts, to be merged with its own.
func (e Engine) Begin(ctx context.Context, gen backend.Gen, base *backend.Gen, o backend.LexicalBegin) (backend.LexicalWriter, error) {
	dir := Dir(gen.Dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	deleted := &tombstones.Set{}
	var deletedDF *postings.TermCounts
	if base != nil {
		segs, err := segmentFiles(Dir(base.Dir))
		if err != nil {
			return nil, err
		}
		for _, s := range segs {
			if err := atomicfile.LinkOrCopy(s, filepath.Join(dir, filepath.Base(s))); err != nil {
				return nil, fmt.Errorf("linking lexical segment: %w", err)
			}
		}
		if deleted, err = tombstones.Read(filepath.Join(Dir(base.Dir), deletedName)); err != nil {
			return nil, err
		}
		if deletedDF, err = deletedTermCounts(ctx, Dir(base.Dir), deleted, nil); err != nil {
			return nil, err
		}
	}
	w, err := newWriter(dir, gen.Name, o.Analyzer, deleted, deletedDF, e)
	if err != nil || base == nil || !o.Adopt {
		return w, err
	}
	if err := w.adoptBase(ctx); err != nil {
		w.Abort()
		return nil, fmt.Errorf("adopting the checkpoint's lexical segments: %w", err)
	}
	return w, nil
}

// Open opens gen's lexical part for searching with sc. Segments up to backend.VerifyBudget bytes
// are checksummed at open; larger ones are mapped without reading them whole (the manifest's
// sha256 covers them).
func (Engine) Open(ctx context.Context, gen backend.Gen, sc backend.Scoring, meta backend.Meta) (backend.LexicalReader, error) {
	return Open(ctx, gen.Dir, sc, meta)
}

// Drop removes gen's lexical part.
func (Engine) Drop(ctx context.Context, gen backend.Gen) error { return os.RemoveAll(Dir(gen.Dir)) }

// segmentFiles lists the segment files of a lexical directory, in name order.
func segmentFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), segSuffix) {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(out)
	return out, nil
}

// openSegments opens every segment of dir, checksumming those up to backend.VerifyBudget bytes;
// with trusted, none (a writer counting the passages of segments it wrote or linked: reading
// them all at every checkpoint would cost the whole lexical index each time, in I/O and in
// resident pages).
func openSegments(dir string, trusted bool) ([]*postings.Segment, error) {
	files, err := segmentFiles(dir)
	if err != nil {
		return nil, err
	}
	var segs []*postings.Segment
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			closeAll(segs)
			return nil, err
		}
		s, err := postings.Open(f, postings.OpenOptions{SkipChecksum: trusted || fi.Size() > backend.VerifyBudget})
		if err != nil {
			closeAll(segs)
			return nil, &backend.DamagedError{Path: f, What: err.Error()}
		}
		segs = append(segs, s)
	}
	return segs, nil
}

func closeAll(segs []*postings.Segment) {
	for _, s := range segs {
		s.Close()
	}
}

// deletedTermCounts returns the deleted term counts of the lexical directory dir, whose
// deleted set is deleted: its file, or, for an index written before it existed, the counts
// taken from its segments (segs, or those of dir when nil).
func deletedTermCounts(ctx context.Context, dir string, deleted *tombstones.Set, segs []*postings.Segment) (*postings.TermCounts, error) {
	path := filepath.Join(dir, deletedDFName)
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		c, err := postings.ParseTermCounts(b)
		if err != nil {
			return nil, &backend.DamagedError{Path: path, What: err.Error()}
		}
		return c, nil
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	case deleted.Len() == 0:
		return nil, nil
	}
	if segs == nil {
		if segs, err = openSegments(dir, true); err != nil {
			return nil, err
		}
		defer closeAll(segs)
	}
	return countDeleted(ctx, segs, deleted)
}

// countDeleted counts the terms of the deleted passages from the segments.
func countDeleted(ctx context.Context, segs []*postings.Segment, deleted *tombstones.Set) (*postings.TermCounts, error) {
	m := map[string]int{}
	for _, s := range segs {
		if err := s.CountDeleted(ctx, deleted, m); err != nil {
			return nil, &backend.DamagedError{Path: s.Path(), What: err.Error()}
		}
	}
	return postings.NewTermCounts(m), nil
}

// writeTermCounts writes c to path under atomicfile's rule (synced, renamed into place).
func writeTermCounts(path string, c *postings.TermCounts) error {
	return atomicfile.WriteFile(path, c.Encode(), atomicfile.Options{})
}
