package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/kairos-rag/kairos/indexer"
)

// ErrDamaged is returned by verify when it finds problems (exit status 1).
var ErrDamaged = errors.New("index damaged")

func cmdVerify(ctx context.Context, args []string, stdio IO) error {
	fs := newFlags("verify", "--index LOCATION [--json]", stdio.Stderr)
	var loc indexer.Location
	loc.Flag(fs, "")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	if loc.IsZero() {
		return usageErr(fs, "need --index")
	}
	ix, err := indexer.Open(ctx, loc)
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	defer ix.Close()
	rep, err := ix.Verify(ctx)
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	if *asJSON {
		enc := json.NewEncoder(stdio.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(stdio.Stdout, "generation  %s\nfiles       %d checked\npassages    %d\n", rep.Generation, rep.Files, rep.Passages)
		for _, p := range rep.Problems {
			fmt.Fprintf(stdio.Stdout, "PROBLEM     %s\n", p)
		}
		if rep.OK() {
			fmt.Fprintln(stdio.Stdout, "ok")
		}
	}
	if !rep.OK() {
		return fmt.Errorf("%s: %d problems: %w", rep.Generation, len(rep.Problems), ErrDamaged)
	}
	// A pending resumable build's checkpoint is checked too: --resume continues from it.
	if crep, err := ix.VerifyCheckpoint(ctx); err != nil {
		return fmt.Errorf("verify: checkpoint: %w", err)
	} else if crep != nil {
		if !*asJSON {
			fmt.Fprintf(stdio.Stdout, "checkpoint  %s (%d passages, index --resume continues from it)\n", crep.Generation, crep.Passages)
			for _, p := range crep.Problems {
				fmt.Fprintf(stdio.Stdout, "PROBLEM     %s\n", p)
			}
		}
		if !crep.OK() {
			return fmt.Errorf("checkpoint %s: %d problems: %w", crep.Generation, len(crep.Problems), ErrDamaged)
		}
	}
	return nil
}
