package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/embed"
)

// encodeBenchRow is one stage's figure of `kairos bench encode`.
type encodeBenchRow struct {
	Stage    string  `json:"stage"`
	Texts    int     `json:"texts"`
	Tokens   int     `json:"tokens"`
	Seconds  float64 `json:"seconds"`
	TextsPS  float64 `json:"texts_per_s"`
	TokensPS float64 `json:"tokens_per_s"`
}

// encodeAgreement compares the vectors of the first texts on two devices.
type encodeAgreement struct {
	Texts      int     `json:"texts"`
	Against    string  `json:"against"`
	MinCosine  float64 `json:"min_cosine"`
	MeanCosine float64 `json:"mean_cosine"`
	// Cross-encoder scores: the largest difference and the largest score, in logits.
	MaxAbsDiff  float64 `json:"max_abs_diff,omitempty"`
	MaxAbsScore float64 `json:"max_abs_score,omitempty"`
}

// cmdBenchEncode is `kairos bench encode`: the sentence encoder's rate by stage on the passages
// kairos index would embed (tokenizing alone, the model alone on already tokenized texts, and
// both pipelined as kairos index runs them), and optionally the agreement of its vectors with
// another device's. The model-alone rate is the ceiling an index build's embedding stage can
// reach on this machine.
func cmdBenchEncode(ctx context.Context, args []string, stdio IO) error {
	fs := newFlags("bench encode", "--model DIR --input FILE [--limit N] [--device cpu|cuda[:N]] [--precision P] [--batch N] [--compare-device cpu --compare-n N] [--json]", stdio.Stderr)
	var opts embed.Options
	fs.StringVar(&opts.ModelDir, "model", "", "sentence encoder `folder`")
	opts.Flags(fs)
	opts.BatchFlag(fs, "batch")
	opts.ThreadsFlag(fs)
	input := fs.String("input", "", "corpus `file` (any format kairos index reads): its passages are the texts")
	limit := fs.Int("limit", 0, "use the first N passages (0: all)")
	compare := fs.String("compare-device", "", "also encode the first --compare-n texts on this `device` (e.g. cpu) and report the cosine of each pair of vectors")
	compareN := fs.Int("compare-n", 1000, "texts compared with --compare-device")
	comparePrecision := fs.String("compare-precision", "", "precision of the --compare-device model (default: the same as --precision)")
	cross := fs.String("cross-model", "", "also time this cross-encoder `folder` on (query, passage) pairs, one query's candidates per call")
	crossPairs := fs.Int("cross-pairs", 20000, "pairs scored with --cross-model")
	crossBatch := fs.Int("cross-batch", 64, "candidates per query (and per model call) with --cross-model")
	asJSON := fs.Bool("json", false, "one JSON object instead of the table")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 || opts.ModelDir == "" || *input == "" {
		return usageErr(fs, "need --model and --input, and no positional arguments")
	}
	if *limit < 0 || *compareN < 1 || *crossPairs < 1 || *crossBatch < 1 {
		return usageErr(fs, "--limit must be >= 0, and --compare-n, --cross-pairs and --cross-batch >= 1")
	}
	var other embed.Device
	if *compare != "" {
		if other, err = embed.ParseDevice(*compare); err != nil {
			return usageErr(fs, "--compare-device: %v", err)
		}
	}
	if err := opts.Validate(); err != nil {
		return usageErr(fs, "%v", err)
	}
	texts, err := readPassageTexts(ctx, *input, *limit)
	if err != nil {
		return err
	}
	enc, err := embed.OpenEncoder(ctx, opts)
	if err != nil {
		return err
	}
	defer enc.Close()
	info := enc.Info()
	fmt.Fprintf(stdio.Stderr, "bench encode: %d passages of %s; model %s (%s, dim %d) on %s, batch %d, sort window %d\n",
		len(texts), *input, info.Name, info.Precision, info.Dim, opts.Device, enc.BatchSize(), enc.SortWindow())

	rows, vecs, err := encodeStages(ctx, enc, texts, stdio.Stderr)
	if err != nil {
		return err
	}
	var agree *encodeAgreement
	if *compare != "" {
		o := opts
		o.Device, o.BatchSize = other, 0
		if *comparePrecision != "" {
			o.Precision = *comparePrecision
		}
		if agree, err = encodeAgree(ctx, o, texts, vecs, *compareN); err != nil {
			return err
		}
	}
	var crossAgree *encodeAgreement
	if *cross != "" {
		o := opts
		o.ModelDir, o.BatchSize = *cross, *crossBatch
		r, a, err := crossStage(ctx, o, other, *comparePrecision, *compare != "", texts, *crossPairs, *crossBatch, *compareN)
		if err != nil {
			return err
		}
		rows, crossAgree = append(rows, r), a
	}
	if *asJSON {
		return json.NewEncoder(stdio.Stdout).Encode(map[string]any{
			"model": info.Name, "precision": info.Precision, "device": opts.Device.String(), "batch": enc.BatchSize(),
			"stages": rows, "agreement": agree, "cross_agreement": crossAgree,
		})
	}
	fmt.Fprintf(stdio.Stdout, "%-10s %9s %11s %9s %10s %12s\n", "stage", "texts", "tokens", "seconds", "texts/s", "tokens/s")
	for _, r := range rows {
		fmt.Fprintf(stdio.Stdout, "%-10s %9d %11d %9.2f %10.0f %12.0f\n", r.Stage, r.Texts, r.Tokens, r.Seconds, r.TextsPS, r.TokensPS)
	}
	if agree != nil {
		fmt.Fprintf(stdio.Stdout, "agreement with %s on %d texts: cosine min %.6f, mean %.6f\n", agree.Against, agree.Texts, agree.MinCosine, agree.MeanCosine)
	}
	if crossAgree != nil {
		fmt.Fprintf(stdio.Stdout, "cross-encoder agreement with %s on %d pairs: max |score difference| %.6f (relative to the largest |score|: %.2e)\n",
			crossAgree.Against, crossAgree.Texts, crossAgree.MaxAbsDiff, crossAgree.MaxAbsDiff/max(crossAgree.MaxAbsScore, 1e-12))
	}
	return nil
}

// crossStage times the cross-encoder on pairs: each call scores batch passages against one
// query (the first words of another passage), as a rerank of batch candidates does. With
// compare, the first calls are scored again on the other device and the scores compared.
func crossStage(ctx context.Context, o embed.Options, other embed.Device, otherPrecision string, compare bool, texts []string, pairs, batch, compareN int) (encodeBenchRow, *encodeAgreement, error) {
	ce, err := embed.OpenCrossEncoder(ctx, o)
	if err != nil {
		return encodeBenchRow{}, nil, err
	}
	defer ce.Close()
	type call struct {
		query    string
		passages []string
	}
	var calls []call
	for n, i := 0, 0; n < pairs; i++ {
		q := strings.Fields(texts[(i*7919)%len(texts)])
		m := min(batch, pairs-n)
		ps := make([]string, m)
		for j := range ps {
			ps[j] = texts[(n+j)%len(texts)]
		}
		calls = append(calls, call{strings.Join(q[:min(12, len(q))], " "), ps})
		n += m
	}
	if _, err := ce.Score(ctx, calls[0].query, calls[0].passages); err != nil { // warm-up
		return encodeBenchRow{}, nil, err
	}
	scores := make([][]float32, len(calls))
	start := time.Now()
	for i, c := range calls {
		if scores[i], err = ce.Score(ctx, c.query, c.passages); err != nil {
			return encodeBenchRow{}, nil, err
		}
	}
	d := time.Since(start).Seconds()
	row := encodeBenchRow{Stage: fmt.Sprintf("cross@%d", batch), Texts: pairs, Seconds: d, TextsPS: float64(pairs) / d}
	if !compare {
		return row, nil, nil
	}
	o.Device, o.BatchSize = other, batch
	if otherPrecision != "" {
		o.Precision = otherPrecision
	}
	ref, err := embed.OpenCrossEncoder(ctx, o)
	if err != nil {
		return row, nil, fmt.Errorf("--compare-device: %w", err)
	}
	defer ref.Close()
	a := &encodeAgreement{Against: other.String() + " " + ref.Info().Precision}
	for i := 0; i < len(calls) && a.Texts < compareN; i++ {
		got, err := ref.Score(ctx, calls[i].query, calls[i].passages)
		if err != nil {
			return row, nil, fmt.Errorf("--compare-device: %w", err)
		}
		for j, g := range got {
			a.MaxAbsDiff = max(a.MaxAbsDiff, math.Abs(float64(g)-float64(scores[i][j])))
			a.MaxAbsScore = max(a.MaxAbsScore, math.Abs(float64(g)))
			a.Texts++
		}
	}
	return row, a, nil
}

// encodeStages times the tokenizer alone, the model alone (on the tokenized texts, in sort
// windows as an index build hands them over) and the pipelined whole (EncodeChunks, what kairos
// index runs). It returns the pipelined run's vectors.
func encodeStages(ctx context.Context, enc *embed.Encoder, texts []string, progress io.Writer) ([]encodeBenchRow, [][]float32, error) {
	window := enc.SortWindow()
	var chunks [][]string
	for s := 0; s < len(texts); s += window {
		chunks = append(chunks, texts[s:min(s+window, len(texts))])
	}
	// Warm-up: the first batches pay for session start, kernel selection and memory pools.
	if _, err := enc.Encode(ctx, embed.Passage, chunks[0]); err != nil {
		return nil, nil, err
	}
	row := func(stage string, n, tokens int, d time.Duration) encodeBenchRow {
		s := d.Seconds()
		return encodeBenchRow{Stage: stage, Texts: n, Tokens: tokens, Seconds: s, TextsPS: float64(n) / s, TokensPS: float64(tokens) / s}
	}
	start := time.Now()
	toks := make([][]embed.Encoding, len(chunks))
	tokens := 0
	for i, c := range chunks {
		e, err := enc.Tokenize(embed.Passage, c)
		if err != nil {
			return nil, nil, err
		}
		toks[i] = e
		for _, x := range e {
			tokens += len(x.IDs)
		}
	}
	rows := []encodeBenchRow{row("tokenize", len(texts), tokens, time.Since(start))}
	fmt.Fprintf(progress, "bench encode: tokenized in %.2fs\n", rows[0].Seconds)

	start = time.Now()
	for _, e := range toks {
		if _, err := enc.EncodeTokens(ctx, e); err != nil {
			return nil, nil, err
		}
	}
	rows = append(rows, row("model", len(texts), tokens, time.Since(start)))
	fmt.Fprintf(progress, "bench encode: model alone in %.2fs\n", rows[1].Seconds)
	toks = nil

	vecs := make([][]float32, 0, len(texts))
	start = time.Now()
	err := enc.EncodeChunks(ctx, embed.Passage, chunks, func(_ int, v [][]float32) error {
		vecs = append(vecs, v...)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	rows = append(rows, row("pipelined", len(texts), tokens, time.Since(start)))
	return rows, vecs, nil
}

// encodeAgree encodes the first n texts with opts and compares them with vecs, pair by pair.
func encodeAgree(ctx context.Context, opts embed.Options, texts []string, vecs [][]float32, n int) (*encodeAgreement, error) {
	n = min(n, len(texts))
	ref, err := embed.OpenEncoder(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("--compare-device: %w", err)
	}
	defer ref.Close()
	got, err := ref.Encode(ctx, embed.Passage, texts[:n])
	if err != nil {
		return nil, fmt.Errorf("--compare-device: %w", err)
	}
	a := &encodeAgreement{Texts: n, Against: opts.Device.String() + " " + ref.Info().Precision, MinCosine: math.Inf(1)}
	for i := range n {
		c := cosine(vecs[i], got[i])
		a.MinCosine = min(a.MinCosine, c)
		a.MeanCosine += c / float64(n)
	}
	return a, nil
}

func cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	if aa == 0 || bb == 0 {
		return 0
	}
	return ab / math.Sqrt(aa*bb)
}

// readPassageTexts reads a corpus as kairos index does (same reader, same splitter) and
// returns the texts of its first limit passages (0: all).
func readPassageTexts(ctx context.Context, path string, limit int) ([]string, error) {
	split, err := corpus.NewSplitter(corpus.SplitOptions{})
	if err != nil {
		return nil, err
	}
	r, err := corpus.Open(ctx, path, corpus.Options{})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var texts []string
	for limit == 0 || len(texts) < limit {
		doc, err := r.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		for _, p := range split.Split(doc) {
			if !embed.IsBlank(p.Text) {
				texts = append(texts, p.Text)
			}
		}
	}
	if limit > 0 && len(texts) > limit {
		texts = texts[:limit]
	}
	if len(texts) == 0 {
		return nil, fmt.Errorf("%s: no passages", path)
	}
	return texts, nil
}
