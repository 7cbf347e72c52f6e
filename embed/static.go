package embed

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/kairos-rag/kairos/internal/modelid"
)

// KindStatic is the modelid.Identity Kind of a static embedding model (a token table, mean
// pooled); ONNX encoders leave Kind empty.
const KindStatic = "static"

// DefaultStaticMaxLen is how many tokens of a text a static model reads: Model2Vec's default
// max_length (sentence-transformers' StaticEmbedding does not truncate; a kairos.json
// "max_seq_length" changes it for either layout).
const DefaultStaticMaxLen = 512

// staticModel is a static embedding model: a vector is the mean of the table rows of the
// text's tokens (tokenized without special tokens, unknown words dropped), each row times its
// token's weight when the model has weights, normalised when the folder says so. There is no
// graph to run, so it needs neither ONNX Runtime nor cgo, and runs at tokenizer speed.
type staticModel struct {
	table   []float32 // rows x stride, widened to float32 when the file holds float16
	stride  int       // the table's dimension
	dim     int       // the output dimension: stride, or less with Options.Dim (Matryoshka)
	rows    int
	weights []float32 // per token id; nil: all 1
	mapping []int32   // token id -> table row (Model2Vec vocabulary quantization); nil: identity
	norm    bool
}

// staticFolder says how a model folder holds a static model, when it does.
type staticFolder struct {
	layout    string // "model2vec" or "sentence-transformers"
	tensors   string // the safetensors file
	tokenizer string // the tokenizer.json
	table     string // tensor name of the token table
	normalize bool
}

// detectStatic reports whether dir holds a static model, and where its files are. A folder is
// static when its modules.json's first module is sentence_transformers.models.StaticEmbedding
// (at "." or in a subfolder such as 0_StaticEmbedding/), or when its config.json says
// "model_type": "model2vec". The table is the tensor "embeddings" (Model2Vec) or
// "embedding.weight" (sentence-transformers), whichever the safetensors file has.
func detectStatic(dir string) (staticFolder, bool, error) {
	var mods []stModule
	if _, err := readJSON(dir, "modules.json", &mods); err != nil {
		return staticFolder{}, false, err
	}
	var m2v struct {
		ModelType string `json:"model_type"`
		Normalize *bool  `json:"normalize"`
	}
	if _, err := readJSON(dir, "config.json", &m2v); err != nil {
		return staticFolder{}, false, err
	}
	sub := ""
	isST := len(mods) > 0 && strings.HasSuffix(mods[0].Type, ".StaticEmbedding")
	switch {
	case isST:
		sub = mods[0].Path
	case m2v.ModelType == "model2vec":
	default:
		return staticFolder{}, false, nil
	}
	f := staticFolder{layout: "sentence-transformers"}
	if m2v.ModelType == "model2vec" {
		f.layout = "model2vec"
	}
	for _, m := range mods {
		if strings.HasSuffix(m.Type, ".Normalize") {
			f.normalize = true
		}
	}
	if m2v.Normalize != nil { // Model2Vec reads its config, not modules.json
		f.normalize = *m2v.Normalize
	}
	base := filepath.Join(dir, sub)
	f.tensors = filepath.Join(base, "model.safetensors")
	f.tokenizer = filepath.Join(base, "tokenizer.json")
	if _, err := os.Stat(f.tokenizer); err != nil && sub != "" && sub != "." {
		f.tokenizer = filepath.Join(dir, "tokenizer.json")
	}
	for _, p := range []string{f.tensors, f.tokenizer} {
		if _, err := os.Stat(p); err != nil {
			return f, true, fmt.Errorf("%s: static model (%s layout) without %s", dir, f.layout, filepath.Base(p))
		}
	}
	return f, true, nil
}

// openStatic opens the static model folder f of o.ModelDir as an Encoder.
func openStatic(o Options, f staticFolder) (*Encoder, error) {
	if o.Device.CUDA {
		return nil, fmt.Errorf("%s is a static model: it runs on the CPU only (no --device %s)", o.ModelDir, o.Device)
	}
	if o.Precision != PrecisionAuto {
		return nil, fmt.Errorf("%s is a static model: --precision %s does not apply (the table is used as stored)", o.ModelDir, o.Precision)
	}
	c := FolderConfig{Pooling: "mean", Normalize: f.normalize, MaxSeqLen: DefaultStaticMaxLen}
	var st struct {
		Prompts map[string]string `json:"prompts"`
	}
	if _, err := readJSON(o.ModelDir, "config_sentence_transformers.json", &st); err != nil {
		return nil, err
	}
	c.QueryPrefix, c.PassagePrefix = st.Prompts["query"], st.Prompts["passage"]
	if c.PassagePrefix == "" {
		c.PassagePrefix = st.Prompts["document"]
	}
	var k kairosJSON
	if _, err := readJSON(o.ModelDir, "kairos.json", &k); err != nil {
		return nil, err
	}
	setIf(&c.Normalize, k.Normalize)
	setIf(&c.MaxSeqLen, k.MaxSeqLength)
	setIf(&c.QueryPrefix, k.QueryPrefix)
	setIf(&c.PassagePrefix, k.PassagePrefix)
	if c.MaxSeqLen < 1 {
		return nil, fmt.Errorf("%s: max sequence length %d is too small", o.ModelDir, c.MaxSeqLen)
	}
	tok, err := loadStaticTokenizer(f.tokenizer, c.MaxSeqLen)
	if err != nil {
		return nil, err
	}
	m, precision, err := loadStaticTable(f.tensors, c.Normalize, tok)
	if err != nil {
		return nil, err
	}
	if o.Dim > 0 {
		if o.Dim > m.stride {
			return nil, fmt.Errorf("%s: --dim %d exceeds the model's %d dimensions", o.ModelDir, o.Dim, m.stride)
		}
		m.dim = o.Dim
	}
	sum, err := fileSHA256(f.tensors)
	if err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(o.ModelDir, f.tensors)
	if err != nil {
		rel = filepath.Base(f.tensors)
	}
	return &Encoder{
		core:   core{tok: tok, batchSize: o.BatchSize},
		static: m,
		info: ModelInfo{
			Identity: modelid.Identity{
				Name:          filepath.Base(filepath.Clean(o.ModelDir)),
				Kind:          KindStatic,
				ONNXSHA256:    sum,
				ONNXFile:      filepath.ToSlash(rel),
				Precision:     precision,
				Dim:           m.dim,
				FullDim:       fullDimIfTruncated(m.dim, m.stride),
				Pooling:       c.Pooling,
				Normalize:     c.Normalize,
				MaxSeqLen:     c.MaxSeqLen,
				QueryPrefix:   c.QueryPrefix,
				PassagePrefix: c.PassagePrefix,
			},
			Backend: KindStatic,
		},
	}, nil
}

// fullDimIfTruncated is the model's own dimension when the output is truncated, else 0.
func fullDimIfTruncated(dim, full int) int {
	if dim < full {
		return full
	}
	return 0
}

// loadStaticTable reads the table, weights and mapping, and checks that every id the
// tokenizer can produce has a row.
func loadStaticTable(path string, normalize bool, tok *Tokenizer) (*staticModel, string, error) {
	ts, err := readSafetensors(path)
	if err != nil {
		return nil, "", err
	}
	name := "embeddings"
	t, ok := ts[name]
	if !ok {
		name = "embedding.weight"
		if t, ok = ts[name]; !ok {
			return nil, "", fmt.Errorf("%s: no tensor \"embeddings\" (Model2Vec) or \"embedding.weight\" (sentence-transformers)", path)
		}
	}
	if len(t.Shape) != 2 || t.Shape[0] == 0 || t.Shape[1] == 0 {
		return nil, "", fmt.Errorf("%s: tensor %q has shape %v, want [vocab, dim]", path, name, t.Shape)
	}
	table, err := t.floats()
	if err != nil {
		return nil, "", fmt.Errorf("%s: tensor %q: %w", path, name, err)
	}
	m := &staticModel{table: table, rows: t.Shape[0], stride: t.Shape[1], dim: t.Shape[1], norm: normalize}
	vocab := maxTokenID(tok) + 1 // added tokens repeat vocabulary ids: count ids, not entries
	if w, ok := ts["weights"]; ok {
		if m.weights, err = w.floats(); err != nil {
			return nil, "", fmt.Errorf("%s: tensor \"weights\": %w", path, err)
		}
		if len(w.Shape) != 1 || len(m.weights) < vocab {
			return nil, "", fmt.Errorf("%s: tensor \"weights\" has shape %v, want [%d] (one per token)", path, w.Shape, vocab)
		}
	}
	rowsNeeded := vocab
	if mp, ok := ts["mapping"]; ok {
		ids, err := mp.ints()
		if err != nil {
			return nil, "", fmt.Errorf("%s: tensor \"mapping\": %w", path, err)
		}
		if len(mp.Shape) != 1 || len(ids) < vocab {
			return nil, "", fmt.Errorf("%s: tensor \"mapping\" has shape %v, want [%d] (one row per token)", path, mp.Shape, vocab)
		}
		m.mapping = make([]int32, len(ids))
		for i, r := range ids {
			if r < 0 || r >= int64(m.rows) {
				return nil, "", fmt.Errorf("%s: mapping[%d] = %d is not a row of the %d-row table", path, i, r, m.rows)
			}
			m.mapping[i] = int32(r)
		}
		rowsNeeded = 0
	}
	if m.rows < rowsNeeded {
		return nil, "", fmt.Errorf("%s: tensor %q has %d rows, the tokenizer has %d tokens", path, name, m.rows, rowsNeeded)
	}
	precision := map[string]string{"F32": PrecisionFP32, "F16": PrecisionFP16, "BF16": "bf16"}[t.DType]
	return m, precision, nil
}

// maxTokenID is the largest id the tokenizer's vocabulary and added tokens hold.
func maxTokenID(tok *Tokenizer) int {
	n := -1
	for _, id := range tok.tk.GetVocab() {
		n = max(n, id)
	}
	return n
}

// vocab is the number of token ids the model has a row (and weight) for.
func (m *staticModel) vocab() int {
	n := m.rows
	if m.mapping != nil {
		n = len(m.mapping)
	}
	if m.weights != nil {
		n = min(n, len(m.weights))
	}
	return n
}

// vector writes into out (len m.dim) the embedding of the token ids.
func (m *staticModel) vector(ids []int, out []float32) {
	clear(out)
	if len(ids) == 0 {
		return // Model2Vec's zero vector for a text with no known token
	}
	for _, id := range ids {
		row := id
		if m.mapping != nil {
			row = int(m.mapping[id])
		}
		r := m.table[row*m.stride : row*m.stride+m.dim]
		if m.weights != nil {
			w := m.weights[id]
			for k, x := range r {
				out[k] += w * x
			}
		} else {
			for k, x := range r {
				out[k] += x
			}
		}
	}
	inv := 1 / float32(len(ids))
	for k := range out {
		out[k] *= inv
	}
	if m.norm {
		normalize(out)
	}
}

// staticEncode embeds texts (prefix added) on up to GOMAXPROCS goroutines, each tokenizing
// into its own scratch ids, so a passage costs one vector allocation.
func (e *Encoder) staticEncode(prefix string, texts []string) [][]float32 {
	m, tok := e.static, e.tok
	vecs := make([][]float32, len(texts))
	flat := make([]float32, len(texts)*m.dim)
	workers := min(runtime.GOMAXPROCS(0), max(1, len(texts)/64))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var ids []int
			for i := w; i < len(texts); i += workers {
				ids = tok.staticIDs(ids[:0], prefix, texts[i])
				v := flat[i*m.dim : (i+1)*m.dim : (i+1)*m.dim]
				m.vector(ids, v)
				vecs[i] = v
			}
		}()
	}
	wg.Wait()
	return vecs
}

// staticIDs appends the ids a static model reads of prefix+text: no special tokens, unknown
// words dropped, at most MaxLen.
func (t *Tokenizer) staticIDs(dst []int, prefix, text string) []int {
	if t.wp != nil && prefix == "" {
		dst = t.wp.encode(dst, text, t.maxLen, true)
	} else {
		dst = append(dst, t.pieces(prefix+text, t.maxLen)...)
	}
	return dst[:min(len(dst), t.maxLen)]
}
