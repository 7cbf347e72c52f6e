package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/kairos-rag/kairos/embed"
)

// embedRecord is one input line: {"id": ..., "text": ...}; "_id" (BEIR) and "passage_id"
// (`kairos passages` output) are accepted for "id".
type embedRecord struct {
	ID      json.RawMessage `json:"id"`
	BEIR    json.RawMessage `json:"_id"`
	Passage json.RawMessage `json:"passage_id"`
	Text    *string         `json:"text"`
}

type embedOutput struct {
	ID     json.RawMessage `json:"id"`
	Vector []float32       `json:"vector"`
}

// embedChunk is how many records are read, encoded and written at a time: large enough that
// length sorting finds neighbours, small enough to stream a big corpus in bounded memory.
const embedChunk = 2048

func cmdEmbed(ctx context.Context, args []string, stdio IO) error {
	fs := newFlags("embed", "--model DIR [--backend auto|ort|go] [--device cpu|cuda[:N]] [--input FILE|-] [--output FILE] [--batch N]", stdio.Stderr)
	var opts embed.Options
	fs.StringVar(&opts.ModelDir, "model", "", "model `folder` (tokenizer.json, config, ONNX file)")
	opts.Flags(fs)
	input := fs.String("input", "-", "JSONL `file` of {\"id\",\"text\"} records; - is stdin")
	output := fs.String("output", "-", "JSONL `file` for {\"id\",\"vector\"}; - is stdout (a file is written atomically)")
	opts.BatchFlag(fs, "batch")
	opts.ThreadsFlag(fs)
	kind := fs.String("kind", "passage", "text kind, selects the model's prefix: passage or query")
	verbose := fs.Bool("v", false, "log the backend choice (--log-level info)")
	var lf logFlags
	lf.register(fs, "warn")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if opts.ModelDir == "" || len(pos) > 0 {
		return usageErr(fs, "need --model and no positional arguments")
	}
	k := embed.Passage
	switch *kind {
	case "passage":
	case "query":
		k = embed.Query
	default:
		return usageErr(fs, "--kind %q: want passage or query", *kind)
	}
	if *verbose {
		lf.level = "info"
	}
	logger, err := lf.logger(fs, stdio.Stderr)
	if err != nil {
		return err
	}
	opts.Logger = logger
	if err := opts.Validate(); err != nil {
		return usageErr(fs, "%v", err)
	}

	in, inName := stdio.Stdin, "stdin"
	if *input != "-" {
		f, err := os.Open(*input)
		if err != nil {
			return fmt.Errorf("embed: %w", err)
		}
		defer f.Close()
		in, inName = f, *input
	}
	loadStart := time.Now()
	enc, err := embed.OpenEncoder(ctx, opts)
	if err != nil {
		return fmt.Errorf("embed: %w", err)
	}
	defer enc.Close()
	info := enc.Info()
	fmt.Fprintf(stdio.Stderr, "model %s (%s, %s; dim %d, %s pooling, max %d tokens) on backend %s, loaded in %.2fs\n",
		info.Name, info.ONNXFile, info.Precision, info.Dim, info.Pooling, info.MaxSeqLen, info.Backend, time.Since(loadStart).Seconds())

	return writeOutput(*output, stdio.Stdout, func(w io.Writer) error {
		prog := newLoopProgress(stdio.Stderr, "texts embedded", 0)
		st, err := embedStream(ctx, enc, k, in, inName, w, prog)
		prog.done()
		if err != nil {
			return err
		}
		secs := st.elapsed.Seconds()
		fmt.Fprintf(stdio.Stderr, "embedded %d texts (%d tokens) in %.2fs: %.1f texts/s, %.0f tokens/s (backend %s, batch %d)\n",
			st.texts, st.tokens, secs, float64(st.texts)/secs, float64(st.tokens)/secs, info.Backend, enc.BatchSize())
		if st.skipped > 0 {
			fmt.Fprintf(stdio.Stderr, "skipped %d records with empty or whitespace text (first at %s:%d)\n", st.skipped, inName, st.firstSkipped)
		}
		return nil
	})
}

type embedStats struct {
	texts, tokens, skipped int
	firstSkipped           int // line number
	elapsed                time.Duration
}

// embedStream reads records, encodes them chunk by chunk and writes one line per record that
// has text. Malformed lines stop the run with file:line; blank texts are counted and skipped.
func embedStream(ctx context.Context, enc *embed.Encoder, kind embed.Kind, in io.Reader, inName string, w io.Writer, prog *loopProgress) (embedStats, error) {
	var st embedStats
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	bw := bufio.NewWriterSize(w, 1<<20)
	var ids []json.RawMessage
	var texts []string
	flush := func() error {
		if len(texts) == 0 {
			return nil
		}
		t0 := time.Now()
		encs, err := enc.Tokenize(kind, texts)
		if err != nil {
			return err
		}
		vecs, err := enc.EncodeTokens(ctx, encs)
		if err != nil {
			return err
		}
		st.elapsed += time.Since(t0)
		lines, err := marshalVectors(ids, vecs)
		if err != nil {
			return err
		}
		for i, b := range lines {
			st.tokens += len(encs[i].IDs)
			bw.Write(b)
			bw.WriteByte('\n')
		}
		st.texts += len(texts)
		prog.add(len(texts))
		ids, texts = ids[:0], texts[:0]
		return nil
	}
	line := 0
	for sc.Scan() {
		line++
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		var r embedRecord
		if err := json.Unmarshal(raw, &r); err != nil {
			return st, fmt.Errorf("embed: %s:%d: %w", inName, line, err)
		}
		id := r.ID
		if id == nil {
			id = r.BEIR
		}
		if id == nil {
			id = r.Passage
		}
		if id == nil || r.Text == nil {
			return st, fmt.Errorf("embed: %s:%d: record needs \"id\" and \"text\"", inName, line)
		}
		if embed.IsBlank(*r.Text) {
			if st.skipped == 0 {
				st.firstSkipped = line
			}
			st.skipped++
			continue
		}
		ids, texts = append(ids, id), append(texts, *r.Text)
		if len(texts) == embedChunk {
			if err := flush(); err != nil {
				return st, fmt.Errorf("embed: records before %s:%d: %w", inName, line, err)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return st, fmt.Errorf("embed: %s:%d: %w", inName, line+1, err)
	}
	if err := flush(); err != nil {
		return st, fmt.Errorf("embed: %w", err)
	}
	return st, bw.Flush()
}

// marshalVectors renders one JSON line per vector on up to GOMAXPROCS goroutines: formatting
// floats costs more than a static model takes to compute them (issue 26: about 17,000
// vectors/s on one core against 58,000 encoded on two).
func marshalVectors(ids []json.RawMessage, vecs [][]float32) ([][]byte, error) {
	lines := make([][]byte, len(vecs))
	workers := min(runtime.GOMAXPROCS(0), max(1, len(vecs)/64))
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(vecs); i += workers {
				b, err := json.Marshal(embedOutput{ID: ids[i], Vector: vecs[i]})
				if err != nil {
					errs[w] = err
					return
				}
				lines[i] = b
			}
		}()
	}
	wg.Wait()
	return lines, errors.Join(errs...)
}
