package scalebench

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"

	"github.com/kairos-rag/kairos/corpus/synthcorpus"
	"github.com/kairos-rag/kairos/embed"
)

// TopicModelOptions describe the static model WriteTopicModel writes.
type TopicModelOptions struct {
	// Topics is the corpus's synthcorpus.Options.Topics; at least 1.
	Topics int
	// Dim is the table's dimension (0: 256, potion-base-8M's).
	Dim int
	// Noise is the norm of the random part of each row relative to the topic part's (0:
	// DefaultTopicNoise). It stands for everything a word means beyond its topic.
	Noise float64
	// Seed draws the topics' directions and the noise.
	Seed uint64
	// Tokenizer is the tokenizer.json the model tokenizes with (TopicTokenizer: the
	// bert-base-uncased WordPiece of the shared static fixtures).
	Tokenizer string
}

// TopicTokenizer is the tokenizer a topic model uses, relative to the shared directory.
const TopicTokenizer = "models/tokenizers/all-MiniLM-L6-v2/tokenizer.json"

// DefaultTopicNoise is TopicModelOptions.Noise's default: a row's random part as long as its
// topic part.
const DefaultTopicNoise = 1.0

// sifA is the smoothing of the weights: a token of frequency f weighs sifA/(sifA+f), the
// smooth inverse frequency of Arora, Liang and Ma (2017), which Model2Vec's Zipf weighting
// approximates: frequent tokens say little about what a text is about.
const sifA = 1e-3

// WriteTopicModel writes into dir a static model (Model2Vec layout) whose rows carry the topics
// of a corpus that synthcorpus generates from m with o.Topics topics, so that the corpus's
// vectors cluster by topic as a trained model's vectors of real text do, and nearest neighbours
// stand out from the rest (which the random-weight fixtures cannot give: see
// synthcorpus.TopicOf). Each topic gets a random direction and each background word (no topic)
// one of its own. A token's row is the count-weighted mean of the directions of the model's
// words that contain it (a word's tokens without special tokens), plus Noise times a random
// vector of the same expected norm; a token no word contains gets the random vector alone. Its
// weight is sifA/(sifA+f) for the token's frequency f among the words' tokens. The vectors it
// gives mean nothing for real text: it exists to measure approximate search on vectors with
// the shape of real ones, never quality.
func WriteTopicModel(ctx context.Context, dir string, m *synthcorpus.Model, o TopicModelOptions) error {
	if o.Topics < 1 {
		return fmt.Errorf("topic model: %d topics: want at least 1", o.Topics)
	}
	if o.Dim == 0 {
		o.Dim = 256
	}
	if o.Noise == 0 {
		o.Noise = DefaultTopicNoise
	}
	if o.Dim < 1 || o.Noise < 0 || math.IsNaN(o.Noise) {
		return fmt.Errorf("topic model: dimension %d, noise %v: want a positive dimension and a non-negative noise", o.Dim, o.Noise)
	}
	tok, err := embed.StaticTokenizer(o.Tokenizer)
	if err != nil {
		return fmt.Errorf("topic model: %w", err)
	}
	rows, dim := tok.VocabSize(), o.Dim
	rng := rand.New(rand.NewPCG(o.Seed, 0x5eed70b1c))
	gauss := func(r *rand.Rand, dst []float64) {
		s := 1 / math.Sqrt(float64(dim))
		for i := range dst {
			dst[i] = r.NormFloat64() * s
		}
	}
	centres := make([]float64, o.Topics*dim)
	gauss(rng, centres)
	acc := make([]float64, rows*dim)
	mass := make([]float64, rows)
	own := make([]float64, dim)
	var total float64
	for i, w := range m.Words {
		if i%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		c := float64(m.Counts[i])
		var dir []float64
		if t := synthcorpus.TopicOf(w, i, o.Topics); t >= 0 {
			dir = centres[t*dim : (t+1)*dim]
		} else {
			h := fnv.New64a()
			h.Write([]byte(w))
			gauss(rand.New(rand.NewPCG(h.Sum64(), o.Seed)), own)
			dir = own
		}
		for _, p := range tok.Pieces(w) {
			row := acc[p*dim : (p+1)*dim]
			for j, v := range dir {
				row[j] += c * v
			}
			mass[p] += c
			total += c
		}
	}
	table := make([]float32, rows*dim)
	weights := make([]float32, rows)
	noise := make([]float64, dim)
	for p := range rows {
		gauss(rng, noise)
		row, out := acc[p*dim:(p+1)*dim], table[p*dim:(p+1)*dim]
		scale := 0.0
		if mass[p] > 0 {
			scale = 1 / mass[p]
		}
		for j := range out {
			out[j] = float32(row[j]*scale + o.Noise*noise[j])
		}
		weights[p] = 1
		if total > 0 {
			weights[p] = float32(sifA / (sifA + mass[p]/total))
		}
	}
	return embed.WriteStaticModel(dir, embed.StaticTable{
		Rows: rows, Dim: dim, Embeddings: table, Weights: weights, Normalize: true, Tokenizer: o.Tokenizer,
	})
}
