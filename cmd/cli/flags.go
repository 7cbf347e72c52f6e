package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/kairos-rag/kairos/internal/nearest"
)

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error {
	*s = append(*s, v)
	return nil
}

// flagSetObserver is implemented by an output writer that wants to see the FlagSet a command
// builds: the test that every flag's default is the library's (flagdefaults_test.go). No
// writer outside tests implements it.
type flagSetObserver interface{ observeFlagSet(*flag.FlagSet) }

// newFlags returns a FlagSet that reports errors instead of exiting. Its Usage prints the
// synopsis, the flags and the command's examples (help.go) to w; parseFlags calls it only for
// -h, so a mistake costs one line, not the whole flag list.
func newFlags(name, synopsis string, w io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	if o, ok := w.(flagSetObserver); ok {
		o.observeFlagSet(fs)
	}
	fs.SetOutput(w)
	fs.Usage = func() {
		fmt.Fprintf(w, "usage: kairos %s %s\n\n", name, synopsis)
		printFlags(fs)
		printExamples(w, name)
	}
	return fs
}

// parseFlags parses args, mapping flag errors to one-line usage errors and -h to flag.ErrHelp
// after printing the help. Flags and positional arguments may be interleaved
// ("kairos search -k 3 query --json").
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	help, out := fs.Usage, fs.Output()
	// The flag package prints the error and the usage itself on every mistake: silence both
	// while parsing and say it once, in the returned error.
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	defer func() { fs.Usage = help; fs.SetOutput(out) }()
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.SetOutput(out)
				help()
				return nil, flag.ErrHelp
			}
			return nil, usageError(fs.Name(), err.Error()+didYouMeanFlag(fs, err))
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

// didYouMeanFlag names the flag of fs an undefined one most likely meant (" (did you mean
// --index?)"), or "" when the error is another or no flag is near.
func didYouMeanFlag(fs *flag.FlagSet, err error) string {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !ok {
		return ""
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if s := nearest.Name(strings.TrimPrefix(name, "-"), names); s != "" {
		return fmt.Sprintf(" (did you mean --%s?)", s)
	}
	return ""
}

// didYouMean is " (did you mean "search"?)" for the name nearest to word, or "".
func didYouMean(word string, names []string) string {
	if s := nearest.Name(word, names); s != "" {
		return fmt.Sprintf(" (did you mean %q?)", s)
	}
	return ""
}

// usageErr reports a command-line mistake of the command fs belongs to, in one line.
func usageErr(fs *flag.FlagSet, format string, a ...any) error {
	return usageError(fs.Name(), fmt.Sprintf(format, a...))
}

// usageError is a command-line mistake: one line naming the problem and where help is.
// It matches ErrUsage with errors.Is.
func usageError(cmd, msg string) error {
	return &cmdUsageError{cmd: cmd, msg: msg}
}

type cmdUsageError struct{ cmd, msg string }

func (e *cmdUsageError) Error() string {
	if e.msg == "" {
		return fmt.Sprintf("%s: usage error (see 'kairos %s -h')", e.cmd, e.cmd)
	}
	return fmt.Sprintf("%s: %s: usage error (see 'kairos %s -h')", e.cmd, e.msg, e.cmd)
}

func (e *cmdUsageError) Is(target error) bool { return target == ErrUsage }
