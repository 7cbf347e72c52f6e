package cli

import (
	"context"
	"flag"
	"fmt"
	"log/slog"

	"github.com/kairos-rag/kairos/embed"
	"github.com/kairos-rag/kairos/indexer"
	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/search"
)

// modelFlags are the flags of every command that runs a model.
type modelFlags struct {
	model, crossModel, backend, ortLib string
	batch                              int
	indexing                           bool // the model embeds batches back to back
}

func (m *modelFlags) register(fs *flag.FlagSet, cross bool) {
	fs.StringVar(&m.model, "model", "", "sentence encoder `folder` (dense and hybrid search; see kairos models)")
	if cross {
		fs.StringVar(&m.crossModel, "cross-model", "", "cross-encoder `folder` (the cross rerank stage)")
	}
	fs.StringVar(&m.backend, "backend", embed.BackendAuto, "inference backend: auto, ort or go")
	fs.StringVar(&m.ortLib, "ort-lib", "", "libonnxruntime.so `path` (default $"+embed.EnvORTLib+", then the `make ort` cache)")
	fs.IntVar(&m.batch, "embed-batch", embed.DefaultBatchSize, "texts per model call")
}

// options returns the embed options for the model in dir. Query-time models (search, serve,
// chat) do not spin between calls: see embed.Options.NoSpin.
func (m *modelFlags) options(dir string, log *slog.Logger) embed.Options {
	return embed.Options{ModelDir: dir, Backend: m.backend, ORTLib: m.ortLib, BatchSize: m.batch, Logger: log, NoSpin: !m.indexing}
}

// encoder adapts embed's sentence encoder to the indexer's and search's interfaces.
type encoder struct{ enc *embed.Encoder }

var (
	_ indexer.PassageEncoder = encoder{}
	_ search.QueryEncoder    = encoder{}
	_ rerank.PairScorer      = (*embed.CrossEncoder)(nil)
)

func openEncoder(ctx context.Context, m *modelFlags, log *slog.Logger) (encoder, error) {
	enc, err := embed.OpenEncoder(ctx, m.options(m.model, log))
	if err != nil {
		return encoder{}, fmt.Errorf("opening model %s: %w", m.model, err)
	}
	return encoder{enc}, nil
}

func (e encoder) Identity() indexer.ModelIdentity {
	return e.enc.Info().Identity
}

func (e encoder) EncodePassages(ctx context.Context, texts []string) ([][]float32, error) {
	return e.enc.Encode(ctx, embed.Passage, texts)
}

func (e encoder) EncodeQuery(ctx context.Context, text string) ([]float32, error) {
	v, err := e.enc.Encode(ctx, embed.Query, []string{text})
	if err != nil {
		return nil, err
	}
	return v[0], nil
}

func (e encoder) Close() error { return e.enc.Close() }
