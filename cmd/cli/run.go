// Package cli implements the kairos subcommands: one file and one flag.FlagSet per subcommand.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/kairos-rag/kairos/indexer"
)

// IO is what a subcommand may read and write. Tests pass buffers.
type IO struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// command is one subcommand.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, io IO) error
}

func commands() map[string]command {
	return map[string]command{
		"index":      {"build (or --update, --resume) an index from corpus files", cmdIndex},
		"delete":     {"delete documents from an index by id", cmdDelete},
		"compact":    {"rewrite an index without its deleted passages", cmdCompact},
		"passages":   {"print the passages of corpus files as JSONL", cmdPassages},
		"search":     {"query an index (one query, or a batch file)", cmdSearch},
		"stats":      {"describe an index", cmdStats},
		"bench":      {"benchmarks (ann: HNSW recall and speed against exact search)", cmdBench},
		"chat":       {"talk to an LLM through a chatbot pipeline grounded in an index", cmdChat},
		"bank":       {"build and inspect example banks for the msdp and sicl pipelines", cmdBank},
		"dataset":    {"convert an evaluation set (timeqa) to a corpus and a query file", cmdDataset},
		"embed":      {"embed JSONL texts with an ONNX sentence encoder", cmdEmbed},
		"models":     {"download (Hugging Face, sha256-verified) or list models", cmdModels},
		"eval":       {"score retrieval against relevance judgements", cmdEval},
		"serve":      {"serve retrieval over HTTP (native and WikiChat-compatible API)", cmdServe},
		"verify":     {"check an index's files, checksums and consistency", cmdVerify},
		"version":    {"print the version, commit, Go version and whether ONNX Runtime loads", cmdVersion},
		"completion": {"print a shell completion script (bash, zsh or fish)", cmdCompletion},
	}
}

// ErrUsage marks a command-line mistake; Run has already printed the usage.
var ErrUsage = errors.New("usage error")

// ExitCode maps an error from Run to a process exit status: 0 for help, 2 for usage, 130 for
// a command interrupted (Ctrl-C, SIGTERM: 128 + SIGINT, as shells report it), 1 otherwise.
func ExitCode(err error) int {
	var ie *interruptedError
	switch {
	case err == nil || isHelp(err):
		return 0
	case errors.Is(err, ErrUsage):
		return 2
	case errors.As(err, &ie):
		return 130
	}
	return 1
}

// interruptedError is a command stopped by Ctrl-C or SIGTERM. Its message is what the person
// needs (what was kept, how to go on); it wraps the context's error, so errors.Is(err,
// context.Canceled) holds.
type interruptedError struct {
	msg string
	err error
}

func (e *interruptedError) Error() string { return e.msg }
func (e *interruptedError) Unwrap() error { return e.err }

// interrupted is the error of a command interrupted while it did err's work; msg says what
// was kept ("" : only that it was interrupted).
func interrupted(msg string, err error) error {
	if msg == "" {
		msg = "interrupted"
	}
	return &interruptedError{msg: msg, err: err}
}

// Run runs the subcommand named by args[0].
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	cmds := commands()
	stdio := IO{Stdin: stdin, Stdout: stdout, Stderr: stderr}
	if len(args) == 0 {
		usage(stderr, cmds)
		return fmt.Errorf("no command given (one of the above; 'kairos help' lists them): %w", ErrUsage)
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(stdout, cmds)
		return nil
	case "--version", "-version":
		return cmdVersion(ctx, args[1:], stdio)
	case "__flags": // for the completion scripts: the flags of one command, one a line
		return printCommandFlags(ctx, cmds, args[1:], stdio)
	}
	c, ok := cmds[args[0]]
	if !ok {
		names := slices.Sorted(maps.Keys(cmds))
		return fmt.Errorf("unknown command %q%s (see 'kairos -h'): %w", args[0], didYouMean(args[0], names), ErrUsage)
	}
	err := c.run(ctx, args[1:], stdio)
	var ie *interruptedError
	switch {
	case isHelp(err):
		return nil // the command printed its help: that is a success
	case err != nil && ctx.Err() != nil && !errors.As(err, &ie):
		return interrupted("", err) // not "context canceled", an error to parse
	}
	return withRemedy(args[0], args[1:], err)
}

// withRemedy adds to an error that every command may meet the command or flag that fixes it:
// an --index that holds no index is built by kairos index, or by the same command without
// --update.
func withRemedy(cmd string, args []string, err error) error {
	var ni *indexer.NoIndexError
	switch {
	case !errors.Is(err, indexer.ErrNoIndex):
		return err
	case cmd == "index" && (slices.Contains(args, "--update") || slices.Contains(args, "-update")):
		return fmt.Errorf("%w; without --update, the same command builds a new index there", err)
	case errors.As(err, &ni) && ni.Checkpoint:
		return err // it says what to run
	}
	loc := "LOCATION"
	if ni != nil {
		loc = shellQuote(ni.Dir)
	}
	return fmt.Errorf("%w; kairos index --input FILE --index %s builds one", err, loc)
}

func usage(w io.Writer, cmds map[string]command) {
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("usage: kairos <command> [flags]\n\ncommands:\n")
	for _, n := range names {
		fmt.Fprintf(&b, "  %-11s %s\n", n, cmds[n].summary)
	}
	b.WriteString("\nRun 'kairos <command> -h' for the flags of one command.\n")
	io.WriteString(w, b.String())
}
