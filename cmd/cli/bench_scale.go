package cli

import (
	"context"
	"fmt"

	"github.com/kairos-rag/kairos/cmd/scalebench"
)

// cmdBenchScale is `kairos bench scale`: build and query cost as the collection grows. The
// benchmark, its options and flags are package scalebench's; this is the subcommand's wiring.
func cmdBenchScale(ctx context.Context, args []string, stdio IO) error {
	fs := newFlags("bench scale", "--passages N[,N...] | --input FILE [--model DIR] [--json] [flags]", stdio.Stderr)
	var o scalebench.Options
	o.Flags(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErr(fs, "unexpected argument %q", pos[0])
	}
	if err := o.Validate(); err != nil {
		return usageErr(fs, "%v", err)
	}
	o.Log = stdio.Stderr
	if err := scalebench.Run(ctx, o, stdio.Stdout); err != nil {
		return fmt.Errorf("bench scale: %w", err)
	}
	return nil
}

// defaultShared is the shared data directory of the bench commands (scalebench.DefaultShared).
func defaultShared() string { return scalebench.DefaultShared() }
