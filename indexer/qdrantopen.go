package indexer

import (
	"context"
	"fmt"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/qdrant"
)

// openQdrant opens the live generation of the index on the cluster of loc: the alias
// resolves to a collection, whose manifest record says what the generation holds.
func openQdrant(ctx context.Context, loc Location, o OpenOptions) (*Generation, error) {
	e, coll, man, err := liveQdrant(ctx, loc)
	if err != nil {
		return nil, err
	}
	return openQdrantParts(ctx, e, loc, coll, man, o)
}

// openQdrantGen opens generation gen (a checkpoint: committed, not live) of the index on
// the cluster of loc, whose vectors have dimension dim.
func openQdrantGen(ctx context.Context, loc Location, gen, dim int, o OpenOptions) (*Generation, error) {
	e, err := connectQdrant(ctx, loc.Qdrant, QdrantOptions{}, dim, nil)
	if err != nil {
		return nil, err
	}
	coll := e.Collection(genName(gen))
	man, err := readManifestRecord(ctx, e, loc, coll)
	if err != nil {
		e.Close()
		return nil, err
	}
	return openQdrantParts(ctx, e, loc, coll, man, o)
}

// openQdrantParts opens the passages, BM25 and vectors of collection coll, described by man;
// the Generation owns e, which is closed on failure.
func openQdrantParts(ctx context.Context, e *qdrant.Engine, loc Location, coll string, man *Manifest, o OpenOptions) (*Generation, error) {
	g := backend.Gen{Name: genName(man.Generation)}
	where := loc.String() + " (collection " + coll + ")"
	fail := func(err error) (*Generation, error) {
		e.Close()
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	var stats backend.CollectionStats
	if st := man.BM25; st != nil {
		stats = st.collection()
	}
	passages, err := e.OpenPassages(ctx, g)
	if err != nil {
		return fail(err)
	}
	if passages.Live() != man.Counts.Passages {
		return fail(&DamagedError{Path: where, What: fmt.Sprintf("%d passages, the manifest says %d", passages.Live(), man.Counts.Passages)})
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
			return fail(&DamagedError{Path: where, What: fmt.Sprintf("%d dense vectors, the manifest says %d", vecs.Len(), man.Dense.Vectors)})
		}
	}
	return &Generation{Dir: where, Manifest: man, Passages: passages, Lexical: lex, Vectors: vecs, remote: &remoteGen{e: e, coll: coll}}, nil
}

// liveQdrant connects to the cluster of loc and reads the manifest of the live generation,
// reconnecting for the dimension of its vectors.
func liveQdrant(ctx context.Context, loc Location) (*qdrant.Engine, string, *Manifest, error) {
	e, err := connectQdrant(ctx, loc.Qdrant, QdrantOptions{}, placeholderDim, nil)
	if err != nil {
		return nil, "", nil, err
	}
	coll, man, err := readLiveManifest(ctx, e, loc)
	if err == nil && man.Dense != nil && man.Dense.Model.Dim != placeholderDim {
		e.Close()
		if e, err = connectQdrant(ctx, loc.Qdrant, QdrantOptions{}, man.Dense.Model.Dim, nil); err != nil {
			return nil, "", nil, err
		}
	}
	if err != nil {
		e.Close()
		return nil, "", nil, err
	}
	return e, coll, man, nil
}

func readLiveManifest(ctx context.Context, e *qdrant.Engine, loc Location) (string, *Manifest, error) {
	coll, err := e.Live(ctx)
	if err != nil {
		return "", nil, err
	}
	if coll == "" {
		return "", nil, fmt.Errorf("%s: %w", loc, ErrNoIndex)
	}
	man, err := readManifestRecord(ctx, e, loc, coll)
	return coll, man, err
}

// readManifestRecord reads and checks the manifest record of collection coll.
func readManifestRecord(ctx context.Context, e *qdrant.Engine, loc Location, coll string) (*Manifest, error) {
	b, err := e.ReadRecord(ctx, coll, recordManifest)
	if err != nil {
		return nil, &DamagedError{Path: loc.String() + " (collection " + coll + ")", What: "manifest: " + err.Error()}
	}
	man, err := parseManifest(b, loc.String()+" (collection "+coll+", manifest)")
	if err != nil {
		return nil, err
	}
	if want := e.Collection(genName(man.Generation)); want != coll {
		return nil, &DamagedError{Path: loc.String() + " (collection " + coll + ")", What: "its manifest describes generation " + genName(man.Generation)}
	}
	return man, nil
}

// LiveManifest returns the manifest of the live generation of the index at loc (a directory
// or a qdrant:// location); the error wraps ErrNoIndex when there is none.
func LiveManifest(ctx context.Context, loc string) (*Manifest, error) {
	if !IsQdrant(loc) {
		gen, err := Current(loc)
		if err != nil {
			return nil, err
		}
		return ReadManifest(gen)
	}
	l, err := ParseLocation(loc)
	if err != nil {
		return nil, err
	}
	e, err := connectQdrant(ctx, l.Qdrant, QdrantOptions{}, placeholderDim, nil)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	_, man, err := readLiveManifest(ctx, e, l)
	return man, err
}
