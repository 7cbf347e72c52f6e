package indexer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/qdrant"
)

// Checkpoints on Qdrant. A checkpoint is a complete generation (its points, BM25 metadata,
// document table and manifest records) that the alias does not name, with a third record: the
// checkpoint itself (inputs with their sha256, options, how far the build had read), written
// last. The build goes on in a new collection copied from it. After a crash, Resume finds the
// newest collection above the live one that holds a checkpoint record and continues from it;
// collections without one (an unfinished writer's) are dropped by the next commit.

// saveCheckpoint stores generation gen, sealed in dir, as a checkpoint: its records, then cp.
func (g *qdrantGens) saveCheckpoint(ctx context.Context, gen int, dir string, man *Manifest, cp *checkpoint) error {
	if err := g.store(ctx, gen, dir, man); err != nil {
		return err
	}
	cp.Checksum = cp.sum()
	b, err := json.Marshal(cp)
	if err != nil {
		return err
	}
	if err := g.e.WriteRecord(ctx, backend.Gen{Name: genName(gen)}, recordCheckpoint, b); err != nil {
		return fmt.Errorf("storing the checkpoint: %w", err)
	}
	g.keep = gen
	if err := os.RemoveAll(dir); err != nil {
		g.log.Warn("removing scratch directory", "dir", dir, "err", err)
	}
	return nil
}

// pending returns the newest checkpoint above the live generation, nil when there is none.
func (g *qdrantGens) pending(ctx context.Context) (*checkpoint, error) {
	live, err := g.live(ctx)
	if err != nil {
		return nil, err
	}
	names, err := g.e.Generations(ctx)
	if err != nil {
		return nil, err
	}
	for i := len(names) - 1; i >= 0; i-- {
		n, ok := parseGen(names[i])
		if !ok || n <= live {
			continue
		}
		coll := g.e.Collection(names[i])
		b, err := g.e.ReadRecord(ctx, coll, recordCheckpoint)
		if errors.Is(err, qdrant.ErrNoRecord) {
			continue // an unfinished writer's collection
		}
		if err != nil {
			return nil, err
		}
		var cp checkpoint
		if err := json.Unmarshal(b, &cp); err != nil {
			return nil, fmt.Errorf("%s (collection %s) checkpoint: %w", g.loc, coll, err)
		}
		if cp.sum() != cp.Checksum || cp.Generation != names[i] {
			return nil, fmt.Errorf("%s (collection %s) checkpoint: checksum mismatch or names %q (damaged)", g.loc, coll, cp.Generation)
		}
		return &cp, nil
	}
	return nil, nil
}

// checkpointQdrant commits the sealed generation gen as a checkpoint at pos and goes on in a
// new generation derived from it, with docs, its document table, carried over in memory.
func (d *driver) checkpointQdrant(ctx context.Context, g *qdrantGens, gen int, man *Manifest, docs docTables, pos position) error {
	cp := checkpoint{Generation: genName(gen), Position: pos, Inputs: man.Inputs, Options: d.opts.Build, SkipBad: d.opts.SkipBad}
	if d.opts.Encoder != nil {
		id := d.opts.Encoder.Identity()
		h := d.opts.HNSW // the collection has no graph of Kairos's: the options asked for
		cp.Model, cp.HNSW = &id, &h
	}
	if err := g.saveCheckpoint(ctx, gen, d.tmp, man, &cp); err != nil {
		return fmt.Errorf("writing checkpoint: %w", err)
	}
	d.tmp = ""
	d.checkpoints++
	if err := d.opts.at("checkpoint-recorded"); err != nil {
		return err
	}
	if err := g.clean(ctx, d.prev, d.prev); err != nil { // drops the previous checkpoint
		d.opts.Logger.Warn("removing old checkpoints", "index", g.loc.String(), "err", err)
	}
	base, err := openQdrantGen(ctx, g.loc, gen, denseDim(man), OpenOptions{})
	if err != nil {
		return fmt.Errorf("reopening checkpoint: %w", err)
	}
	d.releaseCheckpointBase()
	d.cpBase = base
	return d.open(ctx, base, docs)
}

// denseDim is the dimension of the collections of the index man describes.
func denseDim(man *Manifest) int {
	if man.Dense != nil {
		return man.Dense.Model.Dim
	}
	return placeholderDim
}

// resumeQdrant continues the build whose checkpoint is on the cluster of loc, or builds
// from scratch when there is none. opts are validated.
func resumeQdrant(ctx context.Context, opts *Options, loc Location) (*Summary, error) {
	e, err := connectBuild(ctx, opts, loc)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	g := prepareQdrant(opts, e, loc)
	cp, err := g.pending(ctx)
	if err != nil {
		return nil, err
	}
	if cp == nil {
		opts.Logger.Info("no checkpoint: building from scratch", "index", loc.String())
		sum, err := drive(ctx, opts, runSpec{mode: modeAppend})
		if sum != nil {
			sum.NoCheckpoint = true
		}
		return sum, err
	}
	if err := cp.matches(opts); err != nil {
		return nil, fmt.Errorf("cannot resume the build in %s: %w", loc, err)
	}
	n, _ := parseGen(cp.Generation)
	base, err := openQdrantGen(ctx, loc, n, buildDim(opts), OpenOptions{})
	if err != nil {
		return nil, fmt.Errorf("opening checkpoint %s: %w", cp.Generation, err)
	}
	defer base.Close()
	g.keep = n
	return drive(ctx, opts, runSpec{mode: modeAppend, base: base, from: cp.Position})
}
