package indexer

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/hnswvec"
	"github.com/kairos-rag/kairos/indexer/backend/kpst"
	"github.com/kairos-rag/kairos/indexer/doctable"
	"github.com/kairos-rag/kairos/indexer/manifest"
	"github.com/kairos-rag/kairos/internal/hnsw"
)

// Generation is one committed generation of an index, opened for reading.
type Generation struct {
	Dir      string
	Manifest *Manifest
	Passages backend.Passages      // the live passages, wherever they are kept
	Lexical  backend.LexicalReader // holds exactly the live passages
	Vectors  backend.VectorReader  // nil when the index has no embeddings; tombstoned keys deleted

	src   genSource   // where the generation lives: its files (dirGen) or a remote store (remoteGen)
	store *kpst.Store // a local generation's passage store (Passages), closed with it; nil on Qdrant
}

// docTable reads the generation's document table, checked against the manifest.
func (g *Generation) docTable(ctx context.Context) (map[string]*doctable.Entry, error) {
	return g.src.docTable(ctx, g)
}

// docTableFile opens the generation's document table to be read as a stream (a build that
// resumes from it merges it with what it adds: indexer/doctable/log.go).
func (g *Generation) docTableFile(ctx context.Context) (io.ReadSeeker, io.Closer, error) {
	return g.src.docTableFile(ctx, g)
}

// OpenOptions say how a generation is opened.
type OpenOptions struct {
	// Level is how thoroughly the files are checked against the manifest first.
	Level CheckLevel
	// BM25 are the parameters the lexical part scores with; zero leaves the engine's.
	BM25 backend.BM25Params
	// Engines read the lexical and vector parts (zero: the local engines).
	Engines Engines
	// SkipVectors leaves the vector part closed (a writer that does not need it).
	SkipVectors bool
	// Trusted skips the checksums of the passage store: the generation was just written and
	// synced by this process (a checkpoint the build goes on from).
	Trusted bool
	// BinaryRescore is how a local graph with binary codes rescores its walk's candidates
	// (hnsw.LoadOptions.BinaryRescore, for the default vector engine); set for any other
	// index (int8 codes, no vectors, a cluster), the open is refused rather than the option
	// ignored.
	BinaryRescore string
}

// Open opens the live generation of the index at dir for reading, after the cheap check of
// its files (CheckCheap). Later commits do not affect an open Generation: it keeps reading the
// files of its own generation. A damaged file is reported as a *DamagedError (ErrDamaged).
func Open(dir string) (*Generation, error) {
	return OpenChecked(context.Background(), dir, CheckCheap)
}

// OpenChecked opens the live generation of the index at dir after checking its files at
// level; CheckFull hashes every file (serve --verify).
func OpenChecked(ctx context.Context, dir string, level CheckLevel) (*Generation, error) {
	return OpenWith(ctx, dir, OpenOptions{Level: level})
}

// OpenWith opens the live generation of the index at dir as o says. dir may also name an
// index on a Qdrant cluster (ParseLocation); o.Level, Engines and Trusted then do not apply.
func OpenWith(ctx context.Context, dir string, o OpenOptions) (*Generation, error) {
	st, err := storeOf(dir, nil)
	if err != nil {
		return nil, err
	}
	return st.Open(ctx, o)
}

// OpenGeneration opens one generation directory (live, older or a checkpoint) for reading.
func OpenGeneration(genDir string) (*Generation, error) {
	return openGen(context.Background(), genDir, OpenOptions{})
}

// openGen checks the files of gen against its manifest before any parser reads them, then
// opens the store and the engines' parts. Every failure to read a file that the checks passed
// is reported as damage of that file too: the manifest promised it readable.
func openGen(ctx context.Context, gen string, o OpenOptions) (*Generation, error) {
	man, err := ReadManifest(gen)
	if err != nil {
		return nil, err
	}
	if o.BinaryRescore != "" { // refused from the manifest, before the files are hashed
		if man.Dense == nil || man.Dense.HNSW.CodesKind() != hnsw.CodesBinary {
			return nil, fmt.Errorf("%s: binary rescoring (--binary-rescore) applies to an index with binary codes (kairos index --vectors binary)", gen)
		}
		if o.Engines.Vectors == nil {
			o.Engines.Vectors = hnswvec.Engine{BinaryRescore: o.BinaryRescore}
		}
	}
	if err := checkFiles(ctx, gen, man, o.Level); err != nil {
		return nil, err
	}
	eng, err := o.Engines.withDefaults(man.Options.Lexical, HNSWParams{})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", gen, err)
	}
	g := backend.Gen{Name: manifest.GenerationName(man.Generation), Dir: gen}
	store, err := openLocalStore(ctx, eng.Passages, g, man, o.Trusted)
	if err != nil {
		return nil, asDamaged(gen, err)
	}
	var stats backend.CollectionStats
	if st := man.BM25; st != nil {
		stats = st.Collection()
	}
	lex, err := eng.Lexical.Open(ctx, g, backend.Scoring{Params: o.BM25, Stats: stats}, store)
	if err != nil {
		store.Close()
		if errors.Is(err, backend.ErrScoring) {
			return nil, err // a parameter conflict, not damage
		}
		var de *DamagedError
		if !errors.As(err, &de) {
			de = &DamagedError{Path: lexicalDir(gen, man.Options.Lexical), What: "opening: " + err.Error()}
		}
		return nil, damagedBM25File(gen, man, de)
	}
	var vecs backend.VectorReader
	if !o.SkipVectors && man.Dense != nil {
		if vecs, err = openVectors(ctx, eng.Vectors, g, man, store); err != nil {
			lex.Close()
			store.Close()
			return nil, &DamagedError{Path: hnswvec.Path(gen), What: err.Error()}
		}
	}
	return &Generation{Dir: gen, Manifest: man, store: store, Passages: store, Lexical: lex, Vectors: vecs, src: dirGen{}}, nil
}

// asDamaged marks err, an error reading the files of gen, as damage unless it already is.
func asDamaged(gen string, err error) error {
	if errors.Is(err, ErrDamaged) {
		return err
	}
	return &DamagedError{Path: gen, What: err.Error()}
}

// openLocalStore opens the passage part of the local generation g with eng, which must be
// the local store: the Generation closes it (Passages has no Close), the vector engine
// reopens with it (backend.Reopener) and verify reads its tombstones.
func openLocalStore(ctx context.Context, eng backend.PassageStore, g backend.Gen, man *Manifest, trusted bool) (*kpst.Store, error) {
	p, err := eng.Open(ctx, g, passageLayout(man), trusted)
	if err != nil {
		return nil, err
	}
	store, ok := p.(*kpst.Store)
	if !ok {
		return nil, fmt.Errorf("%s: the passages of a local generation are not a local store (%T)", g.Dir, p)
	}
	return store, nil
}

// Close releases the generation's files.
func (g *Generation) Close() error {
	var vecErr error
	if g.Vectors != nil {
		vecErr = g.Vectors.Close()
	}
	return errors.Join(g.Lexical.Close(), vecErr, g.src.close(g))
}
