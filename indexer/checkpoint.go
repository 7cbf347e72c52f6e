package indexer

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/manifest"
	"github.com/kairos-rag/kairos/internal/hnsw"
)

// A build commits checkpoint generations as it goes (Options.CheckpointEvery). They are
// complete generations that are not live; the store's checkpoint record names the latest and
// says how far the build had read (manifest.Checkpoint, whose package owns the record).
type (
	checkpoint    = manifest.Checkpoint
	embedPosition = manifest.EmbedPosition
)

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

// resume continues the build whose checkpoint the store holds, or builds from scratch when
// there is none; the caller holds the writer lock.
func (ix *Index) resume(ctx context.Context, opts *Options) (*Summary, error) {
	// The engines first: the store refuses what it cannot do before it is asked anything.
	probe := *opts
	if opts.lexicalFirst() {
		probe.Encoder = nil
	}
	eng, err := ix.engines(ctx, &probe, nil)
	if err != nil {
		return nil, err
	}
	eng.Close()
	cp, err := ix.st.Checkpoint(ctx)
	if err != nil {
		return nil, fmt.Errorf("finding the checkpoint of %s: %w", ix.loc, err)
	}
	if cp == nil && opts.lexicalFirst() {
		if sum, err := ix.resumeAddVectors(ctx, opts); sum != nil || err != nil {
			return sum, err
		}
	}
	if cp == nil {
		opts.Logger.Info("no checkpoint: building from scratch", "index", ix.loc.String())
		sum, err := ix.build(ctx, opts)
		if sum != nil {
			sum.NoCheckpoint = true
		}
		return sum, err
	}
	if opts.Build.Lexical == "" {
		// Naming no engine resumes in the checkpoint's ("" there: bleve, from an older build).
		opts.Build.Lexical = cp.Options.Lexical
	}
	// A lexical-first build checkpoints its BM25 half, without the encoder.
	first := opts.lexicalFirst() && cp.Model == nil
	match := *opts
	if first {
		match.Encoder = nil
	}
	eng, err = ix.engines(ctx, &match, nil) // settles what the checkpoint recorded of them
	if err != nil {
		return nil, err
	}
	defer eng.Close()
	opts.Build = match.Build
	if err := checkpointMatches(cp, &match); err != nil {
		return nil, fmt.Errorf("cannot resume the build in %s: %w", ix.loc, err)
	}
	if cp.Embedding != nil {
		eng.Close()
		return ix.resumeEmbedding(ctx, opts, cp)
	}
	n, _ := manifest.ParseGeneration(cp.Generation)
	base, err := ix.open(ctx, n, ReadOptions{})
	if err != nil {
		return nil, fmt.Errorf("opening checkpoint %s: %w", cp.Generation, err)
	}
	defer base.Close()
	spec := runSpec{mode: modeAppend, base: base, from: cp.Position}
	if first {
		return ix.buildLexicalFirst(ctx, opts, &match, eng, spec)
	}
	opts.eng = match.eng
	return ix.drive(ctx, opts, eng, spec)
}

// reopenCheckpoint opens the checkpoint generation man describes as the base the writer after
// it goes on from: trusted (this process just wrote it), its lexical reader closed (the writer
// copies the engine's parts, it never reads the base's index), and its vectors read from
// memory by reopen when the writer that committed them kept them there
// (backend.VectorCommit.Reopen: the graph), else read again.
func (ix *Index) reopenCheckpoint(ctx context.Context, man *Manifest, reopen func(backend.Meta) backend.VectorReader) (*Generation, error) {
	base, err := ix.open(ctx, man.Generation, ReadOptions{SkipVectors: reopen != nil || man.Dense == nil, Trusted: true})
	if err != nil {
		return nil, fmt.Errorf("reopening checkpoint: %w", err)
	}
	base.Lexical.Close()
	base.Lexical = nil
	if reopen != nil && man.Dense != nil {
		base.Vectors = reopen(base.Passages)
	}
	return base, nil
}

// recordVectors records in cp what the vectors of man are: the model, the kind of index and
// its parameters as the engine reported them (the local graph's, the inverted file's), else
// the graph parameters the options asked for (an engine that keeps no index of Kairos's).
func recordVectors(cp *checkpoint, opts *Options, man *Manifest) {
	id := opts.Encoder.Identity()
	cp.Model = &id
	h := opts.HNSW
	if man.Dense != nil && man.Dense.HNSW != (hnsw.Options{}) {
		h = man.Dense.HNSW
	}
	cp.HNSW = &h
	if man.Dense != nil && man.Dense.Index != "" {
		cp.VectorIndex, cp.IVF = man.Dense.Index, man.Dense.IVF
	}
}

// inputOptions describes how each input is to be read, for the checkpoint's record
// (manifest.Checkpoint.InputOptions): what decides its documents and their ids.
func inputOptions(ins []InputSpec) []string {
	out := make([]string, len(ins))
	for i, in := range ins {
		o := in.Options
		out[i] = fmt.Sprintf("format %q, source %q, FAQ columns %+v, max record bytes %d", o.Format, o.Source, o.FAQ, o.MaxRecordBytes)
	}
	return out
}

// checkpointMatches reports how o differs from the build that wrote the checkpoint c.
func checkpointMatches(c *checkpoint, o *Options) error {
	if len(o.Inputs) != len(c.Inputs) {
		return fmt.Errorf("%d inputs, the checkpointed build had %d", len(o.Inputs), len(c.Inputs))
	}
	for i, in := range o.Inputs {
		if IsStream(in.Path) || c.Inputs[i].SHA256 == "" {
			return fmt.Errorf("input %d (%s) is a stream (standard input or a pipe), read once: a resumed build cannot check that it carries what the checkpoint read; "+
				"write it to a file and index that, or start again with --force", i+1, in.Path)
		}
		sum, err := fileSHA256(in.Path)
		if err != nil {
			return err
		}
		if sum.SHA256 != c.Inputs[i].SHA256 || sum.Size != c.Inputs[i].Size {
			return fmt.Errorf("input %d (%s) changed since the checkpoint (sha256 %.12s, was %.12s)", i+1, in.Path, sum.SHA256, c.Inputs[i].SHA256)
		}
	}
	if c.InputOptions != nil {
		if len(c.InputOptions) != len(o.Inputs) {
			return fmt.Errorf("the checkpoint describes the reading of %d inputs, the build has %d", len(c.InputOptions), len(o.Inputs))
		}
		for i, want := range inputOptions(o.Inputs) {
			if want != c.InputOptions[i] {
				return fmt.Errorf("input %d (%s) is to be read with %s, the checkpointed build read it with %s: give the same --format and --source (and FAQ columns and record cap, InputSpec.Options), or start again with --force",
					i+1, o.Inputs[i].Path, want, c.InputOptions[i])
			}
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
		kind := c.VectorIndex
		if kind == "" {
			kind = VectorIndexHNSW
		}
		if o.VectorIndex != "" && o.VectorIndex != kind {
			return fmt.Errorf("--vector-index %s differs from the checkpoint's %s", o.VectorIndex, kind)
		}
		if kind == VectorIndexIVF {
			if v, p := o.IVF, c.IVF; p != nil && (v.Lists != 0 && v.Lists != p.Lists || v.Seed != 0 && v.Seed != p.Seed || v.Sample != 0 && v.Sample != p.Sample) {
				return fmt.Errorf("IVF parameters differ from the checkpoint's %+v", *p)
			}
			return nil
		}
		h := o.HNSW
		if h.M != 0 && h.M != c.HNSW.M || h.EfConstruction != 0 && h.EfConstruction != c.HNSW.EfConstruction || h.Seed != c.HNSW.Seed ||
			h.Codes != "" && h.CodesKind() != c.HNSW.CodesKind() {
			return fmt.Errorf("HNSW parameters differ from the checkpoint's %+v", *c.HNSW)
		}
	}
	return nil
}
