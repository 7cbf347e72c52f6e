//go:build !unix

package cli

import "io"

// ttyWidth is 0 where the terminal cannot be asked: tables keep their default width.
func ttyWidth(io.Writer) int { return 0 }
