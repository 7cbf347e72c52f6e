package indexer

import (
	"context"
	"errors"
)

func compactGen(ctx context.Context, opts *Options, genDir string, gen int) (*Manifest, error) {
	return nil, errors.New("compaction not implemented yet")
}
