package cli

import (
	"context"
	"fmt"
	"os"
	"runtime"

	"github.com/kairos-rag/kairos/embed"
	"github.com/kairos-rag/kairos/internal/version"
)

// cmdVersion is `kairos version` (and `kairos --version`): what was built (version.String,
// the string an index built by this binary records and kairos stats prints), from which commit,
// with which Go, and whether the ONNX Runtime library that dense models need is where Kairos
// will look for it. It only looks for the file: loading it is the embed package's job, at the
// first command that needs a model.
func cmdVersion(_ context.Context, args []string, stdio IO) error {
	fs := newFlags("version", "", stdio.Stderr)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErr(fs, "unexpected arguments %q", pos)
	}
	commit := "unknown (not recorded: built outside a git checkout, or by go run or go test)"
	if b := version.Read(); b.Revision != "" {
		dirty := ""
		if b.Modified {
			dirty = ", modified"
		}
		commit = fmt.Sprintf("%s (%s%s)", b.Revision, b.Time, dirty)
	}
	fmt.Fprintf(stdio.Stdout, "kairos %s\ncommit %s\n%s %s/%s\n", version.String(), commit, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	lib := embed.ResolveORTLib("")
	if st, err := os.Stat(lib); err == nil && st.Mode().IsRegular() {
		fmt.Fprintf(stdio.Stdout, "onnxruntime: %s\n", lib)
	} else {
		fmt.Fprintf(stdio.Stdout, "onnxruntime: not found at %s (run `make ort`, or set $%s or --ort-lib); BM25 works without it\n", lib, embed.EnvORTLib)
	}
	// Only where the file is: loading the provider needs CUDA, which --device cuda checks.
	cuda := embed.ResolveORTProviderLib("")
	if st, err := os.Stat(cuda); err == nil && st.Mode().IsRegular() {
		fmt.Fprintf(stdio.Stdout, "onnxruntime cuda provider: %s (for --device cuda)\n", cuda)
	} else {
		fmt.Fprintf(stdio.Stdout, "onnxruntime cuda provider: not found at %s (for --device cuda: run `make ort-gpu`, or set $%s or --ort-provider-lib)\n", cuda, embed.EnvORTCUDALib)
	}
	return nil
}
