package indexer

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/kairos-rag/kairos/indexer/manifest"
)

// A build with Options.CheckpointEvery commits checkpoint generations as it goes. They are
// complete generations (a manifest, fsynced, renamed into place) that CURRENT does not name;
// DIR/CHECKPOINT names the latest and says how far the build had read (manifest.Checkpoint,
// whose package owns the record).
type (
	checkpoint    = manifest.Checkpoint
	embedPosition = manifest.EmbedPosition
)

// CheckpointGeneration returns the path of the checkpoint generation of the index at dir, or
// "" when no resumable build is pending or the checkpoint is not a directory (Qdrant).
func CheckpointGeneration(dir string) (string, error) {
	st, err := storeOf(dir, nil)
	if err != nil {
		return "", err
	}
	return st.checkpointDir()
}

// CheckpointInfo describes the checkpoint a build left behind, for a person deciding
// whether to resume it.
type CheckpointInfo struct {
	Generation int    // the checkpoint generation (not live)
	Passages   int    // passages it holds
	Vectors    int    // of which embedded (0 without an encoder)
	Input      string // the input reading had reached; "" when every input was read
	Docs       int    // documents of Input read
	// Created is when the checkpoint was written, so that a build that failed can tell its
	// own checkpoint from one an earlier build left.
	Created time.Time
}

// PendingCheckpoint describes the checkpoint of the index at dir, or returns nil when no
// resumable build is pending.
func PendingCheckpoint(ctx context.Context, dir string) (*CheckpointInfo, error) {
	st, err := storeOf(dir, nil)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	return st.PendingCheckpoint(ctx)
}

// checkpointInfo describes c, whose generation man describes.
func checkpointInfo(c *checkpoint, man *Manifest) *CheckpointInfo {
	info := &CheckpointInfo{Generation: man.Generation, Passages: man.Counts.Passages, Docs: c.Position.Docs, Created: man.Created}
	if man.Dense != nil {
		info.Vectors = man.Dense.Vectors
	}
	if c.Position.Input < len(c.Inputs) {
		info.Input = c.Inputs[c.Position.Input].Path
	}
	return info
}

// Resume continues the build whose checkpoint is in opts.Dir, with the same inputs and
// options, and ends with the passages a clean build would have. Without a checkpoint it is a
// clean build. It refuses inputs whose sha256 or options differ from the checkpoint's.
func Resume(ctx context.Context, opts Options) (*Summary, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("build options: %w", err)
	}
	if len(opts.Inputs) == 0 {
		return nil, errors.New("build options: no input")
	}
	st, err := storeOf(opts.Dir, &opts)
	if err != nil {
		return nil, err
	}
	if err := opts.resolveLanguage(ctx); err != nil {
		return nil, err
	}
	opts.store = st
	return st.resume(ctx, &opts)
}

// checkpointMatches reports how o differs from the build that wrote the checkpoint c.
func checkpointMatches(c *checkpoint, o *Options) error {
	if len(o.Inputs) != len(c.Inputs) {
		return fmt.Errorf("%d inputs, the checkpointed build had %d", len(o.Inputs), len(c.Inputs))
	}
	for i, in := range o.Inputs {
		sum, err := fileSHA256(in.Path)
		if err != nil {
			return err
		}
		if sum.SHA256 != c.Inputs[i].SHA256 || sum.Size != c.Inputs[i].Size {
			return fmt.Errorf("input %d (%s) changed since the checkpoint (sha256 %.12s, was %.12s)", i+1, in.Path, sum.SHA256, c.Inputs[i].SHA256)
		}
	}
	if !reflect.DeepEqual(o.Build, c.Options) {
		return fmt.Errorf("build options %+v differ from the checkpoint's %+v", o.Build, c.Options)
	}
	if o.SkipBad != c.SkipBad {
		return fmt.Errorf("--skip-bad %v differs from the checkpoint's %v", o.SkipBad, c.SkipBad)
	}
	switch {
	case (o.Encoder == nil) != (c.Model == nil):
		return errors.New("the encoder (--model) differs from the checkpoint's")
	case o.Encoder != nil:
		if err := c.Model.Compatible(o.Encoder.Identity()); err != nil {
			return err
		}
		h := o.HNSW
		if h.M != 0 && h.M != c.HNSW.M || h.EfConstruction != 0 && h.EfConstruction != c.HNSW.EfConstruction || h.Seed != c.HNSW.Seed ||
			h.Codes != "" && h.CodesKind() != c.HNSW.CodesKind() {
			return fmt.Errorf("HNSW parameters differ from the checkpoint's %+v", *c.HNSW)
		}
	}
	return nil
}
