package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/kairos-rag/kairos/chat"
	"github.com/kairos-rag/kairos/embed"
)

// cmdBank manages example banks for the msdp and sicl pipelines.
func cmdBank(ctx context.Context, args []string, stdio IO) error {
	return runGroup(ctx, "bank", []subcommand{
		{"topical", "derive bank examples (JSONL) from a Topical-Chat directory", bankTopical},
		{"build", "embed examples (JSONL) into a bank file", bankBuild},
		{"info", "describe a bank file (verifies its checksum)", func(_ context.Context, args []string, stdio IO) error { return bankInfo(args, stdio) }},
	}, args, stdio)
}

func bankBuild(ctx context.Context, args []string, stdio IO) error {
	fs := newFlags("bank build", "--encoder NAME --input EXAMPLES.jsonl --out BANK", stdio.Stderr)
	encName := fs.String("encoder", "hash", "sentence encoder `name`: hash or hash-DIM (hashed bag of words)")
	input := fs.String("input", "", "examples as JSON lines: {id, topic, history[], knowledge, response} (required)")
	out := fs.String("out", "", "bank `file` to write (required)")
	batch := fs.Int("batch", 64, "texts per encoder call")
	var rt embed.Options // how a model folder given as --encoder runs: --device, --backend, ...
	rt.Flags(fs)
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	if *input == "" || *out == "" {
		return usageErr(fs, "need --input and --out")
	}
	enc, err := openBankEncoder(ctx, *encName, rt)
	if err != nil {
		return err
	}
	f, err := os.Open(*input)
	if err != nil {
		return fmt.Errorf("bank build: %w", err)
	}
	defer f.Close()
	start := time.Now()
	bank, st, err := chat.BuildBank(ctx, f, *input, enc, chat.BankBuildOptions{Encoder: *encName, BatchSize: *batch,
		Progress: func(done, total int) {
			el := time.Since(start).Seconds()
			rate := float64(done) / max(el, 1e-9)
			fmt.Fprintf(stdio.Stderr, "\rembedded %d/%d examples (%.0f/s, ETA %.0fs)", done, total, rate, float64(total-done)/max(rate, 1e-9))
		}})
	fmt.Fprintln(stdio.Stderr)
	for _, s := range st.Skipped {
		fmt.Fprintf(stdio.Stderr, "skipped %s\n", s)
	}
	if err != nil {
		return err
	}
	if err := bank.WriteFile(*out); err != nil {
		return err
	}
	fmt.Fprintf(stdio.Stdout, "wrote %s: %d examples, %d skipped, encoder %s, dim %d\n", *out, st.Examples, len(st.Skipped), bank.Header.Encoder, bank.Header.Dim)
	return nil
}

func bankTopical(ctx context.Context, args []string, stdio IO) error {
	fs := newFlags("bank topical", "--dir TOPICAL-CHAT-DIR --out EXAMPLES.jsonl [--split test_freq] [--max N]", stdio.Stderr)
	dir := fs.String("dir", "", "Topical-Chat `directory` (conversations/, reading_sets/pre-build/, wiki.json) (required)")
	out := fs.String("out", "", "examples `file` to write, - for stdout (required)")
	var splits stringList
	fs.Var(&splits, "split", "conversation file to read, e.g. test_freq (repeatable; default test_freq and test_rare)")
	maxN := fs.Int("max", 0, "stop after this many examples (0: all)")
	hist := fs.Int("history", 3, "turns of history per example")
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	if *dir == "" || *out == "" {
		return usageErr(fs, "need --dir and --out")
	}
	var st chat.TopicalChatStats
	err := writeOutput(*out, stdio.Stdout, func(w io.Writer) error {
		var err error
		st, err = chat.DeriveTopicalChat(ctx, *dir, w, chat.TopicalChatOptions{Splits: splits, Max: *maxN, HistoryTurns: *hist})
		return err
	})
	if err != nil {
		return fmt.Errorf("bank topical: %w", err)
	}
	skipped := 0
	var reasons []string
	for r, n := range st.Skipped {
		skipped += n
		reasons = append(reasons, fmt.Sprintf("%s: %d", r, n))
	}
	report := stdio.Stdout
	if *out == "-" { // the examples went to stdout
		report = stdio.Stderr
	}
	fmt.Fprintf(report, "wrote %s: %d examples from %d conversations; %d turns skipped (%s)\n",
		*out, st.Examples, st.Conversations, skipped, strings.Join(reasons, ", "))
	return nil
}

func bankInfo(args []string, stdio IO) error {
	fs := newFlags("bank info", "BANK", stdio.Stderr)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErr(fs, "need one bank file")
	}
	b, err := chat.ReadBank(pos[0])
	if err != nil {
		return err
	}
	h := b.Header
	fmt.Fprintf(stdio.Stdout, "%s: format %s v%d, %d examples, encoder %s, dim %d, created %s, sha256 %s (verified)\n",
		pos[0], h.Format, h.Version, h.Count, h.Encoder, h.Dim, h.Created.Format(time.RFC3339), h.SHA256)
	return nil
}

// openBankEncoder returns the named sentence encoder: "hash" and "hash-DIM" need no model;
// anything else is a model folder run through embed as rt says (backend, device, libraries).
func openBankEncoder(ctx context.Context, name string, rt embed.Options) (chat.Encoder, error) {
	if name == "hash" {
		return chat.HashEncoder{}, nil
	}
	if d, ok := strings.CutPrefix(name, "hash-"); ok {
		dim, err := strconv.Atoi(d)
		if err != nil || dim < 8 || dim > 1<<16 {
			return nil, fmt.Errorf("encoder %q: dimension must be 8..65536: %w", name, ErrUsage)
		}
		return chat.HashEncoder{Dim: dim}, nil
	}
	if st, err := os.Stat(name); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("encoder %q: not hash, hash-DIM or a model folder: %w", name, ErrUsage)
	}
	rt.ModelDir = name
	enc, err := embed.OpenEncoder(ctx, rt)
	if err != nil {
		return nil, fmt.Errorf("encoder %q (a model folder, or hash / hash-DIM): %w", name, err)
	}
	return bankEncoder{enc}, nil
}

// bankEncoder adapts embed's encoder to chat.Encoder. Bank examples and the dialogue contexts
// matched against them are the same kind of text, so both get the passage prefix.
type bankEncoder struct{ enc *embed.Encoder }

func (b bankEncoder) Encode(ctx context.Context, texts []string) ([][]float32, error) {
	return b.enc.Encode(ctx, embed.Passage, texts)
}
