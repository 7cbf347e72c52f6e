package blevebm25

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/blevesearch/bleve/v2"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/internal/atomicfile"
)

// Name is the directory of a generation that holds its bleve index.
const Name = "bm25"

// Dir returns the bleve directory of the generation at genDir.
func Dir(genDir string) string { return filepath.Join(genDir, Name) }

// Engine is the bleve lexical engine. The zero value is ready to use.
type Engine struct{}

var _ backend.Lexical = Engine{}

// Begin creates gen's bleve index, or (base non-nil) a copy of base's: its immutable segment
// files hard-linked, the files bleve rewrites in place copied, so base stays byte-identical
// and readable while the copy is written. bleve merges its segments by itself: a base that is
// the build's own checkpoint (o.Adopt) is copied as any other.
func (Engine) Begin(ctx context.Context, gen backend.Gen, base *backend.Gen, o backend.LexicalBegin) (backend.LexicalWriter, error) {
	analyzer := o.Analyzer
	m, err := newMapping(analyzer)
	if err != nil {
		return nil, err
	}
	docs, err := newDocBuilder(m, analyzer)
	if err != nil {
		return nil, err
	}
	var idx bleve.Index
	if base == nil {
		idx, err = bleve.NewUsing(Dir(gen.Dir), m, bleve.Config.DefaultIndexType, bleve.Config.DefaultKVStore, nil)
		if err != nil {
			return nil, fmt.Errorf("creating bleve index: %w", err)
		}
		idx = &guardedIndex{bleveIndex: idx, path: Dir(gen.Dir)}
	} else {
		if err := linkTree(Dir(base.Dir), Dir(gen.Dir)); err != nil {
			return nil, fmt.Errorf("linking the BM25 index: %w", err)
		}
		if idx, err = openBleve(Dir(gen.Dir), false); err != nil {
			return nil, fmt.Errorf("opening the copied BM25 index: %w", err)
		}
	}
	return &Writer{idx: idx, docs: docs}, nil
}

// Open opens gen's bleve index read-only, to score with sc (bleve filters on the date and
// source fields it indexed, without meta). A panic of bleve on damaged
// files, while opening or in a later search, comes back as a *backend.DamagedError. It does
// not check the files against the manifest: the indexer does that first.
func (Engine) Open(ctx context.Context, gen backend.Gen, sc backend.Scoring, _ backend.Meta) (backend.LexicalReader, error) {
	return Open(gen.Dir, sc)
}

// Open is Engine.Open with its concrete result.
func Open(genDir string, sc backend.Scoring) (*Reader, error) {
	if err := setParams(sc.Params); err != nil {
		return nil, err
	}
	idx, err := openBleve(Dir(genDir), true)
	if err != nil {
		return nil, err
	}
	return &Reader{idx: idx, stats: statsFor(sc.Stats)}, nil
}

// Drop removes gen's bleve index.
func (Engine) Drop(ctx context.Context, gen backend.Gen) error { return os.RemoveAll(Dir(gen.Dir)) }

// mutableInPlace names the files of a bleve scorch index that bleve rewrites in place: the
// bolt database of snapshots and deletions, and the index metadata. Everything else (the
// *.zap segments) is written once, so a derived generation can share them by hard link.
func mutableInPlace(name string) bool {
	return strings.HasSuffix(name, ".bolt") || name == "index_meta.json"
}

// linkTree reproduces the tree src at dst: immutable files hard-linked, files bleve mutates
// copied.
func linkTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		if mutableInPlace(d.Name()) {
			return atomicfile.Copy(path, to)
		}
		return atomicfile.LinkOrCopy(path, to)
	})
}
