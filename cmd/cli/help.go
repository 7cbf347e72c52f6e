package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// examples are printed after the flags by `kairos CMD -h`, keyed by the FlagSet name.
var examples = map[string][]string{
	"index": {
		"kairos index --input enwiki-latest-pages-articles1.xml.bz2 --index enwiki.idx",
		"kairos index --input corpus.jsonl --index sf.idx --model ~/.cache/kairos/models/sentence-transformers/all-MiniLM-L6-v2",
		"kairos index --input corpus.jsonl --index sf.idx --update --delete-missing",
	},
	"search": {
		`kairos search --index enwiki.idx -k 5 "Who directed An American in Paris?"`,
		`kairos search --index tq.idx --rerank time --time auto "Who owned the house in 1820?"`,
		"kairos search --index sf.idx --batch queries.jsonl --out run.jsonl",
	},
	"eval": {
		"kairos eval --index sf.idx --queries queries.jsonl --qrels qrels/train.tsv",
		"kairos eval --index tq.idx --queries q.jsonl --depth 50 --time auto --rerank time",
	},
	"serve": {
		"kairos serve --index enwiki.idx --addr 127.0.0.1:8080",
		"kairos serve --index enwiki.idx --llm-url http://127.0.0.1:8000/v1 --llm-model my-model",
	},
	"chat": {
		`kairos chat --index enwiki.idx --llm-url http://127.0.0.1:8000/v1 --llm-model my-model --message "Who directed Frozen?"`,
		"go run ./chat/chattest/fakellm -script chat/chattest/failpaths/wikichat-supported.json   # a scripted LLM to try it",
	},
	"stats":            {"kairos stats --index enwiki.idx"},
	"verify":           {"kairos verify --index enwiki.idx"},
	"passages":         {"kairos passages --input corpus.jsonl | head"},
	"delete":           {"kairos delete --index sf.idx 4983 5836"},
	"compact":          {"kairos compact --index sf.idx"},
	"embed":            {"kairos embed --model DIR --input texts.jsonl --output vectors.jsonl"},
	"models pull":      {"kairos models pull sentence-transformers/all-MiniLM-L6-v2"},
	"models list":      {"kairos models list"},
	"dataset timeqa":   {"kairos dataset timeqa --input human_annotated_train.json --corpus tq/corpus.jsonl --queries tq/q.jsonl"},
	"bank topical":     {"kairos bank topical --dir topical-chat --out examples.jsonl --split test_freq --max 300"},
	"bank build":       {"kairos bank build --input examples.jsonl --out bank.kb --encoder hash"},
	"bank info":        {"kairos bank info bank.kb"},
	"bench ann":        {"kairos bench ann --n 50000 --ef 16,32,64 --json", "kairos bench ann --model DIR --topics 1000 --n 1m --engines kairos,anchors --plot ann.svg"},
	"bench ann-engine": {"kairos bench ann --n 20000 --dump d && kairos bench ann-engine build --engine kairos-hnsw --data d --index ix"},
	"bench ivf":        {"kairos bench ann --model DIR --topics 1000 --n 1000000 --dump d1m", "kairos bench ivf --data d1m --filter-share 0.01"},
	"bench encode":     {"kairos bench encode --model DIR --input corpus.jsonl --device cuda --compare-device cpu", "kairos bench encode --model DIR --input c.jsonl --cross-model CE --json"},
	"bench corpus":     {"kairos bench corpus --passages 1m --out c1m.jsonl"},
	"bench scale":      {"kairos bench scale --passages 100k,300k", "kairos bench scale --passages 1m --lexical postings --xapian off"},
	"completion":       {"source <(kairos completion bash)", "kairos completion fish > ~/.config/fish/completions/kairos.fish"},
}

func printExamples(w io.Writer, name string) {
	ex := examples[name]
	if len(ex) == 0 {
		return
	}
	fmt.Fprintln(w, "\nexamples:")
	for _, e := range ex {
		fmt.Fprintln(w, "  "+e)
	}
}

// subcommand is one member of a command group such as `kairos bank build`.
type subcommand struct {
	name, summary string
	run           func(ctx context.Context, args []string, io IO) error
}

// runGroup dispatches `kairos GROUP SUB ...`: -h prints the group's subcommands, a missing or
// unknown subcommand is a one-line usage error.
func runGroup(ctx context.Context, group string, subs []subcommand, args []string, stdio IO) error {
	names := make([]string, len(subs))
	for i, s := range subs {
		names[i] = s.name
	}
	if len(args) == 0 {
		return usageError(group, "need a subcommand: "+strings.Join(names, ", "))
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprintf(stdio.Stderr, "usage: kairos %s <%s> [flags]\n\n", group, strings.Join(names, "|"))
		for _, s := range subs {
			fmt.Fprintf(stdio.Stderr, "  %-9s %s\n", s.name, s.summary)
		}
		fmt.Fprintf(stdio.Stderr, "\nRun 'kairos %s <subcommand> -h' for its flags.\n", group)
		return flag.ErrHelp
	}
	for _, s := range subs {
		if s.name == args[0] {
			return s.run(ctx, args[1:], stdio)
		}
	}
	return usageError(group, fmt.Sprintf("unknown subcommand %q%s (want %s)", args[0], didYouMean(args[0], names), strings.Join(names, ", ")))
}

// isHelp reports whether err is the request for help that a command has already answered.
func isHelp(err error) bool { return errors.Is(err, flag.ErrHelp) }
