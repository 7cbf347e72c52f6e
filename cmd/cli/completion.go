package cli

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
)

// cmdCompletion is `kairos completion bash|zsh|fish`. The scripts complete command names from a
// list written into them and flags by asking `kairos __flags CMD`, which reads them off the
// command's own FlagSet, so they never go stale when a flag is added.
func cmdCompletion(_ context.Context, args []string, stdio IO) error {
	fs := newFlags("completion", "bash|zsh|fish", stdio.Stderr)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErr(fs, "name one shell: bash, zsh or fish")
	}
	names := commandNames(commands())
	var script string
	switch pos[0] {
	case "bash":
		script = fmt.Sprintf(bashCompletion, strings.Join(names, " "))
	case "zsh":
		script = "autoload -U +X bashcompinit && bashcompinit\n" + fmt.Sprintf(bashCompletion, strings.Join(names, " "))
	case "fish":
		var b strings.Builder
		cmds := commands()
		b.WriteString("complete -c kairos -f\n")
		for _, n := range names {
			fmt.Fprintf(&b, "complete -c kairos -n __fish_use_subcommand -a %s -d %q\n", n, cmds[n].summary)
		}
		b.WriteString(fishFlags)
		script = b.String()
	default:
		return usageErr(fs, "unknown shell %q: want bash, zsh or fish", pos[0])
	}
	_, err = fmt.Fprint(stdio.Stdout, script)
	return err
}

// printCommandFlags prints, one a line, the flags (as --name) of the command or subcommand
// named by args ("search", "bank build"), by running it with -h into a buffer.
func printCommandFlags(ctx context.Context, cmds map[string]command, args []string, stdio IO) error {
	if len(args) == 0 {
		return nil
	}
	c, ok := cmds[args[0]]
	if !ok {
		return nil
	}
	// Only ever "CMD -h" or "GROUP SUB -h": anything else from the command line being completed
	// could be taken as flag values and run the command for real.
	rest := []string{"-h"}
	switch args[0] {
	case "bank", "models", "dataset", "bench":
		if len(args) > 1 && !strings.HasPrefix(args[1], "-") {
			rest = []string{args[1], "-h"}
		}
	}
	var help bytes.Buffer
	_ = c.run(ctx, rest, IO{Stdin: strings.NewReader(""), Stdout: &help, Stderr: &help})
	for _, line := range strings.Split(help.String(), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(line, "  -") {
			continue
		}
		fmt.Fprintln(stdio.Stdout, "-"+f[0])
	}
	return nil
}

func commandNames(cmds map[string]command) []string {
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

const bashCompletion = `# kairos completion for bash (and zsh through bashcompinit)
_kairos() {
  local cur=${COMP_WORDS[COMP_CWORD]}
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "%s" -- "$cur"))
    return
  fi
  if [[ $cur == -* ]]; then
    local cmd=${COMP_WORDS[1]} sub=
    case $cmd in bank|models|dataset|bench) sub=${COMP_WORDS[2]} ;; esac
    COMPREPLY=($(compgen -W "$(kairos __flags $cmd $sub 2>/dev/null)" -- "$cur"))
    return
  fi
  COMPREPLY=($(compgen -f -- "$cur"))
}
complete -o filenames -F _kairos kairos
`

const fishFlags = `function __kairos_flags
  set -l words (commandline -opc)
  kairos __flags $words[2..3] 2>/dev/null
end
complete -c kairos -n 'not __fish_use_subcommand' -F -a '(__kairos_flags)'
`
