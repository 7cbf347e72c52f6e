package embed

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// requireNumpy returns a python3 with numpy (the system one first: `make apt` installs
// python3-numpy, while a python3 earlier on PATH may lack it), and skips, saying so, when
// there is none: the reference implementation of the static arithmetic is a numpy script.
func requireNumpy(t *testing.T) string {
	t.Helper()
	cands := []string{"/usr/bin/python3"}
	if p, err := exec.LookPath("python3"); err == nil {
		cands = append(cands, p)
	}
	var why []string
	for _, py := range cands {
		out, err := exec.Command(py, "-c", "import numpy").CombinedOutput()
		if err == nil {
			return py
		}
		why = append(why, py+": "+strings.TrimSpace(string(out))+" "+err.Error())
	}
	t.Skipf("SKIPPED: no python3 with numpy (make apt installs python3-numpy), so the static encoder is not checked against numpy: %s", strings.Join(why, "; "))
	return ""
}

// numpyVectors embeds ids with embed/testdata/static_ref.py.
func numpyVectors(t *testing.T, py, tensors string, ids [][]int64, normalize bool, dim int) [][]float64 {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	for _, row := range ids {
		for j, id := range row {
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(strconv.FormatInt(id, 10))
		}
		b.WriteByte('\n')
	}
	in, out := filepath.Join(dir, "ids.txt"), filepath.Join(dir, "vecs.txt")
	writeFile(t, in, b.String())
	norm := map[bool]string{true: "1", false: "0"}[normalize]
	cmd := exec.Command(py, filepath.Join("testdata", "static_ref.py"), tensors, in, out, norm, strconv.Itoa(dim))
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("static_ref.py: %v\n%s", err, msg)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	if len(lines) != len(ids) {
		t.Fatalf("static_ref.py wrote %d vectors for %d texts", len(lines), len(ids))
	}
	vecs := make([][]float64, len(lines))
	for i, l := range lines {
		for _, f := range strings.Fields(l) {
			x, err := strconv.ParseFloat(f, 64)
			if err != nil {
				t.Fatal(err)
			}
			vecs[i] = append(vecs[i], x)
		}
	}
	return vecs
}

func cosine64(a []float32, b []float64) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * b[i]
		na += float64(a[i]) * float64(a[i])
		nb += b[i] * b[i]
	}
	return dot / math.Sqrt(na*nb)
}

// TestStaticMatchesNumpy: the static encoder's vectors agree with an independent numpy
// implementation of the same arithmetic over the same token ids (cosine >= 0.9999, norms
// equal) on both fixture layouts, truncated (--dim) and whole, and on a Model2Vec folder
// with vocabulary quantization (mapping) written here.
func TestStaticMatchesNumpy(t *testing.T) {
	py := requireNumpy(t)
	texts := append(testTexts(), "ꙮꙮ", "[UNK] ꙮ only unknown words and [CLS]")
	texts = append(texts, scifactPassages(t, 300, 120)...)
	for _, tc := range []struct {
		name, dir, tensors string
		dim                int
		wantDim            int
		normalize          bool
		precision          string
	}{
		{"model2vec", synthetic("static-model2vec"), "model.safetensors", 0, 256, true, PrecisionFP16},
		{"model2vec-dim64", synthetic("static-model2vec"), "model.safetensors", 64, 64, true, PrecisionFP16},
		{"st", synthetic("static-st"), "0_StaticEmbedding/model.safetensors", 0, 128, false, PrecisionFP32},
		{"st-dim32", synthetic("static-st"), "0_StaticEmbedding/model.safetensors", 32, 32, false, PrecisionFP32},
		{"model2vec-mapping", quantizedModel(t), "model.safetensors", 0, 24, true, PrecisionFP32},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := OpenEncoder(context.Background(), Options{ModelDir: tc.dir, Dim: tc.dim})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			id := e.Info().Identity
			if id.Kind != KindStatic || id.Dim != tc.wantDim || id.Normalize != tc.normalize ||
				id.Precision != tc.precision || id.ONNXFile != tc.tensors || id.MaxSeqLen != DefaultStaticMaxLen || len(id.ONNXSHA256) != 64 {
				t.Fatalf("identity %+v", id)
			}
			if (tc.dim > 0) != (id.FullDim > 0) {
				t.Errorf("FullDim %d with --dim %d", id.FullDim, tc.dim)
			}
			vecs, err := e.Encode(context.Background(), Passage, texts)
			if err != nil {
				t.Fatal(err)
			}
			encs, err := e.Tokenize(Passage, texts)
			if err != nil {
				t.Fatal(err)
			}
			ids := make([][]int64, len(encs))
			for i, enc := range encs {
				ids[i] = enc.IDs
				for _, x := range enc.IDs {
					if x == 100 || (!strings.Contains(texts[i], "[") && (x == 101 || x == 102)) {
						t.Fatalf("text %d: static tokens hold special or unknown id %d: %v", i, x, enc.IDs)
					}
				}
			}
			fromTokens, err := e.EncodeTokens(context.Background(), encs)
			if err != nil {
				t.Fatal(err)
			}
			ref := numpyVectors(t, py, filepath.Join(tc.dir, tc.tensors), ids, tc.normalize, tc.dim)
			worst := 1.0
			for i, v := range vecs {
				if len(v) != tc.wantDim {
					t.Fatalf("text %d: %d dimensions, want %d", i, len(v), tc.wantDim)
				}
				for k := range v {
					if v[k] != fromTokens[i][k] {
						t.Fatalf("text %d: Encode and EncodeTokens differ at %d", i, k)
					}
				}
				if len(ids[i]) == 0 { // only unknown words: Model2Vec's zero vector
					for _, x := range v {
						if x != 0 {
							t.Fatalf("text %d has no known token but a non-zero vector", i)
						}
					}
					continue
				}
				c := cosine64(v, ref[i])
				worst = min(worst, c)
				if c < 0.9999 {
					t.Errorf("text %d: cosine %.7f with numpy", i, c)
				}
				n1, n2 := 0.0, 0.0
				for k := range v {
					n1 += float64(v[k]) * float64(v[k])
					n2 += ref[i][k] * ref[i][k]
				}
				if math.Abs(math.Sqrt(n1)-math.Sqrt(n2)) > 1e-4*math.Sqrt(n2) {
					t.Errorf("text %d: norm %g, numpy %g", i, math.Sqrt(n1), math.Sqrt(n2))
				}
			}
			t.Logf("%s: %d texts, lowest cosine with numpy %.10f (1-cos %.2g)", tc.name, len(vecs), worst, 1-worst)
		})
	}
}

// quantizedModel writes a Model2Vec folder with vocabulary quantization: 40 rows of 24
// float32 dimensions, a mapping of the 30,522 token ids onto them, weights, normalize.
func quantizedModel(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	tok, err := os.ReadFile(filepath.Join(sharedModels, "tokenizers", "all-MiniLM-L6-v2", "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "tokenizer.json"), string(tok))
	writeFile(t, filepath.Join(dir, "config.json"), `{"model_type": "model2vec", "normalize": true, "embedding_dtype": "float32"}`)
	const vocab, rows, dim = 30522, 40, 24
	emb := make([]byte, 4*rows*dim)
	for i := range rows * dim {
		binary.LittleEndian.PutUint32(emb[4*i:], math.Float32bits(float32(math.Sin(float64(i)*0.7))))
	}
	mapping := make([]byte, 8*vocab)
	weights := make([]byte, 4*vocab)
	for i := range vocab {
		binary.LittleEndian.PutUint64(mapping[8*i:], uint64((i*7919)%rows))
		binary.LittleEndian.PutUint32(weights[4*i:], math.Float32bits(0.2+float32(i%13)/16))
	}
	writeSafetensors(t, filepath.Join(dir, "model.safetensors"), []namedTensor{
		{"embeddings", "F32", []int{rows, dim}, emb},
		{"mapping", "I64", []int{vocab}, mapping},
		{"weights", "F32", []int{vocab}, weights},
	})
	return dir
}

type namedTensor struct {
	name, dtype string
	shape       []int
	data        []byte
}

func writeSafetensors(t *testing.T, path string, ts []namedTensor) {
	t.Helper()
	header := map[string]any{}
	var data []byte
	for _, x := range ts {
		header[x.name] = map[string]any{"dtype": x.dtype, "shape": x.shape, "data_offsets": []int{len(data), len(data) + len(x.data)}}
		data = append(data, x.data...)
	}
	h, err := json.Marshal(header)
	if err != nil {
		t.Fatal(err)
	}
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	out = append(append(out, h...), data...)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestStaticFolderErrors: a broken static folder is refused with the file and the reason.
func TestStaticFolderErrors(t *testing.T) {
	src := synthetic("static-model2vec")
	for _, tc := range []struct {
		name  string
		extra map[string]string
		opts  Options
		want  string
	}{
		{"truncated tensors", map[string]string{"model.safetensors": "\x10\x00\x00\x00\x00\x00\x00\x00{}"}, Options{}, "exceeds the file"},
		{"no table", map[string]string{"model.safetensors": "\x02\x00\x00\x00\x00\x00\x00\x00{}"}, Options{}, `no tensor "embeddings"`},
		{"dim too large", nil, Options{Dim: 257}, "--dim 257 exceeds the model's 256"},
		{"precision", nil, Options{Precision: PrecisionInt8}, "does not apply"},
		{"cuda", nil, Options{Device: Device{CUDA: true}}, "CPU only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.opts
			o.ModelDir = linkModel(t, src, tc.extra)
			_, err := OpenEncoder(context.Background(), o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	// The table must cover the tokenizer's ids.
	dir := linkModel(t, src, nil)
	small := make([]byte, 4*10*4)
	if err := os.Remove(filepath.Join(dir, "model.safetensors")); err != nil {
		t.Fatal(err)
	}
	writeSafetensors(t, filepath.Join(dir, "model.safetensors"), []namedTensor{{"embeddings", "F32", []int{10, 4}, small}})
	if _, err := OpenEncoder(context.Background(), Options{ModelDir: dir}); err == nil || !strings.Contains(err.Error(), "has 10 rows, the tokenizer has 30522 tokens") {
		t.Fatalf("err = %v", err)
	}
}

// TestStaticIdentityRefusals: an index of a static model refuses an ONNX encoder and another
// --dim of the same model, and says which flag fixes the latter.
func TestStaticIdentityRefusals(t *testing.T) {
	open := func(dim int) ModelInfo {
		e, err := OpenEncoder(context.Background(), Options{ModelDir: synthetic("static-model2vec"), Dim: dim})
		if err != nil {
			t.Fatal(err)
		}
		return e.Info()
	}
	full, cut := open(0), open(64)
	if err := full.Compatible(full.Identity); err != nil {
		t.Fatal(err)
	}
	if err := full.Compatible(cut.Identity); err == nil || !strings.Contains(err.Error(), "pass --dim 0 (all)") {
		t.Errorf("whole index, --dim 64 query: %v", err)
	}
	if err := cut.Compatible(full.Identity); err == nil || !strings.Contains(err.Error(), "pass --dim 64") {
		t.Errorf("--dim 64 index, whole query: %v", err)
	}
	onnx := full.Identity
	onnx.Kind, onnx.ONNXSHA256 = "", "other"
	if err := full.Compatible(onnx); err == nil || !strings.Contains(err.Error(), "a onnx model, index built with a static model") {
		t.Errorf("onnx query on static index: %v", err)
	}
}

// TestDimTruncatesONNXEncoders: --dim keeps the leading dimensions of an ONNX encoder's
// vectors too, renormalised, and the identity records both dimensions.
func TestDimTruncatesONNXEncoders(t *testing.T) {
	requireORT(t)
	full := openEnc(t, synthetic("tiny-encoder"), BackendORT)
	cut, err := OpenEncoder(context.Background(), Options{ModelDir: synthetic("tiny-encoder"), Backend: BackendORT, Dim: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer cut.Close()
	if id := cut.Info().Identity; id.Dim != 16 || id.FullDim != 64 || id.Kind != "" {
		t.Fatalf("identity %+v", id)
	}
	texts := testTexts()
	a, err := full.Encode(context.Background(), Passage, texts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := cut.Encode(context.Background(), Passage, texts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range texts {
		want := append([]float32(nil), a[i][:16]...)
		normalize(want)
		if len(b[i]) != 16 || cosine(b[i], want) < 0.99999 {
			t.Errorf("text %d: truncated vector %v, want %v", i, b[i], want)
		}
	}
}
