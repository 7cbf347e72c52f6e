package cli

import (
	"context"
)

// cmdBench dispatches the benchmark modes: `kairos bench ann ...`.
func cmdBench(ctx context.Context, args []string, stdio IO) error {
	return runGroup(ctx, "bench", []subcommand{
		{"ann", "HNSW recall@10 against exact search and single-thread QPS; with --engines, every vector index on the same vectors", cmdBenchANN},
		{"ann-engine", "one phase of one of Kairos's vector indexes over a bench ann dump (the child bench ann --engines runs)", cmdBenchANNEngine},
		{"ivf", "the inverted file's recall@10 against exact search and single-thread QPS on the vectors bench ann --dump wrote", cmdBenchIVF},
		{"encode", "sentence encoder rate by stage (tokenizer, model, pipelined) and vector agreement across devices", cmdBenchEncode},
		{"corpus", "write the seeded synthetic passages bench scale measures", cmdBenchCorpus},
		{"scale", "build rate, build peak RSS, index size and query latency as the collection grows", cmdBenchScale},
	}, args, stdio)
}
