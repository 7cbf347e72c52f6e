package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/hnswvec"
	"github.com/kairos-rag/kairos/indexer/backend/ivfvec"
	"github.com/kairos-rag/kairos/indexer/backend/kpst"
	"github.com/kairos-rag/kairos/indexer/manifest"
	"github.com/kairos-rag/kairos/indexer/store"
	"github.com/kairos-rag/kairos/internal/framing"
	"github.com/kairos-rag/kairos/internal/hnsw"
)

// Open reads the manifest of generation n (0: the live one) and checks the generation's
// files against it at o.Level, before any parser reads them, then opens the passage store
// and the engines' parts. Every failure to read a file that the checks passed is reported as
// damage of that file too: the manifest promised it readable.
func (s *Store) Open(ctx context.Context, n int, o store.ReadOptions) (*store.Parts, error) {
	man, err := s.Manifest(ctx, n)
	if err != nil {
		return nil, err
	}
	gen := s.genDir(man.Generation)
	if o.BinaryRescore != "" { // refused from the manifest, before the files are hashed
		if man.Dense == nil || man.Dense.HNSW.CodesKind() != hnsw.CodesBinary {
			return nil, fmt.Errorf("%s: binary rescoring (--binary-rescore) applies to an index with binary codes (kairos index --vectors binary)", gen)
		}
	}
	if err := checkFiles(ctx, gen, man, o.Level); err != nil {
		return nil, err
	}
	lexEngine, err := lexicalNamed(man.Options.Lexical)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", gen, err)
	}
	g := backend.Gen{Name: manifest.GenerationName(man.Generation), Dir: gen}
	passages, err := kpst.Open(g, man.PassageLayout(), o.Trusted)
	if err != nil {
		return nil, asDamaged(gen, err)
	}
	var stats backend.CollectionStats
	if st := man.BM25; st != nil {
		stats = st.Collection()
	}
	lex, err := lexEngine.new(0).Open(ctx, g, backend.Scoring{Params: o.BM25, Stats: stats}, passages)
	if err != nil {
		passages.Close()
		if errors.Is(err, backend.ErrScoring) {
			return nil, err // a parameter conflict, not damage
		}
		var de *backend.DamagedError
		if !errors.As(err, &de) {
			de = &backend.DamagedError{Path: lexicalDir(gen, man.Options.Lexical), What: "opening: " + err.Error()}
		}
		return nil, damagedLexicalFile(gen, man, de)
	}
	var vecs backend.VectorReader
	if !o.SkipVectors && man.Dense != nil {
		v, err := openVectors(gen, man, passages, hnsw.LoadOptions{Mapped: true, BinaryRescore: o.BinaryRescore})
		if err != nil {
			lex.Close()
			passages.Close()
			return nil, err
		}
		vecs = v
	}
	return &store.Parts{Where: gen, Manifest: man, Passages: passages, Lexical: lex, Vectors: vecs, Release: passages.Close,
		Outdated: outdated(man, vecs)}, nil
}

// outdated is Parts.Outdated of a generation whose manifest is man and vectors vecs.
func outdated(man *manifest.Manifest, vecs backend.VectorReader) string {
	iv, ok := vecs.(*ivfvec.Reader)
	if !ok || iv.RefineBits() > 0 || (man.Dense.IVF != nil && man.Dense.IVF.NoRefine) {
		return ""
	}
	return "an inverted file without refinement codes (written by a kairos before them): its searches rescore several times as many candidates"
}

// openVectors opens the vector part of the generation at gen, of the kind its manifest records,
// and checks it against the manifest; a failure is damage of the part's file (the graph) or
// directory (the inverted file, whose errors name the file).
func openVectors(gen string, man *manifest.Manifest, meta backend.Meta, o hnsw.LoadOptions) (backend.VectorReader, error) {
	if man.Dense.IndexKind() == manifest.VectorIndexIVF {
		v, err := ivfvec.Open(gen, meta)
		if err == nil && (v.Len() != man.Dense.Vectors || v.Dim() != man.Dense.Model.Dim) {
			v.Close()
			err = fmt.Errorf("the vector index has %d vectors of dim %d, manifest says %d of dim %d",
				v.Len(), v.Dim(), man.Dense.Vectors, man.Dense.Model.Dim)
		}
		if ve := (*framing.VersionError)(nil); errors.As(err, &ve) {
			return nil, err // written by another kairos, not damaged: the error says what to run
		}
		if err != nil {
			return nil, &backend.DamagedError{Path: ivfvec.Dir(gen), What: err.Error()}
		}
		return v, nil
	}
	v, err := openGraph(gen, man, meta, o)
	if err != nil {
		return nil, &backend.DamagedError{Path: hnswvec.Path(gen), What: err.Error()}
	}
	return v, nil
}

// openGraph opens the graph of the generation at gen and checks it against its manifest.
func openGraph(gen string, man *manifest.Manifest, meta backend.Meta, o hnsw.LoadOptions) (*hnswvec.Reader, error) {
	v, err := hnswvec.OpenWith(gen, meta, o)
	if err != nil {
		return nil, err
	}
	if v.Len() != man.Dense.Vectors || v.Dim() != man.Dense.Model.Dim {
		v.Close()
		return nil, fmt.Errorf("%s: the vector index has %d vectors of dim %d, manifest says %d of dim %d",
			gen, v.Len(), v.Dim(), man.Dense.Vectors, man.Dense.Model.Dim)
	}
	if got, want := v.Options().CodesKind(), man.Dense.HNSW.CodesKind(); got != want {
		v.Close()
		return nil, fmt.Errorf("%s: the vector index has %s codes, manifest says %s", gen, got, want)
	}
	return v, nil
}

// asDamaged marks err, an error reading the files of gen, as damage unless it already is.
func asDamaged(gen string, err error) error {
	if errors.Is(err, backend.ErrDamaged) {
		return err
	}
	return &backend.DamagedError{Path: gen, What: err.Error()}
}

// checkFiles checks the files listed in man against the disk at level. It returns the first
// damaged file as a *backend.DamagedError. Files the manifest does not list are not looked at
// here (Verify reports them).
func checkFiles(ctx context.Context, gen string, man *manifest.Manifest, level store.CheckLevel) error {
	names := make([]string, 0, len(man.Files))
	for name := range man.Files {
		names = append(names, name)
	}
	// Smallest first, ties by name, so the budget always covers the same files.
	sort.Slice(names, func(i, j int) bool {
		a, b := man.Files[names[i]], man.Files[names[j]]
		if a.Size != b.Size {
			return a.Size < b.Size
		}
		return names[i] < names[j]
	})
	for _, name := range names {
		path := filepath.Join(gen, filepath.FromSlash(name))
		want := man.Files[name]
		fi, err := os.Stat(path)
		if err != nil {
			return &backend.DamagedError{Path: path, What: "listed in the manifest but cannot be read: " + backend.WithoutPath(err)}
		}
		if !fi.Mode().IsRegular() {
			return &backend.DamagedError{Path: path, What: "not a regular file"}
		}
		if fi.Size() != want.Size {
			return &backend.DamagedError{Path: path, What: fmt.Sprintf("size %d, manifest says %d", fi.Size(), want.Size)}
		}
	}
	budget := int64(store.CheapHashBudget)
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return err
		}
		want := man.Files[name]
		if level == store.CheckCheap {
			if want.Size > budget {
				break
			}
			budget -= want.Size
		}
		path := filepath.Join(gen, filepath.FromSlash(name))
		got, err := manifest.SumFile(path)
		if err != nil {
			return &backend.DamagedError{Path: path, What: "reading: " + backend.WithoutPath(err)}
		}
		if got.Size != want.Size || got.SHA256 != want.SHA256 {
			return &backend.DamagedError{Path: path, What: fmt.Sprintf("sha256 %s, manifest says %s", got.SHA256, want.SHA256)}
		}
	}
	return nil
}

// damagedLexicalFile names the lexical file to blame when the engine failed on gen (bleve
// panics on a damaged file): the first file of the lexical part that fails a full check
// against the manifest, or the part's directory when all match (the damage then predates the
// manifest, or the manifest has no sums).
func damagedLexicalFile(gen string, man *manifest.Manifest, cause *backend.DamagedError) error {
	sub := &manifest.Manifest{Files: map[string]manifest.FileSum{}}
	for name, sum := range man.Files {
		if inLexicalDir(gen, man, name) {
			sub.Files[name] = sum
		}
	}
	if err := checkFiles(context.Background(), gen, sub, store.CheckFull); err != nil {
		var de *backend.DamagedError
		if errors.As(err, &de) {
			return &backend.DamagedError{Path: de.Path, What: de.What + "; bleve: " + cause.What}
		}
	}
	return cause
}
