package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kairos-rag/kairos/embed"
	"github.com/kairos-rag/kairos/embed/hub"
	"github.com/kairos-rag/kairos/indexer"
)

// indexModel is the outcome of looking for a dense index's encoder when no --model was given.
type indexModel struct {
	dense bool   // the index has vectors
	dir   string // the folder found; "" when none
	note  string // one line for the person at the terminal: which folder, or why none
}

// findIndexModel looks for the sentence encoder the index at loc was built with, for a
// command given no --model: first the folder the manifest records (Identity.Dir), if it
// still holds the model file, then a pulled or copied model in the models cache whose file
// has the recorded sha256 (hub.Find). A folder found becomes m.model, with the index's
// precision and --dim unless flags chose others; the encoder then opens and search.Open
// compares its identity with the index's as it does for --model, so a folder whose files
// changed since is refused, never used. An index without vectors, or one that cannot be
// read (Open reports that), finds nothing and changes nothing.
func (m *modelFlags) findIndexModel(ctx context.Context, loc indexer.Location) indexModel {
	if m.model != "" {
		return indexModel{}
	}
	modelsRoot := m.modelsDir
	if modelsRoot == "" {
		modelsRoot = hub.DefaultRoot()
	}
	man, err := liveManifest(ctx, loc)
	if err != nil || man.Dense == nil {
		return indexModel{}
	}
	id := man.Dense.Model
	found, how := "", ""
	if id.Dir != "" && isFile(filepath.Join(id.Dir, filepath.FromSlash(id.ONNXFile))) {
		found, how = id.Dir, "the folder the index was built with"
	} else if d, err := hub.Find(modelsRoot, id.ONNXFile, id.ONNXSHA256, id.Name); err == nil && d != "" {
		found, how = d, "found in the models cache "+modelsRoot
	}
	if found == "" {
		gone := "the index does not record its model folder"
		if id.Dir != "" {
			gone = "its model folder " + id.Dir + " is gone"
			if info, err := os.Stat(id.Dir); err == nil && info.IsDir() {
				gone = "its model folder " + id.Dir + " no longer holds " + id.ONNXFile
			}
		}
		return indexModel{dense: true, note: fmt.Sprintf("%s (%s); no model in %s has its %s (sha256 %.12s)",
			id.Name, gone, modelsRoot, id.ONNXFile, id.ONNXSHA256)}
	}
	m.model = found
	if id.Kind == "" && id.Precision != "" && m.rt.Precision == embed.PrecisionAuto {
		m.rt.Precision = id.Precision
	}
	if id.FullDim != 0 && m.rt.Dim == 0 {
		m.rt.Dim = id.Dim
	}
	return indexModel{dense: true, dir: found,
		note: fmt.Sprintf("no --model: using %s (%s), %s", found, id.Name, how)}
}

func isFile(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular()
}

// liveManifest reads the manifest of the live generation of the index at loc.
func liveManifest(ctx context.Context, loc indexer.Location) (*indexer.Manifest, error) {
	ix, err := indexer.Open(ctx, loc)
	if err != nil {
		return nil, err
	}
	defer ix.Close()
	return ix.Manifest(ctx)
}
