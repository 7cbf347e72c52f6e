package indexer

import (
	"context"
	"os"
	"path/filepath"
)

// generations is where an index keeps its generations: the lifecycle a build goes through
// (number a new generation, write it, publish it, drop what is no longer needed). dirGens
// keeps them in a local directory; qdrantGens on a Qdrant cluster (qdrantgens.go).
type generations interface {
	// live is the number of the live generation, 0 when there is none.
	live(ctx context.Context) (int, error)
	// create numbers a new generation and makes the empty local directory its writer fills:
	// the generation itself (dirGens), or scratch space for what a remote one keeps locally
	// while it is written (qdrantGens).
	create(ctx context.Context) (gen int, dir string, err error)
	// publish makes generation gen, written and sealed in dir, live.
	publish(ctx context.Context, gen int, dir string, man *Manifest) error
	// clean drops every generation other than live and prev, and unfinished ones.
	clean(ctx context.Context, live, prev int) error
	// discard removes what a writer of gen that did not publish left.
	discard(gen int, dir string)
	// checkpoints reports whether checkpoint generations are kept (CheckpointEvery, Resume).
	checkpoints() bool
	// dropCheckpoint forgets the build's checkpoint once the build is committed; the next
	// clean removes its generation.
	dropCheckpoint() error
}

// dirGens keeps generations in the index directory (generation.go describes the layout).
type dirGens struct {
	dir string
	at  func(string) error // Options.at
}

var _ generations = dirGens{}

func (g dirGens) live(context.Context) (int, error) { return liveGen(g.dir), nil }

func (g dirGens) create(context.Context) (int, string, error) {
	gen, err := nextGen(g.dir)
	if err != nil {
		return 0, "", err
	}
	tmp := filepath.Join(g.dir, genName(gen)+tmpSuffix)
	if err := os.RemoveAll(tmp); err != nil {
		return 0, "", err
	}
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return 0, "", err
	}
	return gen, tmp, nil
}

func (g dirGens) publish(_ context.Context, gen int, dir string, _ *Manifest) error {
	return commitGen(g.dir, dir, gen, g.at)
}

func (g dirGens) clean(_ context.Context, live, prev int) error { return cleanOld(g.dir, live, prev) }

func (g dirGens) discard(_ int, dir string) { os.RemoveAll(dir) }

func (g dirGens) checkpoints() bool { return true }

func (g dirGens) dropCheckpoint() error { return removeCheckpoint(g.dir) }

// gens returns where o's index keeps its generations: the local directory unless a remote
// store was chosen (buildQdrant).
func (o *Options) gens() generations {
	if o.remote != nil {
		return o.remote
	}
	return dirGens{dir: o.Dir, at: o.at}
}
