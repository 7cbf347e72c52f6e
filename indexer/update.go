package indexer

import (
	"context"
	"fmt"
)

// UpdateOptions configure Update.
type UpdateOptions struct {
	// Options are the build options; Build (MaxWords) must match the index's, and Encoder
	// its model when the index has vectors. An update commits no checkpoints.
	Options
	// DeleteMissing removes the documents of the index that are absent from the inputs.
	DeleteMissing bool
	// CompactRatio: when the new generation's tombstones exceed this share of its keys, it
	// is compacted right away. 0 means DefaultCompactRatio; negative never compacts.
	CompactRatio float64
}

// DefaultCompactRatio is the tombstone share above which an update compacts.
const DefaultCompactRatio = 0.2

// SetDefaults fills the zero fields an update defaults: CompactRatio (DefaultCompactRatio) and
// the build options' (Options.SetDefaults). Flags calls it on a copy.
func (o *UpdateOptions) SetDefaults() {
	o.Options.SetDefaults()
	if o.CompactRatio == 0 {
		o.CompactRatio = DefaultCompactRatio
	}
}

// derive runs spec (an update or a delete) on top of the live generation: the new
// generation starts as a copy of it.
func (ix *Index) derive(ctx context.Context, opts *Options, spec runSpec) (*Summary, error) {
	opts.CheckpointEvery = -1 // an update commits no checkpoints
	if _, err := ix.st.Manifest(ctx, 0); err != nil {
		return nil, err // before Lock, which would create a missing directory
	}
	unlock, err := ix.st.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	base, err := ix.Reader(ctx, ReadOptions{})
	if err != nil {
		return nil, err
	}
	defer base.Close()
	if err := opts.adoptBase(ctx, base.Manifest); err != nil {
		return nil, err
	}
	if err := opts.adoptLexical(base.Manifest); err != nil {
		return nil, err
	}
	eng, err := ix.engines(ctx, opts, base.Manifest)
	if err != nil {
		return nil, err
	}
	defer eng.Close()
	spec.base = base
	return ix.drive(ctx, opts, eng, spec)
}

// adoptBase makes a derived generation split and analyse as its base did: the same passage
// size, and the base's language (see adoptLanguage).
func (o *Options) adoptBase(ctx context.Context, base *Manifest) error {
	if base.Options.MaxWords != o.Build.MaxWords {
		return fmt.Errorf("%s was built with max words %d, not %d", o.Dir, base.Options.MaxWords, o.Build.MaxWords)
	}
	return o.adoptLanguage(ctx, base)
}
