package cli

import (
	"context"
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/kairos-rag/kairos/embed/hub"
)

func cmdModels(ctx context.Context, args []string, stdio IO) error {
	return runGroup(ctx, "models", []subcommand{
		{"pull", "download a model folder from Hugging Face and verify its sha256 pins", modelsPull},
		{"list", "list the models under the models root, flagging modified files", func(_ context.Context, args []string, stdio IO) error { return modelsList(args, stdio) }},
	}, args, stdio)
}

func modelsPull(ctx context.Context, args []string, stdio IO) error {
	fs := newFlags("models pull", "NAME (owner/name on Hugging Face) [flags]", stdio.Stderr)
	endpoint := fs.String("endpoint", "", "hub or mirror `URL` (default $HF_ENDPOINT, then "+hub.DefaultEndpoint+")")
	dir := fs.String("dir", hub.DefaultRoot(), "models root `directory`")
	rev := fs.String("revision", "main", "branch, tag or commit")
	onnx := fs.String("onnx", "onnx/model.onnx", "ONNX `file` in the repo (e.g. onnx/model_fp16.onnx for --precision fp16, onnx/model_qint8_avx512.onnx); not used for the static models Kairos knows (minishlab/potion-base-8M, minishlab/potion-retrieval-32M, sentence-transformers/static-retrieval-mrl-en-v1), whose table files are fetched instead")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErr(fs, "need exactly one model NAME")
	}
	m, err := hub.Pull(ctx, pos[0], hub.PullOptions{Endpoint: *endpoint, Root: *dir, Revision: *rev, ONNXFile: *onnx, Progress: stdio.Stderr})
	var unreachable *hub.UnreachableError
	if errors.As(err, &unreachable) {
		return fmt.Errorf("models pull: %w\n  no answer from %s: pass --endpoint URL or set HF_ENDPOINT to a hub mirror you can reach, or copy a model folder by hand and pass it to --model", err, unreachable.Endpoint)
	}
	if err != nil {
		return fmt.Errorf("models pull: %w", err)
	}
	pinned := 0
	for _, f := range m.Files {
		if f.Pinned {
			pinned++
		}
	}
	fmt.Fprintf(stdio.Stdout, "pulled %s (%d files, %d verified against sha256 pins) into %s\n", m.Repo, len(m.Files), pinned, *dir)
	if pinned == 0 {
		fmt.Fprintf(stdio.Stderr, "warning: Kairos knows no sha256 pin for %s: its files are unverified\n", m.Repo)
	}
	return nil
}

func modelsList(args []string, stdio IO) error {
	fs := newFlags("models list", "[--dir ROOT]", stdio.Stderr)
	dir := fs.String("dir", hub.DefaultRoot(), "models root `directory`")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErr(fs, "unexpected arguments %v", pos)
	}
	list, err := hub.List(*dir)
	if err != nil {
		return fmt.Errorf("models list: %w", err)
	}
	if len(list) == 0 {
		fmt.Fprintf(stdio.Stderr, "no models under %s (kairos models pull NAME)\n", *dir)
		return nil
	}
	tw := tabwriter.NewWriter(stdio.Stdout, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSIZE\tDIM\tPOOLING\tVERIFIED")
	for _, m := range list {
		dim := "-"
		if m.Dim > 0 {
			dim = fmt.Sprint(m.Dim)
		}
		fmt.Fprintf(tw, "%s\t%.1f MB\t%s\t%s\t%s\n", m.Name, float64(m.Size)/1e6, dim, m.Pooling, m.Verified)
	}
	return tw.Flush()
}
