package embed

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// FolderConfig is what Kairos reads from a model folder. LoadFolderConfig fills it from the
// sentence-transformers files; a kairos.json in the folder overrides any field it sets:
//
//	{"onnx": "onnx/model_qint8.onnx", "pooling": "cls", "normalize": true, "max_seq_length": 512,
//	 "query_prefix": "query: ", "passage_prefix": "passage: ", "output": "last_hidden_state"}
type FolderConfig struct {
	ONNXPath      string // absolute path of the ONNX file
	Pooling       string // mean, cls, max; "none" when Output is already pooled
	Normalize     bool
	MaxSeqLen     int
	QueryPrefix   string
	PassagePrefix string
	Output        string // ONNX output name; empty: chosen from the model's outputs
	HiddenSize    int    // from 1_Pooling or config.json; 0 if unknown
}

// kairosJSON is the optional override file. Pointers tell "unset" from "false"/"".
type kairosJSON struct {
	ONNX          *string `json:"onnx"`
	Pooling       *string `json:"pooling"`
	Normalize     *bool   `json:"normalize"`
	MaxSeqLength  *int    `json:"max_seq_length"`
	QueryPrefix   *string `json:"query_prefix"`
	PassagePrefix *string `json:"passage_prefix"`
	Output        *string `json:"output"`
}

type stModule struct {
	Path string `json:"path"`
	Type string `json:"type"`
}

type stPooling struct {
	Dim          int  `json:"word_embedding_dimension"`
	CLS          bool `json:"pooling_mode_cls_token"`
	Mean         bool `json:"pooling_mode_mean_tokens"`
	Max          bool `json:"pooling_mode_max_tokens"`
	MeanSqrtLen  bool `json:"pooling_mode_mean_sqrt_len_tokens"`
	WeightedMean bool `json:"pooling_mode_weightedmean_tokens"`
	LastToken    bool `json:"pooling_mode_lasttoken"`
}

// LoadFolderConfig reads the model folder's configuration. Missing sentence-transformers files
// mean a plain transformer: mean pooling, no normalisation, max length from the tokenizer config
// or the model's position embeddings. The ONNX file is the one precision auto picks on the CPU.
func LoadFolderConfig(dir string) (FolderConfig, error) {
	return LoadFolderConfigFor(dir, PrecisionAuto, Device{})
}

// LoadFolderConfigFor is LoadFolderConfig with the ONNX file chosen for a precision (auto,
// fp32, fp16, int8) on a device: see Options.Precision.
func LoadFolderConfigFor(dir, precision string, dev Device) (FolderConfig, error) {
	c := FolderConfig{Pooling: "mean"}
	if err := checkModelFolder(dir); err != nil {
		return c, err
	}
	var hf struct {
		Hidden int `json:"hidden_size"`
		MaxPos int `json:"max_position_embeddings"`
	}
	if _, err := readJSON(dir, "config.json", &hf); err != nil {
		return c, err
	}
	c.HiddenSize = hf.Hidden
	var tc struct {
		ModelMax float64 `json:"model_max_length"`
	}
	if _, err := readJSON(dir, "tokenizer_config.json", &tc); err != nil {
		return c, err
	}
	c.MaxSeqLen = hf.MaxPos
	if tc.ModelMax > 0 && (c.MaxSeqLen == 0 || tc.ModelMax < float64(c.MaxSeqLen)) {
		c.MaxSeqLen = int(tc.ModelMax)
	}
	var sb struct {
		MaxSeq int `json:"max_seq_length"`
	}
	if ok, err := readJSON(dir, "sentence_bert_config.json", &sb); err != nil {
		return c, err
	} else if ok && sb.MaxSeq > 0 {
		c.MaxSeqLen = sb.MaxSeq
	}
	if err := c.readModules(dir); err != nil {
		return c, err
	}
	var st struct {
		Prompts map[string]string `json:"prompts"`
	}
	if _, err := readJSON(dir, "config_sentence_transformers.json", &st); err != nil {
		return c, err
	}
	c.QueryPrefix, c.PassagePrefix = st.Prompts["query"], st.Prompts["passage"]
	if c.PassagePrefix == "" {
		c.PassagePrefix = st.Prompts["document"]
	}
	var k kairosJSON
	if _, err := readJSON(dir, "kairos.json", &k); err != nil {
		return c, err
	}
	onnxRel := ""
	if k.ONNX != nil {
		onnxRel = *k.ONNX
	}
	setIf(&c.Pooling, k.Pooling)
	setIf(&c.Normalize, k.Normalize)
	setIf(&c.MaxSeqLen, k.MaxSeqLength)
	setIf(&c.QueryPrefix, k.QueryPrefix)
	setIf(&c.PassagePrefix, k.PassagePrefix)
	setIf(&c.Output, k.Output)
	switch c.Pooling {
	case "mean", "cls", "max", "none":
	default:
		return c, fmt.Errorf("%s: unsupported pooling %q (want mean, cls, max or none)", dir, c.Pooling)
	}
	if c.MaxSeqLen < 3 {
		return c, fmt.Errorf("%s: max sequence length %d is unknown or too small", dir, c.MaxSeqLen)
	}
	if hf.MaxPos > 0 && c.MaxSeqLen > hf.MaxPos {
		return c, fmt.Errorf("%s: max sequence length %d exceeds the model's %d positions", dir, c.MaxSeqLen, hf.MaxPos)
	}
	p, err := selectONNX(dir, onnxRel, precision, dev.CUDA)
	if err != nil {
		return c, err
	}
	c.ONNXPath = p
	return c, nil
}

// readModules reads modules.json and the pooling module's config.
func (c *FolderConfig) readModules(dir string) error {
	var mods []stModule
	ok, err := readJSON(dir, "modules.json", &mods)
	if err != nil || !ok {
		return err
	}
	for _, m := range mods {
		switch {
		case strings.HasSuffix(m.Type, ".Normalize"):
			c.Normalize = true
		case strings.HasSuffix(m.Type, ".Pooling"):
			var p stPooling
			found, err := readJSON(dir, filepath.Join(m.Path, "config.json"), &p)
			if err != nil {
				return err
			}
			if !found {
				return fmt.Errorf("%s: modules.json names pooling folder %q without config.json", dir, m.Path)
			}
			if p.Dim > 0 {
				c.HiddenSize = p.Dim
			}
			n := 0
			for _, on := range []bool{p.CLS, p.Mean, p.Max, p.MeanSqrtLen, p.WeightedMean, p.LastToken} {
				if on {
					n++
				}
			}
			switch {
			case n != 1:
				return fmt.Errorf("%s: %s/config.json enables %d pooling modes; Kairos supports exactly one of mean, cls, max", dir, m.Path, n)
			case p.CLS:
				c.Pooling = "cls"
			case p.Mean:
				c.Pooling = "mean"
			case p.Max:
				c.Pooling = "max"
			default:
				return fmt.Errorf("%s: %s/config.json: unsupported pooling mode (want mean, cls or max)", dir, m.Path)
			}
		}
	}
	return nil
}

// findONNX resolves the ONNX file: kairos.json's "onnx", model.onnx, onnx/model.onnx, or the
// only *.onnx file in the folder or its onnx/ subfolder.
func findONNX(dir, rel string) (string, error) {
	if rel != "" {
		p := filepath.Join(dir, rel)
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("kairos.json onnx: %w", err)
		}
		return p, nil
	}
	for _, cand := range []string{"model.onnx", filepath.Join("onnx", "model.onnx")} {
		p := filepath.Join(dir, cand)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	var found []string
	for _, sub := range []string{"", "onnx"} {
		m, _ := filepath.Glob(filepath.Join(dir, sub, "*.onnx"))
		found = append(found, m...)
	}
	sort.Strings(found)
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return "", fmt.Errorf("%s: no ONNX file (looked for model.onnx and onnx/*.onnx)", dir)
	}
	return "", fmt.Errorf("%s: several ONNX files (%s); name one in kairos.json {\"onnx\": ...}", dir, strings.Join(found, ", "))
}

// readJSON decodes dir/name into v. A missing file is not an error: it returns false.
func readJSON(dir, name string, v any) (bool, error) {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("parsing %s: %w", filepath.Join(dir, name), err)
	}
	return true, nil
}

func setIf[T any](dst *T, src *T) {
	if src != nil {
		*dst = *src
	}
}
