package cli

import (
	"flag"
	"fmt"
	"io"
	"slices"
)

// A command's -h lists its everyday flags first, in the order a newcomer needs them, then the
// rest under headings: `kairos index -h` had 44 flags in one alphabetical list, GPU, ONNX
// Runtime, Qdrant and heap tuning mixed with --input and --index.

// everyday lists, per FlagSet name, the flags -h shows first. A command listed here shows its
// other flags under their group's heading (flagGroups), or under "advanced"; a command not
// listed (a handful of flags) lists them all alphabetically, as flag.PrintDefaults does. bench
// ann's --dim is the generated vectors' and its --ef the sweep's, so both are everyday there,
// outside models and GPU and ranking.
var everyday = map[string][]string{
	"index": {"input", "index", "model", "update", "resume", "force", "source", "format", "language",
		"skip-bad", "delete-missing", "quiet"},
	"search": {"index", "k", "mode", "model", "rerank", "cross-model", "time", "source", "language",
		"date-from", "date-to", "json", "explain", "width", "batch", "out"},
	"eval": {"index", "queries", "qrels", "depth", "k", "mode", "model", "rerank", "cross-model", "time",
		"run", "plot", "plot-with", "json"},
	"serve": {"index", "addr", "model", "cross-model", "llm-url", "llm-model", "api-key-file", "chat-store",
		"bank", "verify"},
	"chat": {"index", "llm-url", "llm-model", "pipeline", "message", "model", "bank", "conversation",
		"state", "trace", "transcript"},
	"embed":        {"model", "input", "output", "kind"},
	"bank build":   {"input", "out", "encoder"},
	"bench encode": {"model", "input", "cross-model", "json"},
	"bench scale":  {"passages", "model", "queries", "plot", "json"},
	"bench ann":    {"model", "topics", "n", "queries", "engines", "plot", "json", "dim", "ef"},
}

// Group headings, in the order -h prints them.
const (
	groupFilters = "filters and time"
	groupRanking = "ranking"
	groupChat    = "chat and LLM"
	groupLimits  = "limits"
	groupAdv     = "advanced"
	groupAnchors = "anchors"
	groupModels  = "models and GPU"
	groupQdrant  = "Qdrant"
	groupMemory  = "memory"
	groupLog     = "logging"
)

var groupOrder = []string{groupFilters, groupRanking, groupChat, groupLimits, groupAdv, groupAnchors, groupModels, groupQdrant, groupMemory, groupLog}

// flagGroups is the heading of a flag that is not everyday for its command, by flag name: a
// name means the same thing in every command that has it.
var flagGroups = map[string]string{
	// filters and time
	"source": groupFilters, "language": groupFilters, "block-type": groupFilters, "date-from": groupFilters,
	"date-to": groupFilters, "time": groupFilters, "now": groupFilters, "recent-half-life": groupFilters,
	// ranking
	"alpha": groupRanking, "fusion": groupRanking, "rrf-k": groupRanking, "candidates": groupRanking,
	"ef": groupRanking, "rescore": groupRanking, "exact": groupRanking, "binary-rescore": groupRanking, "k1": groupRanking, "b": groupRanking,
	"per-doc": groupRanking, "min-score": groupRanking, "doc-evidence": groupRanking,
	// chat and LLM
	"llm-url": groupChat, "llm-model": groupChat, "llm-concurrency": groupChat, "llm-config": groupChat,
	"llm-key-env": groupChat, "llm-key-file": groupChat, "llm-price-completion": groupChat,
	"llm-price-prompt": groupChat, "llm-retries": groupChat, "llm-stage": groupChat, "llm-timeout": groupChat,
	"max-tokens": groupChat, "temperature": groupChat, "passages": groupChat, "evidence": groupChat,
	"max-claims": groupChat, "commonsense-response": groupChat, "msdp-knowledge": groupChat,
	"sicl-approach": groupChat, "prompts": groupChat, "bank": groupChat, "encoder": groupChat,
	"persona": groupChat, "skip": groupChat, "chat-store": groupChat, "chat-evict-idle": groupChat,
	"chat-idle-ttl": groupChat, "chat-max-conversations": groupChat, "chat-max-conversations-per-owner": groupChat,
	"chat-max-history-bytes": groupChat, "chat-max-in-flight": groupChat, "chat-max-memory-bytes": groupChat,
	"chat-max-turns": groupChat, "chat-rate-burst": groupChat, "chat-rate-limit": groupChat, "chat-timeout": groupChat, "chat-trace": groupChat,
	// limits (serve)
	"max-in-flight-hits": groupLimits, "max-response-bytes": groupLimits, "max-total-hits": groupLimits,
	"timeout": groupLimits, "shutdown-timeout": groupLimits, "cors-origins": groupLimits, "allowed-hosts": groupLimits, "trusted-proxies": groupLimits,
	// models and GPU: where and how models run (embed.Options.Flags)
	"backend": groupModels, "device": groupModels, "dim": groupModels, "embed-batch": groupModels,
	"in-flight": groupModels, "ort-lib": groupModels, "ort-provider-lib": groupModels, "pool-on": groupModels,
	"precision": groupModels, "sort-batches": groupModels, "models-dir": groupModels, "threads": groupModels,
	"cross-model": groupModels, "model": groupModels,
	// anchors: the other engines a benchmark runs on the same input, and their parameters
	"dense-engines": groupAnchors, "python": groupAnchors, "node": groupAnchors, "qdrant": groupAnchors,
	"java": groupAnchors, "lucene": groupAnchors, "lucene-jars": groupAnchors, "xapian": groupAnchors,
	"nlist": groupAnchors, "pq-m": groupAnchors, "train": groupAnchors, "nprobe": groupAnchors,
	"qdrant-oversampling": groupAnchors, "lancedb-modules": groupAnchors, "lancedb-nprobes": groupAnchors,
	"lancedb-partitions": groupAnchors, "lancedb-refine": groupAnchors, "lancedb-sub-vectors": groupAnchors,
	// Qdrant
	"qdrant-replication": groupQdrant, "qdrant-shards": groupQdrant,
	// memory
	"heap-floor": groupMemory, "heap-headroom": groupMemory, "ram-budget": groupMemory,
	// logging
	"log-level": groupLog, "log-format": groupLog,
}

// groupOf is the heading flag name of command cmd is listed under; "" for the first list.
func groupOf(cmd, name string) string {
	list, listed := everyday[cmd]
	if !listed || slices.Contains(list, name) {
		return ""
	}
	if g, ok := flagGroups[name]; ok {
		return g
	}
	return groupAdv
}

// printFlags prints fs's flags as flag.PrintDefaults does, the everyday ones first under
// "flags:", then each group under its heading.
func printFlags(fs *flag.FlagSet) {
	byGroup := map[string][]*flag.Flag{}
	fs.VisitAll(func(f *flag.Flag) { // alphabetical
		g := groupOf(fs.Name(), f.Name)
		byGroup[g] = append(byGroup[g], f)
	})
	if len(byGroup) == 0 {
		return
	}
	w := fs.Output()
	first := byGroup[""]
	order := everyday[fs.Name()]
	slices.SortStableFunc(first, func(a, b *flag.Flag) int {
		return rank(order, a.Name) - rank(order, b.Name)
	})
	fmt.Fprintln(w, "flags:")
	for _, f := range first {
		printFlag(w, f)
	}
	for _, g := range groupOrder {
		if len(byGroup[g]) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s:\n", g)
		for _, f := range byGroup[g] {
			printFlag(w, f)
		}
	}
}

// rank is the place of name in order; names not in it come after, in their own order.
func rank(order []string, name string) int {
	if i := slices.Index(order, name); i >= 0 {
		return i
	}
	return len(order)
}

// printFlag prints one flag exactly as flag.PrintDefaults would, through a FlagSet of its own
// holding it with its default (not the value flags before -h may have set).
func printFlag(w io.Writer, f *flag.Flag) {
	one := flag.NewFlagSet("", flag.ContinueOnError)
	one.SetOutput(w)
	one.Var(f.Value, f.Name, f.Usage)
	one.Lookup(f.Name).DefValue = f.DefValue
	one.PrintDefaults()
}
