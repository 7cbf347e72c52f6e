package cli

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error {
	*s = append(*s, v)
	return nil
}

// newFlags returns a FlagSet that reports errors instead of exiting, with a usage line.
func newFlags(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: kairos %s %s\n\nflags:\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args, mapping flag errors to ErrUsage. Flags and positional arguments may
// be interleaved ("kairos search -k 3 query --json").
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if err == flag.ErrHelp {
				return nil, err
			}
			return nil, fmt.Errorf("%s: %w", fs.Name(), ErrUsage)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if rest[0] == "--" {
			return append(pos, rest[1:]...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func usageErr(fs *flag.FlagSet, format string, a ...any) error {
	fs.Usage()
	return fmt.Errorf("%s: %s: %w", fs.Name(), fmt.Sprintf(format, a...), ErrUsage)
}
