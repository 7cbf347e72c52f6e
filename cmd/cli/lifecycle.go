package cli

import (
	"context"
	"fmt"

	"github.com/kairos-rag/kairos/indexer"
	"github.com/kairos-rag/kairos/internal/memlimit"
)

func cmdDelete(ctx context.Context, args []string, stdio IO) error {
	fs := newFlags("delete", "--index LOCATION --doc-id ID... [flags]", stdio.Stderr)
	var loc indexer.Location
	loc.Flag(fs, "")
	var ids stringList
	fs.Var(&ids, "doc-id", "document `id` to delete (repeatable; also positional)")
	compactRatio := fs.Float64("compact-ratio", indexer.DefaultCompactRatio, "compact when tombstones exceed this share of passages (negative: never)")
	var lf logFlags
	lf.register(fs, "warn")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	ids = append(ids, pos...)
	if loc.IsZero() || len(ids) == 0 {
		return usageErr(fs, "need --index and --doc-id")
	}
	log, err := lf.logger(fs, stdio.Stderr)
	if err != nil {
		return err
	}
	ix, err := indexer.Open(ctx, loc)
	if err != nil {
		return fmt.Errorf("delete: %w", err)
	}
	defer ix.Close()
	sum, err := ix.Delete(ctx, indexer.UpdateOptions{Options: indexer.Options{Logger: log, Progress: stdio.Stderr}, CompactRatio: *compactRatio}, ids)
	if err != nil {
		return fmt.Errorf("delete: %w", err)
	}
	printSummary(stdio, sum)
	return nil
}

func cmdCompact(ctx context.Context, args []string, stdio IO) error {
	fs := newFlags("compact", "--index LOCATION", stdio.Stderr)
	var loc indexer.Location
	loc.Flag(fs, "")
	var lf logFlags
	lf.register(fs, "warn")
	var heap memlimit.Options
	heap.Flags(fs)
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	if loc.IsZero() {
		return usageErr(fs, "need --index")
	}
	if err := heap.Validate(); err != nil {
		return usageErr(fs, "--heap-headroom must not be negative")
	}
	log, err := lf.logger(fs, stdio.Stderr)
	if err != nil {
		return err
	}
	stopHeap := keepHeap(ctx, heap, log)
	defer stopHeap()
	ix, err := indexer.Open(ctx, loc)
	if err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	defer ix.Close()
	sum, err := ix.Compact(ctx, indexer.CompactOptions{Logger: log, Progress: stdio.Stderr})
	if err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	printSummary(stdio, sum)
	return nil
}
