package cli

import (
	"context"
	"fmt"

	"github.com/kairos-rag/kairos/internal/hnsw/annbench"
)

// cmdBenchANNEngine is `kairos bench ann-engine PHASE`: one phase (version, build, serve) of one
// of Kairos's vector indexes over a `bench ann` dump, the child process `kairos bench ann
// --engines` runs for it, as it runs the anchor scripts for the other engines (the protocol is
// annbench's). Run by hand, it builds or serves a dump the same way.
func cmdBenchANNEngine(ctx context.Context, args []string, stdio IO) error {
	fs := newFlags("bench ann-engine", "version|build|serve --engine NAME [--data DIR --index DIR] [--threads T --params JSON | --setting S --sweep JSON --repeat R]", stdio.Stderr)
	var o annbench.EngineOptions
	o.Flags(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErr(fs, "need one phase: version, build or serve")
	}
	switch pos[0] {
	case "version", "build", "serve":
	default:
		return usageErr(fs, "phase %q: want version, build or serve", pos[0])
	}
	if o.Engine == "" {
		return usageErr(fs, "need --engine")
	}
	if pos[0] == "build" {
		defer keepBuildHeap(ctx, stdio.Stderr)()
	}
	if err := annbench.RunEngine(ctx, pos[0], o, stdio.Stdout, stdio.Stderr); err != nil {
		return fmt.Errorf("bench ann-engine %s: %w", pos[0], err)
	}
	return nil
}
