package cli

import (
	"bytes"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/chat"
	"github.com/kairos-rag/kairos/cmd/scalebench"
	"github.com/kairos-rag/kairos/embed"
	"github.com/kairos-rag/kairos/indexer"
	"github.com/kairos-rag/kairos/indexer/backend/qdrant"
	"github.com/kairos-rag/kairos/internal/hnsw"
	"github.com/kairos-rag/kairos/internal/ivf"
	"github.com/kairos-rag/kairos/internal/memlimit"
	"github.com/kairos-rag/kairos/internal/postings"
	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/search"
	"github.com/kairos-rag/kairos/server"
)

// flagSetRecorder is command output that records the FlagSets the command builds.
type flagSetRecorder struct {
	bytes.Buffer
	sets []*flag.FlagSet
}

func (r *flagSetRecorder) observeFlagSet(fs *flag.FlagSet) { r.sets = append(r.sets, fs) }

// defaults maps a flag name to the default its FlagSet must show (flag.Flag.DefValue).
type defaults map[string]string

func (d defaults) with(more ...defaults) defaults {
	out := maps.Clone(d)
	for _, m := range more {
		maps.Copy(out, m)
	}
	return out
}

// zero lists flags whose default is their type's zero value: off, empty, or "0: the library's
// default" (the library resolves it, so the flag must not restate it).
func zero(kind string, names ...string) defaults {
	v := map[string]string{"string": "", "int": "0", "bool": "false"}[kind]
	d := defaults{}
	for _, n := range names {
		d[n] = v
	}
	return d
}

func str(v any) string { return fmt.Sprint(v) }

// Every flag of the commands that expose library options defaults to the library's own
// constant: the options register their flags (Options.Flags), so no default is typed twice.
// The table lists every flag of each command, so a new flag must state its default here.
func TestFlagDefaultsAreTheLibrarys(t *testing.T) {
	runtime := defaults{ // embed.Options.Flags
		"backend": embed.BackendAuto, "device": embed.DeviceCPU, "ort-lib": "", "ort-provider-lib": "",
		"precision": embed.PrecisionAuto, "dim": "0", // 0: the model's dimension
		"pool-on": embed.PoolOnAuto, "sort-batches": "0", "in-flight": "0", // 0: DefaultSortBatches, DefaultInFlight
	}
	models := runtime.with(defaults{"model": "", "embed-batch": "0"}) // 0: embed.DefaultBatchSize, DefaultCUDABatchSize on cuda
	logs := func(level string) defaults { return defaults{"log-level": level, "log-format": "text"} }
	query := models.with(logs("warn"), defaults{ // queryFlags: request fields, zero = request default
		"cross-model": "", "rerank": "none", "ef": "0", "rescore": "0", "binary-rescore": "", // "": int8; rescore 0: the index's rule
	}, zero("string", "mode", "time", "fusion", "now", "date-from", "date-to", "source", "language", "block-type"),
		zero("int", "candidates", "rrf-k", "recent-half-life", "alpha"), zero("bool", "explain", "exact"))
	llm := defaults{ // chat.ClientOptions.Flags, which kairos chat and kairos serve share
		"llm-url": "", "llm-model": "", "llm-key-env": chat.DefaultAPIKeyEnv, "llm-key-file": "",
		"max-tokens": str(chat.DefaultMaxTokens), "llm-timeout": str(chat.DefaultLLMTimeout),
		"llm-retries": str(chat.DefaultMaxRetries), "llm-concurrency": str(chat.DefaultConcurrency),
		"temperature": "0", "llm-price-prompt": "0", "llm-price-completion": "0",
		// chat.WikiChatOptions, SICLOptions and MSDPOptions.Flags
		"passages": str(chat.DefaultPassagesPerQuery), "evidence": str(chat.DefaultEvidencePerClaim), "max-claims": str(chat.DefaultMaxClaims),
		"commonsense-response": chat.CommonsensePaper,
		"sicl-approach":        chat.SICLTop3, "msdp-knowledge": chat.MSDPGenerate,
		"llm-config": "", "llm-stage": "", // chat.LLMStageOptions.Flags: no per-stage settings
	}
	tests := map[string]defaults{
		"index": models.with(logs("warn"), defaults{
			"max-words": str(indexer.DefaultMaxWords), "batch": str(indexer.DefaultBatchSize),
			"checkpoint-every": str(indexer.DefaultCheckpointEvery), "checkpoint-after": indexer.DefaultCheckpointAfter.String(), "heap-floor": str(memlimit.DefaultFloor >> 20), "ram-budget": str(postings.DefaultRAMBudget >> 20), "heap-headroom": fmt.Sprint(memlimit.DefaultHeadroom), "compact-ratio": str(indexer.DefaultCompactRatio),
			"hnsw-m": str(hnsw.DefaultM), "hnsw-ef-construction": str(hnsw.DefaultEfConstruction),
			"hnsw-ef-search": str(hnsw.DefaultEfSearch), "hnsw-seed": str(indexer.DefaultHNSWSeed),
			"vector-index": "auto", "ivf-lists": "0", "ivf-probe": str(ivf.DefaultProbe), "ivf-rescore": str(ivf.DefaultRescore), "ivf-no-refine": "false", // indexer.Options.VectorIndex "": chosen by size; 0 lists: by size
			"bm25-first":    "true",                                               // EmbedInline false: its zero value
			"qdrant-shards": str(qdrant.DefaultShards), "qdrant-replication": "0", // 0: the engine's (qdrant.Options)
		}, zero("string", "input", "index", "format", "source", "language", "lexical", "multistream-index", "vectors", "models-dir", "faq-question", "faq-answer"), zero("int", "workers", "max-record-bytes"),
			zero("bool", "skip-bad", "allow-empty", "quiet", "update", "delete-missing", "resume", "force")),
		"search": query.with(zero("string", "index", "batch", "out", "min-score", "models-dir"), zero("int", "k", "per-doc", "width"), zero("bool", "json")),
		"eval": query.with(defaults{
			"k": str(search.DefaultCutoff), "depth": "300", "run-format": "trec",
			"k1": str(search.BM25K1), "b": str(search.BM25B), "doc-evidence": str(search.DefaultDocEvidence), // search.Options.SetDefaults
		}, zero("string", "index", "queries", "qrels", "run", "plot", "plot-with", "models-dir"), zero("bool", "json")),
		"serve": models.with(llm, logs("info"), defaults{
			"cross-model": "", "addr": defaultAddr, "shutdown-timeout": str(defaultShutdownTimeout),
			"timeout": str(server.DefaultTimeout), "max-total-hits": str(server.DefaultMaxTotalHits),
			"max-k": str(server.DefaultMaxK), "max-queries": str(server.DefaultMaxQueries),
			"max-query-chars": str(server.DefaultMaxQueryChars), "max-candidates": str(server.DefaultMaxCandidates),
			"max-in-flight-hits":     "0", // 0: 4 x max-total-hits (server.Options)
			"max-response-bytes":     str(server.DefaultMaxResponseBytes),
			"recent-half-life":       str(rerank.DefaultOptions().RecentHalfLifeYears),
			"chat-max-conversations": str(chat.DefaultMaxConversations), "chat-idle-ttl": str(chat.DefaultIdleTTL),
			"chat-max-turns": str(chat.DefaultMaxTurns), "chat-max-history-bytes": str(chat.DefaultMaxHistoryBytes),
			"chat-max-memory-bytes":            str(chat.DefaultMaxMemoryBytes),
			"chat-max-conversations-per-owner": str(chat.DefaultMaxConversationsPerOwner), "chat-evict-idle": str(chat.DefaultEvictIdle),
			"chat-timeout": str(server.DefaultChatTimeout), "chat-rate-limit": str(server.DefaultChatRatePerMinute),
			"chat-rate-burst": str(server.DefaultChatBurst), "chat-new-per-day": str(server.DefaultChatNewPerDay), "chat-max-in-flight": str(server.DefaultChatMaxInFlight),
			"chat-store": "", // "": resolved beside --index (defaultChatStore); given as "", memory only
			"heap-floor": str(memlimit.DefaultServeFloor >> 20), "heap-headroom": fmt.Sprint(memlimit.DefaultServeHeadroom),
			"ef": "0", "rescore": "0", "binary-rescore": "", // as search's: the index's ef_search; int8
		}, zero("string", "index", "api-key-file", "cors-origins", "allowed-hosts", "trusted-proxies", "prompts", "bank", "models-dir"), zero("bool", "verify", "chat-trace")),
		"chat": models.with(llm, logs("warn"), defaults{
			"pipeline": "wikichat",
		}, zero("string", "index", "message", "transcript", "conversation", "state", "prompts", "bank", "encoder",
			"skip", "mode", "persona", "models-dir"), zero("bool", "trace")),
		"embed": runtime.with(logs("warn"), defaults{
			"model": "", "batch": "0", "threads": "0", // 0: embed.DefaultBatchSize (CUDA: DefaultCUDABatchSize), GOMAXPROCS
			"input": "-", "output": "-", "kind": "passage", "v": "false",
		}),
		"bank build": runtime.with(defaults{"encoder": "hash", "input": "", "out": "", "batch": "64"}),
		"bench scale": models.with(defaults{ // scalebench.Options.Flags, from SetDefaults
			"seed": str(scalebench.DefaultSeed), "queries": str(scalebench.DefaultQueries), "k": str(scalebench.DefaultK),
			"warmup": str(scalebench.DefaultWarmup), "shared": scalebench.DefaultShared(), "xapian": scalebench.AnchorAuto,
			"lucene": scalebench.AnchorAuto, "python": scalebench.DefaultPython, "java": scalebench.DefaultJava,
			"lucene-jars": scalebench.DefaultJarDir,
		}, zero("string", "passages", "input", "work", "kairos", "lexical", "plot", "dense-engines"), zero("bool", "keep", "json")),
	}
	for cmd, want := range tests {
		t.Run(cmd, func(t *testing.T) {
			rec := &flagSetRecorder{}
			err := Run(t.Context(), append(strings.Fields(cmd), "-h"), strings.NewReader(""), rec, rec)
			if err != nil || len(rec.sets) == 0 {
				t.Fatalf("%s -h: %v, %d flag sets", cmd, err, len(rec.sets))
			}
			fs := rec.sets[len(rec.sets)-1]
			seen := map[string]bool{}
			fs.VisitAll(func(f *flag.Flag) {
				seen[f.Name] = true
				w, ok := want[f.Name]
				switch {
				case !ok:
					t.Errorf("--%s (default %q) is not in this test's table: say where its default comes from", f.Name, f.DefValue)
				case f.DefValue != w:
					t.Errorf("--%s defaults to %q, want %q", f.Name, f.DefValue, w)
				}
			})
			for _, n := range slices.Sorted(maps.Keys(want)) {
				if !seen[n] {
					t.Errorf("%s has no --%s", cmd, n)
				}
			}
		})
	}
}

// Every default is what the library applies to a zero option: parsing no flags gives options
// equal to the library's defaults, checked through the values a command hands on.
func TestParsedDefaultsAreTheLibrarys(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	var uo indexer.UpdateOptions
	uo.Flags(fs)
	var srv server.Options
	srv.Flags(fs)
	var tm rerank.Options
	tm.Flags(fs)
	var cl chat.ClientOptions
	cl.Flags(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"MaxWords", uo.Build.MaxWords, indexer.DefaultMaxWords},
		{"BatchSize", uo.Build.BatchSize, indexer.DefaultBatchSize},
		{"HNSW", uo.HNSW, hnsw.Options{M: hnsw.DefaultM, EfConstruction: hnsw.DefaultEfConstruction, EfSearch: hnsw.DefaultEfSearch, Seed: indexer.DefaultHNSWSeed}},
		{"CompactRatio", uo.CompactRatio, indexer.DefaultCompactRatio},
		{"CheckpointEvery", uo.CheckpointEvery, indexer.DefaultCheckpointEvery},
		{"CheckpointAfter", uo.CheckpointAfter, indexer.DefaultCheckpointAfter},
		{"QdrantShards", uo.Qdrant.Shards, uint32(qdrant.DefaultShards)},
		{"QdrantReplication", uo.Qdrant.Replication, uint32(0)},
		{"Timeout", srv.Timeout, server.DefaultTimeout},
		{"MaxTotalHits", srv.MaxTotalHits, server.DefaultMaxTotalHits},
		{"MaxResponseBytes", srv.MaxResponseBytes, int64(server.DefaultMaxResponseBytes)},
		{"CORSOrigins", srv.CORSOrigins == nil, true},
		{"RecentHalfLifeYears", tm.RecentHalfLifeYears, rerank.DefaultOptions().RecentHalfLifeYears},
		{"MaxTokens", cl.MaxTokens, chat.DefaultMaxTokens},
		{"APIKeyEnv", cl.APIKeyEnv, chat.DefaultAPIKeyEnv},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	// --cors-origins is a list: blanks dropped, order kept.
	if err := fs.Parse([]string{"--cors-origins", " https://a.example, ,https://b.example "}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(srv.CORSOrigins, "|"); got != "https://a.example|https://b.example" {
		t.Errorf("CORSOrigins = %q", got)
	}
}
