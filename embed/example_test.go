package embed_test

import (
	"context"
	"fmt"
	"log"
	"path/filepath"

	"github.com/kairos-rag/kairos/embed"
)

// Open an encoder on a model folder, embed a query and two passages, and rank the passages.
// (The synthetic model has random weights: the ranking itself means nothing.)
func Example() {
	ctx := context.Background()
	dir := filepath.Join("..", "..", "shared", "models", "synthetic", "tiny-encoder")
	enc, err := embed.OpenEncoder(ctx, embed.Options{ModelDir: dir, Backend: embed.BackendORT})
	if err != nil {
		log.Fatal(err)
	}
	defer enc.Close()
	info := enc.Info()
	fmt.Printf("%s: dim %d, %s pooling, normalized %v, max %d tokens, backend %s\n",
		info.Name, info.Dim, info.Pooling, info.Normalize, info.MaxSeqLen, info.Backend)

	q, err := enc.Encode(ctx, embed.Query, []string{"when was the eiffel tower built?"})
	if err != nil {
		log.Fatal(err)
	}
	ps, err := enc.Encode(ctx, embed.Passage, []string{
		"Eiffel Tower. The tower was built from 1887 to 1889.",
		"Photosynthesis converts light into chemical energy.",
	})
	if err != nil {
		log.Fatal(err)
	}
	for i, p := range ps {
		var dot float32
		for k := range p {
			dot += p[k] * q[0][k]
		}
		fmt.Printf("passage %d: %d dims, score in [-1, 1]: %v\n", i, len(p), dot >= -1.0001 && dot <= 1.0001)
	}
	_, err = enc.Encode(ctx, embed.Passage, []string{"  "})
	fmt.Println(err)
	// Output:
	// tiny-encoder: dim 64, mean pooling, normalized true, max 256 tokens, backend ort
	// passage 0: 64 dims, score in [-1, 1]: true
	// passage 1: 64 dims, score in [-1, 1]: true
	// text 0: text is empty or whitespace
}
