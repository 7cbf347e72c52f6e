package qdrant

import (
	"context"
	"errors"
	"fmt"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/doctable"
	"github.com/kairos-rag/kairos/indexer/genstore"
	"github.com/kairos-rag/kairos/indexer/manifest"
)

// Manifest reads the manifest record of the live generation; the error wraps
// manifest.ErrNoIndex when there is none.
func (s *Store) Manifest(ctx context.Context) (*manifest.Manifest, error) {
	e, err := s.connect(ctx, StoreOptions{}, placeholderDim)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	_, man, err := s.liveManifest(ctx, e)
	return man, err
}

// liveManifest resolves the alias and reads the manifest record of its collection.
func (s *Store) liveManifest(ctx context.Context, e *Engine) (string, *manifest.Manifest, error) {
	coll, err := e.Live(ctx)
	if err != nil {
		return "", nil, err
	}
	if coll == "" {
		return "", nil, fmt.Errorf("%s: %w", s, manifest.ErrNoIndex)
	}
	man, err := e.ReadManifest(ctx, coll)
	return coll, man, err
}

// live connects to the cluster and reads the manifest of the live generation, reconnecting
// for the dimension of its vectors.
func (s *Store) live(ctx context.Context) (*Engine, string, *manifest.Manifest, error) {
	e, err := s.connect(ctx, StoreOptions{}, placeholderDim)
	if err != nil {
		return nil, "", nil, err
	}
	coll, man, err := s.liveManifest(ctx, e)
	if err == nil && man.Dense != nil && man.Dense.Model.Dim != placeholderDim {
		e.Close()
		if e, err = s.connect(ctx, StoreOptions{}, man.Dense.Model.Dim); err != nil {
			return nil, "", nil, err
		}
	}
	if err != nil {
		e.Close()
		return nil, "", nil, err
	}
	return e, coll, man, nil
}

// Open opens the live generation: the alias resolves to a collection, whose manifest record
// says what the generation holds.
func (s *Store) Open(ctx context.Context, o genstore.ReadOptions) (*genstore.Parts, error) {
	e, coll, man, err := s.live(ctx)
	if err != nil {
		return nil, err
	}
	return s.parts(ctx, e, coll, man, o)
}

// OpenGen opens generation gen (a checkpoint: committed, not live), whose vectors have
// dimension dim (0: an index without embeddings).
func (s *Store) OpenGen(ctx context.Context, gen, dim int) (*genstore.Parts, error) {
	if dim == 0 {
		dim = placeholderDim
	}
	e, err := s.connect(ctx, StoreOptions{}, dim)
	if err != nil {
		return nil, err
	}
	coll := e.Collection(manifest.GenerationName(gen))
	man, err := e.ReadManifest(ctx, coll)
	if err != nil {
		e.Close()
		return nil, err
	}
	return s.parts(ctx, e, coll, man, genstore.ReadOptions{})
}

// parts opens the passages, BM25 and vectors of collection coll, described by man; the
// Parts own e, which is closed on failure.
func (s *Store) parts(ctx context.Context, e *Engine, coll string, man *manifest.Manifest, o genstore.ReadOptions) (*genstore.Parts, error) {
	g := backend.Gen{Name: manifest.GenerationName(man.Generation)}
	where := s.String() + " (collection " + coll + ")"
	fail := func(err error) (*genstore.Parts, error) {
		e.Close()
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	var stats backend.CollectionStats
	if st := man.BM25; st != nil {
		stats = st.Collection()
	}
	passages, err := e.OpenPassages(ctx, g)
	if err != nil {
		return fail(err)
	}
	if passages.Live() != man.Counts.Passages {
		return fail(&backend.DamagedError{Path: where, What: fmt.Sprintf("%d passages, the manifest says %d", passages.Live(), man.Counts.Passages)})
	}
	lex, err := e.Lexical().Open(ctx, g, backend.Scoring{Params: o.BM25, Stats: stats}, passages)
	if err != nil {
		return fail(err)
	}
	var vecs backend.VectorReader
	if !o.SkipVectors && man.Dense != nil {
		if vecs, err = e.Vectors().Open(ctx, g, passages); err != nil {
			return fail(err)
		}
		if vecs.Len() != man.Dense.Vectors {
			return fail(&backend.DamagedError{Path: where, What: fmt.Sprintf("%d dense vectors, the manifest says %d", vecs.Len(), man.Dense.Vectors)})
		}
	}
	return &genstore.Parts{Where: where, Manifest: man, Passages: passages, Lexical: lex, Vectors: vecs,
		DocTable: func(ctx context.Context) ([]byte, error) { return e.ReadDocTable(ctx, coll, man) },
		Close:    e.Close}, nil
}

// Checkpoints on Qdrant. A checkpoint is a complete generation (its points, BM25 metadata,
// document table and manifest records) that the alias does not name, with a third record: the
// checkpoint itself (inputs with their sha256, options, how far the build had read), written
// last. The build goes on in a new collection copied from it. After a crash, a resumed build
// finds the newest collection above the live one that holds a checkpoint record and
// continues from it; collections without one (an unfinished writer's) are dropped by the next
// commit.

// SaveCheckpoint stores generation gen, sealed in dir, as the build's checkpoint: its
// records, then cp; Drop keeps it from then on.
func (s *Store) SaveCheckpoint(ctx context.Context, gen int, dir string, man *manifest.Manifest, cp *manifest.Checkpoint) error {
	e, err := s.engine(ctx)
	if err != nil {
		return err
	}
	if err := s.store(ctx, e, gen, dir, man); err != nil {
		return err
	}
	if err := e.WriteCheckpoint(ctx, gen, cp); err != nil {
		return err
	}
	s.keep = gen
	s.removeScratch(dir)
	return nil
}

// PendingCheckpoint returns the newest checkpoint above the live generation, nil when there
// is none.
func (s *Store) PendingCheckpoint(ctx context.Context) (*manifest.Checkpoint, error) {
	live, err := s.Live(ctx)
	if err != nil {
		return nil, err
	}
	return s.e.PendingCheckpoint(ctx, live)
}

// GenManifest reads the manifest record of the generation named gen (a checkpoint's:
// committed, not live).
func (s *Store) GenManifest(ctx context.Context, gen string) (*manifest.Manifest, error) {
	e, err := s.engine(ctx)
	if err != nil {
		return nil, err
	}
	return e.ReadManifest(ctx, e.Collection(gen))
}

// Verify checks the live generation: the manifest record and its checksum, the document
// table record against the manifest's sum, that the table lists exactly the passages the
// collection holds, and the engine's checks (counts, BM25 metadata, every passage with its
// BM25 weights and, with embeddings, its dense vector).
func (s *Store) Verify(ctx context.Context) (*genstore.VerifyReport, error) {
	e, coll, man, err := s.live(ctx)
	if err != nil {
		var de *backend.DamagedError
		if errors.As(err, &de) {
			rep := &genstore.VerifyReport{Generation: s.String()}
			rep.Add(de.Path, de.What)
			return rep, nil
		}
		return nil, err
	}
	defer e.Close()
	where := s.String() + " (collection " + coll + ")"
	rep := &genstore.VerifyReport{Generation: where}
	bad := func(what string, format string, a ...any) { rep.Add(where+" "+what, fmt.Sprintf(format, a...)) }
	bg := backend.Gen{Name: manifest.GenerationName(man.Generation)}
	counts, err := e.VerifyParts(ctx, bg, man.Dense != nil)
	rep.Passages = counts.Passages
	if err != nil {
		bad("points", "%v", err)
	}
	if counts.Passages != man.Counts.Passages {
		bad("points", "%d passages, the manifest says %d", counts.Passages, man.Counts.Passages)
	}
	if man.Dense != nil && counts.Dense != man.Dense.Vectors {
		bad("points", "%d dense vectors, the manifest says %d", counts.Dense, man.Dense.Vectors)
	}
	rep.Files++
	docs, err := e.ReadDocTable(ctx, coll, man)
	if err != nil {
		var de *backend.DamagedError
		if errors.As(err, &de) {
			err = errors.New(de.What)
		}
		bad("document table", "%v", err)
		return rep, nil
	}
	table, err := doctable.Parse(docs)
	if err != nil {
		bad("document table", "%v", err)
		return rep, nil
	}
	lex, err := e.Lexical().Open(ctx, bg, backend.Scoring{}, nil)
	if err != nil {
		bad("BM25", "opening: %v", err)
		return rep, nil
	}
	defer lex.Close()
	var keys []uint32
	for _, d := range table {
		keys = append(keys, d.Keys...)
	}
	if len(keys) != counts.Passages {
		bad("document table", "lists %d passages, the collection holds %d", len(keys), counts.Passages)
	}
	const chunk = 1000
	missing := 0
	for lo := 0; lo < len(keys); lo += chunk {
		has, err := lex.Has(ctx, keys[lo:min(lo+chunk, len(keys))])
		if err != nil {
			return nil, err
		}
		for _, ok := range has {
			if !ok {
				missing++
			}
		}
	}
	if missing > 0 {
		bad("document table", "%d of its passages are missing from the collection", missing)
	}
	return rep, nil
}
