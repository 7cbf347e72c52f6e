package cli

import (
	"context"
	"flag"
	"fmt"
	"log/slog"

	"github.com/kairos-rag/kairos/embed"
	"github.com/kairos-rag/kairos/embed/hub"
	"github.com/kairos-rag/kairos/indexer"
	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/search"
)

// modelFlags are the flags of every command that runs a model: the model folders, and how
// they run (embed.Options.Flags: backend, device, libraries) in rt.
type modelFlags struct {
	model, crossModel string
	modelsDir         string        // --models-dir: where findIndexModel looks; "" is hub.DefaultRoot()
	rt                embed.Options // ModelDir, Logger and NoSpin are set per model by options
	indexing          bool          // the model embeds batches back to back
}

func (m *modelFlags) register(fs *flag.FlagSet, cross bool) {
	fs.StringVar(&m.model, "model", "", "sentence encoder `folder` (dense and hybrid search; see kairos models)")
	if cross {
		fs.StringVar(&m.crossModel, "cross-model", "", "cross-encoder `folder` (the cross rerank stage)")
	}
	m.rt.Flags(fs)
	m.rt.BatchFlag(fs, "embed-batch")
}

// registerModelsDir registers --models-dir, for the commands that find an index's model
// without --model (findIndexModel).
func (m *modelFlags) registerModelsDir(fs *flag.FlagSet) {
	fs.StringVar(&m.modelsDir, "models-dir", "", "without --model, a dense index's model is the `folder` it was built with, else one under this models cache with the same model file (default "+hub.DefaultRoot()+", where kairos models pull puts them)")
}

// options returns the embed options for the model in dir. Query-time models (search, serve,
// chat) do not spin between calls: see embed.Options.NoSpin.
func (m *modelFlags) options(dir string, log *slog.Logger) embed.Options {
	o := m.rt
	o.ModelDir, o.Logger, o.NoSpin = dir, log, !m.indexing
	return o
}

// onDevice names a GPU the models run on (", on cuda:1"); "" on the CPU, whose messages stay
// as they were before --device existed.
func (m *modelFlags) onDevice() string {
	if !m.rt.Device.CUDA {
		return ""
	}
	return ", on " + m.rt.Device.String()
}

// encoder adapts embed's sentence encoder to the indexer's and search's interfaces.
type encoder struct{ enc *embed.Encoder }

var (
	_ indexer.PassageEncoder      = encoder{}
	_ indexer.ChunkPassageEncoder = encoder{}
	_ search.QueryEncoder         = encoder{}
	_ rerank.PairScorer           = (*embed.CrossEncoder)(nil)
)

func openEncoder(ctx context.Context, m *modelFlags, log *slog.Logger) (encoder, error) {
	enc, err := embed.OpenEncoder(ctx, m.options(m.model, log))
	if err != nil {
		return encoder{}, fmt.Errorf("opening model: %w", err) // embed's errors name the folder
	}
	return encoder{enc}, nil
}

func (e encoder) Identity() indexer.ModelIdentity {
	return e.enc.Info().Identity
}

func (e encoder) EncodePassages(ctx context.Context, texts []string) ([][]float32, error) {
	return e.enc.Encode(ctx, embed.Passage, texts)
}

// EncodePassageChunks tokenizes chunk i+1 while chunk i runs (embed.Encoder.EncodeChunks).
func (e encoder) EncodePassageChunks(ctx context.Context, chunks [][]string, each func(i int, vecs [][]float32) error) error {
	return e.enc.EncodeChunks(ctx, embed.Passage, chunks, each)
}

// ChunkSize is the encoder's sort window: today's 256 on the CPU, eight batches on a GPU.
func (e encoder) ChunkSize() int { return e.enc.SortWindow() }

func (e encoder) EncodeQuery(ctx context.Context, text string) ([]float32, error) {
	v, err := e.enc.Encode(ctx, embed.Query, []string{text})
	if err != nil {
		return nil, err
	}
	return v[0], nil
}

func (e encoder) Close() error { return e.enc.Close() }
