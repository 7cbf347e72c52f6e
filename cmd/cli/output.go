package cli

import (
	"io"

	"github.com/kairos-rag/kairos/internal/atomicfile"
)

// writeOutput runs write on an output named by a flag: "-" (or nothing) is stdout, a regular
// file is replaced atomically so a failed run never leaves a truncated file, and a FIFO,
// device or symbolic link is written through without replacing it (see internal/atomicfile).
func writeOutput(path string, stdout io.Writer, write func(io.Writer) error) error {
	if path == "" {
		path = "-"
	}
	return atomicfile.Write(path, atomicfile.Options{Stdout: stdout}, write)
}

// writeJSONL writes n JSON lines, rec(0) .. rec(n-1), to the output path.
func writeJSONL(path string, stdout io.Writer, n int, rec func(i int) any) error {
	return writeOutput(path, stdout, func(w io.Writer) error { return encodeLines(w, n, rec) })
}
