package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kairos-rag/kairos/cmd/scalebench"
	"github.com/kairos-rag/kairos/corpus/synthcorpus"
	"github.com/kairos-rag/kairos/embed"
	"github.com/kairos-rag/kairos/internal/hnsw/annbench"
)

// annModelDataset is `kairos bench ann --model DIR`'s data: n synthetic passages (learned from
// the shared texts as `kairos bench scale` learns them, seeded) and q real queries (SciFact
// claims and SQuAD questions, as bench scale asks), embedded with the encoder in modelDir. A
// static model embeds a million passages in well under a minute on two cores; an ONNX one
// would take hours. With topics > 0 the passages have that many topics (synthcorpus.TopicOf)
// and the queries are the first topicQueryWords words of q passages of other documents drawn
// the same way (seed+1): real queries' words fall in no topic on purpose, so they would ask
// nothing of a topic model.
func annModelDataset(ctx context.Context, modelDir, shared string, n, q, topics int, seed uint64, log io.Writer) (annbench.Dataset, error) {
	model, err := scalebench.LearnModel(ctx, shared)
	if err != nil {
		return annbench.Dataset{}, err
	}
	var queries []string
	if topics > 0 {
		queries, err = topicQueries(ctx, model, q, topics, seed+1)
	} else {
		queries, err = scalebench.RealQueries(shared, q)
	}
	if err != nil {
		return annbench.Dataset{}, err
	}
	enc, err := embed.OpenEncoder(ctx, embed.Options{ModelDir: modelDir})
	if err != nil {
		return annbench.Dataset{}, err
	}
	defer enc.Close()
	ds := annbench.Dataset{Dim: enc.Info().Dim, Base: make([][]float32, 0, n)}
	if ds.Queries, err = enc.Encode(ctx, embed.Query, queries); err != nil {
		return ds, fmt.Errorf("embedding the queries: %w", err)
	}

	pr, pw := io.Pipe()
	go func() {
		_, err := synthcorpus.Generate(ctx, pw, model, synthcorpus.Options{Passages: n, Seed: seed, Topics: topics})
		pw.CloseWithError(err)
	}()
	defer pr.Close()
	t0 := time.Now()
	sc := bufio.NewScanner(pr)
	sc.Buffer(nil, 1<<20)
	const chunk = 8192
	texts := make([]string, 0, chunk)
	flush := func() error {
		if len(texts) == 0 {
			return nil
		}
		vecs, err := enc.Encode(ctx, embed.Passage, texts)
		if err != nil {
			return fmt.Errorf("embedding passages %d..: %w", len(ds.Base), err)
		}
		ds.Base = append(ds.Base, vecs...)
		texts = texts[:0]
		if len(ds.Base)%(chunk*16) == 0 || len(ds.Base) == n {
			el := time.Since(t0).Seconds()
			fmt.Fprintf(log, "  embedded %d/%d synthetic passages (%.0f/s)\n", len(ds.Base), n, float64(len(ds.Base))/el)
		}
		return nil
	}
	for sc.Scan() {
		var rec synthcorpus.Record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return ds, fmt.Errorf("synthetic passage %d: %w", len(ds.Base)+len(texts)+1, err)
		}
		text := rec.Text
		if rec.Title != "" {
			text = rec.Title + " | " + text // as kairos index prefixes a passage with its title
		}
		if texts = append(texts, text); len(texts) == chunk {
			if err := flush(); err != nil {
				return ds, err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return ds, fmt.Errorf("reading the synthetic passages: %w", err)
	}
	if err := flush(); err != nil {
		return ds, err
	}
	if len(ds.Base) != n {
		return ds, fmt.Errorf("generated %d synthetic passages, want %d", len(ds.Base), n)
	}
	return ds, nil
}

// topicQueryWords is the length of a topic query: about a SciFact claim's.
const topicQueryWords = 16

// topicQueries returns the first topicQueryWords words of the first passage of each of q
// synthetic documents with topics, title prefixed as kairos index prefixes passages.
func topicQueries(ctx context.Context, model *synthcorpus.Model, q, topics int, seed uint64) ([]string, error) {
	var buf bytes.Buffer
	// Draw more passages than queries: only each document's first is kept.
	if _, err := synthcorpus.Generate(ctx, &buf, model, synthcorpus.Options{Passages: 20 * q, Seed: seed, Topics: topics}); err != nil {
		return nil, err
	}
	out := make([]string, 0, q)
	for line := range bytes.Lines(buf.Bytes()) {
		var rec synthcorpus.Record
		if err := json.Unmarshal(line, &rec); err != nil {
			return nil, fmt.Errorf("synthetic query passage: %w", err)
		}
		if !strings.HasSuffix(rec.ID, "-0") {
			continue
		}
		words := strings.Fields(rec.Text)
		text := strings.Join(words[:min(len(words), topicQueryWords)], " ")
		if rec.Title != "" {
			text = rec.Title + " | " + text
		}
		if out = append(out, text); len(out) == q {
			return out, nil
		}
	}
	return nil, fmt.Errorf("synthetic queries: %d documents in %d passages, want %d", len(out), 20*q, q)
}
