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
		return nil, fmt.Errorf("%s is a static model: --precision %s does not apply (the table is used as stored): drop --precision", o.ModelDir, o.Precision)
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
				Dir:           absDir(o.ModelDir),
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
			axpy(out, r, m.weights[id])
		} else {
			add(out, r)
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

// axpy adds w*x to y (len(x) >= len(y)), eight lanes at a time on constant-length
// subslices so the compiler drops the bounds checks: the loop the static encoder spends its
// time in besides tokenizing.
func axpy(y, x []float32, w float32) {
	x = x[:len(y)]
	for len(y) >= 8 {
		yy, xx := y[:8:8], x[:8:8]
		yy[0] += w * xx[0]
		yy[1] += w * xx[1]
		yy[2] += w * xx[2]
		yy[3] += w * xx[3]
		yy[4] += w * xx[4]
		yy[5] += w * xx[5]
		yy[6] += w * xx[6]
		yy[7] += w * xx[7]
		y, x = y[8:], x[8:]
	}
	for i := range y {
		y[i] += w * x[i]
	}
}

// add adds x to y (len(x) >= len(y)), as axpy.
func add(y, x []float32) {
	x = x[:len(y)]
	for len(y) >= 8 {
		yy, xx := y[:8:8], x[:8:8]
		yy[0] += xx[0]
		yy[1] += xx[1]
		yy[2] += xx[2]
		yy[3] += xx[3]
		yy[4] += xx[4]
		yy[5] += xx[5]
		yy[6] += xx[6]
		yy[7] += xx[7]
		y, x = y[8:], x[8:]
	}
	for i := range y {
		y[i] += x[i]
	}
}

// staticEncode embeds texts (prefix added) in parallel (staticVectors).
func (e *Encoder) staticEncode(prefix string, texts []string) [][]float32 {
	return e.staticVectors(len(texts), func(i int, dst []int) []int {
		return e.tok.staticIDs(dst, prefix, texts[i])
	})
}

// staticVectors computes n vectors on up to GOMAXPROCS goroutines; ids appends the token ids
// of input i to a scratch slice owned by its goroutine, so an input costs no allocation
// beyond its share of one flat vector array.
func (e *Encoder) staticVectors(n int, ids func(i int, dst []int) []int) [][]float32 {
	m := e.static
	vecs := make([][]float32, n)
	flat := make([]float32, n*m.dim)
	workers := min(runtime.GOMAXPROCS(0), max(1, n/64))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var scratch []int
			for i := w; i < n; i += workers {
				scratch = ids(i, scratch[:0])
				v := flat[i*m.dim : (i+1)*m.dim : (i+1)*m.dim]
				m.vector(scratch, v)
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

// absDir is dir made absolute for the Identity, so an index records a folder that can be
// found again from another working directory; dir itself when that fails.
func absDir(dir string) string {
	if a, err := filepath.Abs(dir); err == nil {
		return a
	}
	return dir
}
