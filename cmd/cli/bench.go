package cli

import (
	"context"
	"fmt"
)

// cmdBench dispatches the benchmark modes: `kairos bench ann ...`.
func cmdBench(ctx context.Context, args []string, stdio IO) error {
	if len(args) == 0 || args[0] != "ann" {
		fmt.Fprintln(stdio.Stderr, "usage: kairos bench ann [flags]   (kairos bench ann -h for the flags)")
		return fmt.Errorf("bench: want a mode (ann): %w", ErrUsage)
	}
	return cmdBenchANN(ctx, args[1:], stdio)
}
