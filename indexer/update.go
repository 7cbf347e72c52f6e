package indexer

import (
	"context"
	"errors"
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

// Update derives a new generation from the live one: documents of the inputs that are new are
// added, ones whose content hash changed replace their old passages (tombstoned everywhere),
// unchanged ones are left alone (not re-embedded); with DeleteMissing, documents absent from
// the inputs are removed. Searches on the previous generation are unaffected; the new one goes
// live atomically.
func Update(ctx context.Context, opts UpdateOptions) (*Summary, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("update options: %w", err)
	}
	if len(opts.Inputs) == 0 {
		return nil, errors.New("update options: no input")
	}
	opts.SetDefaults()
	return derive(ctx, &opts.Options, runSpec{
		mode: modeUpdate, deleteMissing: opts.DeleteMissing,
		compact: opts.CompactRatio >= 0, compactRatio: opts.CompactRatio,
	})
}

// Delete removes documents by id from the index at opts.Dir (opts.Inputs must be empty);
// ids it does not hold are listed in Summary.NotFound.
func Delete(ctx context.Context, opts UpdateOptions, ids []string) (*Summary, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("delete options: %w", err)
	}
	if len(opts.Inputs) > 0 || len(ids) == 0 {
		return nil, errors.New("delete: give document ids and no input")
	}
	opts.SetDefaults()
	return derive(ctx, &opts.Options, runSpec{
		mode: modeUpdate, deleteIDs: ids,
		compact: opts.CompactRatio >= 0, compactRatio: opts.CompactRatio,
	})
}

// SetDefaults fills the zero fields an update defaults: CompactRatio (DefaultCompactRatio) and
// the build options' (Options.SetDefaults). Flags calls it on a copy.
func (o *UpdateOptions) SetDefaults() {
	o.Options.SetDefaults()
	if o.CompactRatio == 0 {
		o.CompactRatio = DefaultCompactRatio
	}
}

// derive runs spec on top of the live generation.
func derive(ctx context.Context, opts *Options, spec runSpec) (*Summary, error) {
	opts.CheckpointEvery = -1 // an update commits no checkpoints
	st, err := storeOf(opts.Dir, opts)
	if err != nil {
		return nil, err
	}
	opts.store = st
	return st.derive(ctx, opts, spec)
}

// adoptBase makes a derived generation split and analyse as its base did: the same passage
// size, and the base's language (see adoptLanguage).
func (o *Options) adoptBase(ctx context.Context, base *Manifest) error {
	if base.Options.MaxWords != o.Build.MaxWords {
		return fmt.Errorf("%s was built with max words %d, not %d", o.Dir, base.Options.MaxWords, o.Build.MaxWords)
	}
	return o.adoptLanguage(ctx, base)
}
