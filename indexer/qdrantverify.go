package indexer

import (
	"context"
	"errors"
	"fmt"

	"github.com/kairos-rag/kairos/indexer/backend"
)

// verifyQdrant checks the live generation of the index on the cluster of loc: the manifest
// record and its checksum, the document table record against the manifest's sum, that the
// table lists exactly the passages the collection holds, and the engine's checks (counts,
// BM25 metadata, every passage with its BM25 weights and, with embeddings, its dense vector).
func verifyQdrant(ctx context.Context, loc Location) (*VerifyReport, error) {
	e, coll, man, err := liveQdrant(ctx, loc)
	if err != nil {
		var de *DamagedError
		if errors.As(err, &de) {
			return &VerifyReport{Generation: loc.String(), Problems: []Problem{{Path: de.Path, What: de.What}}}, nil
		}
		return nil, err
	}
	defer e.Close()
	where := loc.String() + " (collection " + coll + ")"
	rep := &VerifyReport{Generation: where}
	bad := func(what string, format string, a ...any) {
		rep.Problems = append(rep.Problems, Problem{Path: where + " " + what, What: fmt.Sprintf(format, a...)})
	}
	g := backend.Gen{Name: genName(man.Generation)}
	counts, err := e.VerifyParts(ctx, g, man.Dense != nil)
	rep.Passages = counts.Passages
	if err != nil {
		bad("points", "%v", err)
	}
	if counts.Passages != man.Counts.Passages {
		bad("points", "%d passages, the manifest says %d", counts.Passages, man.Counts.Passages)
	}
	if man.Dense != nil && counts.Dense != man.Dense.Vectors {
		bad("points", "%d dense vectors, the manifest says %d", counts.Dense, man.Dense.Vectors)
	}
	rep.Files++
	docs, err := e.ReadRecord(ctx, coll, recordDocTable)
	if err != nil {
		bad("document table", "%v", err)
		return rep, nil
	}
	if got, want := sumOf(docs), man.Files[docTableName]; got != want {
		bad("document table", "size %d sha256 %s, manifest says size %d sha256 %s", got.Size, got.SHA256, want.Size, want.SHA256)
		return rep, nil
	}
	table, err := parseDocTable(docs)
	if err != nil {
		bad("document table", "%v", err)
		return rep, nil
	}
	lex, err := e.Lexical().Open(ctx, g, backend.Scoring{}, nil)
	if err != nil {
		bad("BM25", "opening: %v", err)
		return rep, nil
	}
	defer lex.Close()
	var keys []uint32
	for _, d := range table {
		keys = append(keys, d.Keys...)
	}
	if len(keys) != counts.Passages {
		bad("document table", "lists %d passages, the collection holds %d", len(keys), counts.Passages)
	}
	const chunk = 1000
	missing := 0
	for lo := 0; lo < len(keys); lo += chunk {
		has, err := lex.Has(ctx, keys[lo:min(lo+chunk, len(keys))])
		if err != nil {
			return nil, err
		}
		for _, ok := range has {
			if !ok {
				missing++
			}
		}
	}
	if missing > 0 {
		bad("document table", "%d of its passages are missing from the collection", missing)
	}
	return rep, nil
}
