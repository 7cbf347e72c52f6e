package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/kairos-rag/kairos/embed"
	"github.com/kairos-rag/kairos/indexer/backend/ivfvec"
	"github.com/kairos-rag/kairos/indexer/manifest"
	"github.com/kairos-rag/kairos/internal/ivf"
)

// openBuiltIVF opens the inverted file of the live generation of the kairos index in dir for
// kairos bench ivf --from-index, with the queries of queryFile embedded by model and their
// exact neighbours in the index (as a dump would hold them: the dump's base vectors are the
// index's own).
func openBuiltIVF(ctx context.Context, dir, queryFile, model string, log io.Writer) (*ivf.Reader, *ivfDump, error) {
	gen, err := manifest.Current(dir)
	if err != nil {
		return nil, nil, err
	}
	man, err := manifest.Read(gen)
	if err != nil {
		return nil, nil, err
	}
	if man.Dense == nil || man.Dense.IndexKind() != manifest.VectorIndexIVF {
		return nil, nil, fmt.Errorf("%s: the live generation has no inverted file (kairos index --vector-index ivf writes one)", dir)
	}
	texts, err := readQueryTexts(queryFile)
	if err != nil {
		return nil, nil, err
	}
	enc, err := embed.OpenEncoder(ctx, embed.Options{ModelDir: model})
	if err != nil {
		return nil, nil, fmt.Errorf("opening model %s: %w", model, err)
	}
	queries, err := enc.Encode(ctx, embed.Query, texts)
	enc.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("embedding the queries: %w", err)
	}
	r, err := ivf.Open(ivfvec.Dir(gen), ivf.OpenOptions{})
	if err != nil {
		return nil, nil, err
	}
	start := time.Now()
	gt, err := exactKeys(ctx, r, queries, nil)
	if err != nil {
		r.Close()
		return nil, nil, err
	}
	fmt.Fprintf(log, "%s: %d vectors of dim %d, %d lists; the exact neighbours of %d queries in %.1f s\n",
		dir, r.Len(), r.Dim(), r.Options().Lists, len(queries), time.Since(start).Seconds())
	return r, &ivfDump{n: r.Len(), dim: r.Dim(), queries: queries, gt: gt}, nil
}

// exactKeys is the keys of the exact annK neighbours of each query among the vectors keep
// passes (all when nil), found in one pass over r's vectors.
func exactKeys(ctx context.Context, r *ivf.Reader, queries [][]float32, keep func(uint32) bool) ([][]uint32, error) {
	res, err := r.ExactMany(ctx, queries, annK, keep, 0)
	if err != nil {
		return nil, err
	}
	gt := make([][]uint32, len(res))
	for i, hits := range res {
		for _, h := range hits {
			gt[i] = append(gt[i], h.Key)
		}
	}
	return gt, nil
}

// readQueryTexts reads a JSONL file of queries: a JSON string a line, or an object whose
// "text" is the query.
func readQueryTexts(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var texts []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<24)
	for line := 1; sc.Scan(); line++ {
		b := sc.Bytes()
		if len(b) == 0 {
			continue
		}
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			var o struct {
				Text *string `json:"text"`
			}
			if err := json.Unmarshal(b, &o); err != nil || o.Text == nil {
				return nil, fmt.Errorf("%s: line %d: want a JSON string or an object with \"text\"", path, line)
			}
			s = *o.Text
		}
		texts = append(texts, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(texts) == 0 {
		return nil, fmt.Errorf("%s: no query", path)
	}
	return texts, nil
}
