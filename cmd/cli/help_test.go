package cli

import (
	"errors"
	"flag"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Every command and subcommand answers -h with its own usage, exit status 0.
func TestHelpExitsZero(t *testing.T) {
	tests := []struct {
		args     []string
		want     string // in the help
		examples bool
	}{
		{[]string{"-h"}, "usage: kairos <command>", false},
		{[]string{"help"}, "usage: kairos <command>", false},
		{[]string{"index", "-h"}, "usage: kairos index", true},
		{[]string{"search", "--help"}, "usage: kairos search", true},
		{[]string{"eval", "-h"}, "usage: kairos eval", true},
		{[]string{"serve", "-h"}, "usage: kairos serve", true},
		{[]string{"chat", "-h"}, "usage: kairos chat", true},
		{[]string{"stats", "-h"}, "usage: kairos stats", true},
		{[]string{"verify", "-h"}, "usage: kairos verify", true},
		{[]string{"passages", "-h"}, "usage: kairos passages", true},
		{[]string{"delete", "-h"}, "usage: kairos delete", true},
		{[]string{"compact", "-h"}, "usage: kairos compact", true},
		{[]string{"embed", "-h"}, "usage: kairos embed", true},
		{[]string{"dataset", "-h"}, "timeqa", false},
		{[]string{"dataset", "timeqa", "-h"}, "usage: kairos dataset timeqa", true},
		{[]string{"bank", "-h"}, "usage: kairos bank <topical|build|info>", false},
		{[]string{"bank", "build", "-h"}, "usage: kairos bank build", true},
		{[]string{"models", "help"}, "pull", false},
		{[]string{"models", "pull", "-h"}, "usage: kairos models pull", true},
		{[]string{"bench", "-h"}, "ann", false},
		{[]string{"bench", "ann", "-h"}, "usage: kairos bench ann", true},
		{[]string{"bench", "encode", "-h"}, "usage: kairos bench encode", true},
		{[]string{"bench", "ivf", "-h"}, "usage: kairos bench ivf", true},
		{[]string{"bench", "corpus", "-h"}, "usage: kairos bench corpus", true},
		{[]string{"bench", "scale", "-h"}, "-lucene-jars directory", true}, // scalebench.Options.Flags registers them
		{[]string{"completion", "-h"}, "usage: kairos completion", true},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, errOut, err := runCLI(t, tc.args...)
			if err != nil || ExitCode(err) != 0 {
				t.Fatalf("err %v (exit %d), want nil", err, ExitCode(err))
			}
			help := out + errOut
			if !strings.Contains(help, tc.want) {
				t.Errorf("help lacks %q:\n%s", tc.want, help)
			}
			if strings.Contains(help, "examples:") != tc.examples {
				t.Errorf("examples shown = %v, want %v:\n%s", !tc.examples, tc.examples, help)
			}
		})
	}
}

// A mistake costs one line that names it and where the help is, and exit status 2.
func TestUsageErrorsAreOneLine(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"index", "--bogus"}, "index: flag provided but not defined: -bogus: usage error (see 'kairos index -h')"},
		{[]string{"search", "-k", "many"}, `search: invalid value "many" for flag -k`},
		{[]string{"frob"}, `unknown command "frob" (see 'kairos -h')`},
		// A near miss names what it most likely meant.
		{[]string{"serach", "--index", "x", "q"}, `unknown command "serach" (did you mean "search"?) (see 'kairos -h')`},
		{[]string{"search", "-indx", "x", "q"}, "search: flag provided but not defined: -indx (did you mean --index?)"},
		{[]string{"index", "--inptu", "x"}, "index: flag provided but not defined: -inptu (did you mean --input?)"},
		{[]string{"search", "--idnex=x", "q"}, "flag provided but not defined: -idnex (did you mean --index?)"},
		{[]string{"index", "--frobnicate"}, "index: flag provided but not defined: -frobnicate: usage error"},
		{[]string{"bank", "biuld"}, `bank: unknown subcommand "biuld" (did you mean "build"?) (want topical, build, info)`},
		{[]string{}, "no command given (one of the above; 'kairos help' lists them): usage error"},
		{[]string{"bank"}, "bank: need a subcommand: topical, build, info: usage error (see 'kairos bank -h')"},
		{[]string{"bank", "burn"}, `bank: unknown subcommand "burn" (want topical, build, info)`},
		{[]string{"dataset", "squad"}, `dataset: unknown subcommand "squad" (want timeqa)`},
		{[]string{"dataset", "timeqa", "--input", "x"}, "dataset timeqa: need --input, --corpus and --queries: usage error (see 'kairos dataset timeqa -h')"},
		{[]string{"bench", "ann", "--ef", "0"}, "bench ann: --ef"},
		{[]string{"bench", "ann", "--engines", "kairos-ivf", "--data", "d", "--n", "5"}, "bench ann: --n is not for --data"},
		{[]string{"bench", "ann", "--data", "d"}, "bench ann: --data needs --load or --engines"},
		{[]string{"completion", "tcsh"}, `completion: unknown shell "tcsh"`},
		{[]string{"version", "extra"}, "version: unexpected arguments"},
		{[]string{"compact", "--index", "x", "--log-format", "xml"}, `compact: --log-format "xml": want text or json`},
		{[]string{"delete", "--index", "x", "--doc-id", "1", "--log-level", "loud"}, `delete: --log-level "loud"`},
		{[]string{"index", "--input", "x", "--index", "y", "--log-format", "yaml"}, `index: --log-format "yaml"`},
	}
	for _, tc := range tests {
		t.Run("kairos "+strings.Join(tc.args, " "), func(t *testing.T) {
			out, errOut, err := runCLI(t, tc.args...)
			if !errors.Is(err, ErrUsage) || ExitCode(err) != 2 {
				t.Fatalf("err %v (exit %d), want a usage error", err, ExitCode(err))
			}
			if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q, want one line containing %q", err, tc.want)
			}
			if out != "" || strings.Contains(errOut, "flags:") {
				t.Errorf("a usage error printed the flag list:\nstdout %q\nstderr %q", out, errOut)
			}
		})
	}
}

// -h of a command with many flags lists its everyday flags first, in the order of
// everyday[cmd], then the others under group headings in groupOrder; every flag of the
// command is listed exactly once, and the lists name no flag the command lacks.
func TestHelpGroupsFlags(t *testing.T) {
	named := map[string]bool{} // every flag name some grouped command has
	for _, cmd := range slices.Sorted(maps.Keys(everyday)) {
		t.Run(cmd, func(t *testing.T) {
			rec := &flagSetRecorder{}
			err := Run(t.Context(), append(strings.Fields(cmd), "-h"), strings.NewReader(""), rec, rec)
			if err != nil || ExitCode(err) != 0 || len(rec.sets) == 0 {
				t.Fatalf("%s -h: %v (exit %d), %d flag sets", cmd, err, ExitCode(err), len(rec.sets))
			}
			fs := rec.sets[len(rec.sets)-1]
			var all []string
			fs.VisitAll(func(f *flag.Flag) { all = append(all, f.Name); named[f.Name] = true })
			for _, n := range everyday[cmd] {
				if !slices.Contains(all, n) {
					t.Errorf("everyday[%q] names --%s, which the command does not have", cmd, n)
				}
			}
			// The help, cut into sections: "flags:" first, then one per heading.
			var headings []string
			sections := map[string][]string{}
			cur := ""
			for _, line := range strings.Split(rec.String(), "\n") {
				switch {
				case line == "examples:":
					cur = "(examples)"
				case strings.HasSuffix(line, ":") && !strings.HasPrefix(line, " ") && !strings.HasPrefix(line, "usage"):
					cur = strings.TrimSuffix(line, ":")
					headings = append(headings, cur)
				case strings.HasPrefix(line, "  -") && cur != "(examples)":
					name, _, _ := strings.Cut(strings.TrimPrefix(line, "  -"), " ")
					name, _, _ = strings.Cut(name, "\t")
					sections[cur] = append(sections[cur], name)
				}
			}
			if len(headings) == 0 || headings[0] != "flags" {
				t.Fatalf("the first heading is not flags: %v\n%s", headings, rec.String())
			}
			if got := sections["flags"]; !slices.Equal(got, everyday[cmd]) {
				t.Errorf("everyday flags %v, want %v", got, everyday[cmd])
			}
			if n := len(sections["flags"]); n > 16 {
				t.Errorf("%d everyday flags: a newcomer reads at most 16", n)
			}
			want := []string{"flags"}
			for _, g := range groupOrder {
				if len(sections[g]) > 0 {
					want = append(want, g)
				}
			}
			if !slices.Equal(headings, want) {
				t.Errorf("headings %v, want %v (groupOrder, empty ones left out)", headings, want)
			}
			var listed []string
			for _, names := range sections {
				listed = append(listed, names...)
			}
			slices.Sort(listed)
			if !slices.Equal(listed, all) {
				t.Errorf("listed flags %v\nwant each of %v once", listed, all)
			}
			for _, g := range headings[1:] {
				if !slices.IsSorted(sections[g]) {
					t.Errorf("%s: %v not in alphabetical order", g, sections[g])
				}
			}
		})
	}
	for _, n := range slices.Sorted(maps.Keys(flagGroups)) {
		if !named[n] {
			t.Errorf("flagGroups names --%s, which no grouped command has", n)
		}
	}
}

func TestVersion(t *testing.T) {
	t.Setenv("KAIROS_ORT_LIB", t.TempDir()+"/missing.so")
	t.Setenv("KAIROS_ORT_CUDA_LIB", t.TempDir()+"/missing-cuda.so")
	for _, arg := range []string{"--version", "version"} {
		out, _, err := runCLI(t, arg)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"kairos ", "\ncommit ", "\ngo1.", "onnxruntime: not found at ", "missing.so",
			"onnxruntime cuda provider: not found at ", "missing-cuda.so", "make ort-gpu"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: output lacks %q:\n%s", arg, want, out)
			}
		}
	}
}

// kairos version and kairos stats name the same version: the one an index built by this
// binary records, whether built, updated or compacted.
func TestVersionIsWhatIndexesRecord(t *testing.T) {
	out, _, err := runCLI(t, "version")
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(out, "\n")
	v, ok := strings.CutPrefix(first, "kairos ")
	if !ok || v == "" {
		t.Fatalf("kairos version: first line %q", first)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "sf.jsonl")
	writeHead(t, coreShared(t, "data/beir-scifact/corpus.jsonl"), in, 20)
	idx := filepath.Join(dir, "idx")
	for _, args := range [][]string{
		{"index", "--quiet", "--input", in, "--index", idx},
		{"delete", "--index", idx, "--compact-ratio", "-1", "4983"}, // an update
		{"compact", "--index", idx},
	} {
		if out, stderr, err := runCLI(t, args...); err != nil || args[0] == "compact" && !strings.Contains(out, "compacted   yes") {
			t.Fatalf("%v: %v\n%s%s", args, err, out, stderr)
		}
		stats, _, err := runCLI(t, "stats", "--index", idx)
		if err != nil {
			t.Fatal(err)
		}
		if want := " by kairos " + v + " ("; !strings.Contains(stats, want) {
			t.Errorf("after %s: kairos stats lacks %q (kairos version says %q):\n%s", args[0], want, v, stats)
		}
	}
}

func TestCompletion(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		out, _, err := runCLI(t, "completion", shell)
		if err != nil {
			t.Fatalf("%s: %v", shell, err)
		}
		for _, cmd := range []string{"index", "search", "serve", "completion"} {
			if !strings.Contains(out, cmd) {
				t.Errorf("%s completion lacks command %q", shell, cmd)
			}
		}
		if !strings.Contains(out, "__flags") {
			t.Errorf("%s completion does not ask kairos for flags", shell)
		}
	}
	tests := []struct {
		args []string
		want []string
		not  []string
	}{
		{[]string{"search"}, []string{"--index", "--rerank", "--time"}, nil},
		{[]string{"bank", "build"}, []string{"--encoder", "--input", "--out"}, []string{"--index"}},
		// Words that follow the command on the line being completed must never run it.
		{[]string{"index", "--input"}, []string{"--input", "--index"}, nil},
		{[]string{"nosuch"}, nil, []string{"--"}},
	}
	for _, tc := range tests {
		out, _, err := runCLI(t, append([]string{"__flags"}, tc.args...)...)
		if err != nil {
			t.Fatalf("__flags %v: %v", tc.args, err)
		}
		lines := strings.Fields(out)
		for _, w := range tc.want {
			if !contains(lines, w) {
				t.Errorf("__flags %v lacks %s: %v", tc.args, w, lines)
			}
		}
		for _, w := range tc.not {
			for _, l := range lines {
				if strings.HasPrefix(l, w) && (w == "--" || l == w) {
					t.Errorf("__flags %v has %s: %v", tc.args, l, lines)
				}
			}
		}
	}
}

func contains(xs []string, x string) bool {
	for _, s := range xs {
		if s == x {
			return true
		}
	}
	return false
}
