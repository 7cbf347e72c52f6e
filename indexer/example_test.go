package indexer_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/kairos-rag/kairos/indexer"
)

// writeCorpus writes a JSONL corpus of documents (id, title, text) into dir.
func writeCorpus(dir, name string, docs ...[3]string) string {
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	for _, d := range docs {
		fmt.Fprintf(f, "{\"_id\": %q, \"title\": %q, \"text\": %q}\n", d[0], d[1], d[2])
	}
	return path
}

// Build an index of a small corpus in a local directory: the index opens at its location
// (a directory, or a qdrant:// location for an index on a Qdrant cluster), and a build
// commits its first generation. With an encoder (Options.Encoder) the BM25 index would be
// committed first and the vectors in the next generation.
func ExampleIndex_Build() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "kairos-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	docs := writeCorpus(dir, "docs.jsonl",
		[3]string{"1", "Vitamin D", "Vitamin D deficiency is common in winter."},
		[3]string{"2", "Stem cells", "Stem cells regenerate damaged tissue."})

	ix, err := indexer.Open(ctx, indexer.Location{Dir: filepath.Join(dir, "index")})
	if err != nil {
		log.Fatal(err)
	}
	defer ix.Close()
	sum, err := ix.Build(ctx, indexer.Options{Inputs: []indexer.InputSpec{{Path: docs}}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("generation %d: %d documents, %d passages, lexical engine %s\n",
		sum.Generation, sum.Counts.Documents, sum.Counts.Passages, indexer.DefaultLexical)
	// Output: generation 1: 2 documents, 2 passages, lexical engine postings
}

// Update an index from a newer corpus: a new document is added, a changed one replaces its
// passages, an unchanged one is left alone, and with DeleteMissing a document the corpus no
// longer has is deleted. The update is a new generation; searches on the previous one are
// unaffected until they reopen. Here the replaced and deleted passages are more than
// DefaultCompactRatio of them, so the update is compacted at once, into the generation after.
func ExampleIndex_Update() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "kairos-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	older := writeCorpus(dir, "older.jsonl",
		[3]string{"1", "Vitamin D", "Vitamin D deficiency is common in winter."},
		[3]string{"2", "Stem cells", "Stem cells regenerate damaged tissue."},
		[3]string{"3", "Sleep", "Sleep consolidates memory."})
	newer := writeCorpus(dir, "newer.jsonl",
		[3]string{"1", "Vitamin D", "Vitamin D deficiency is common in winter."},
		[3]string{"2", "Stem cells", "Stem cells regenerate damaged heart tissue."},
		[3]string{"4", "Exercise", "Exercise lowers blood pressure."})

	ix, err := indexer.Open(ctx, indexer.Location{Dir: filepath.Join(dir, "index")})
	if err != nil {
		log.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.Build(ctx, indexer.Options{Inputs: []indexer.InputSpec{{Path: older}}}); err != nil {
		log.Fatal(err)
	}
	sum, err := ix.Update(ctx, indexer.UpdateOptions{Options: indexer.Options{Inputs: []indexer.InputSpec{{Path: newer}}}, DeleteMissing: true})
	if err != nil {
		log.Fatal(err)
	}
	u := sum.Update
	fmt.Printf("generation %d (compacted %v): %d added, %d changed, %d unchanged, %d deleted; %d documents live\n",
		sum.Generation, sum.Compacted, u.Added, u.Changed, u.Unchanged, u.Deleted, sum.Counts.Documents)
	// Output: generation 3 (compacted true): 1 added, 1 changed, 1 unchanged, 1 deleted; 3 documents live
}
