package chat

import (
	"context"
	"hash/fnv"
	"strings"
	"unicode"
)

// HashEncoder is a deterministic hashed bag-of-words encoder: each lower-cased word adds 1 to
// one of Dim buckets. It has no model to load, so banks can be built and tested anywhere; its
// similarity is lexical (shared words), weaker than a sentence encoder's.
type HashEncoder struct {
	Dim int // default 256
}

var _ Encoder = HashEncoder{}

// Encode embeds each text.
func (h HashEncoder) Encode(ctx context.Context, texts []string) ([][]float32, error) {
	dim := h.Dim
	if dim <= 0 {
		dim = 256
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		v := make([]float32, dim)
		for _, w := range Words(t) {
			f := fnv.New32a()
			f.Write([]byte(w))
			v[f.Sum32()%uint32(dim)]++
		}
		out[i] = v
	}
	return out, nil
}

// Words splits text into lower-case words of letters and digits.
func Words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\''
	})
}
