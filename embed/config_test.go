package embed

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadFolderConfig(t *testing.T) {
	enc := synthetic("tiny-encoder")
	for _, tc := range []struct {
		name    string
		src     string
		extra   map[string]string
		want    FolderConfig // ONNXPath compared by base name
		wantErr string
	}{
		{name: "sentence-transformers folder", src: enc,
			want: FolderConfig{ONNXPath: "model.onnx", Pooling: "mean", Normalize: true, MaxSeqLen: 256, HiddenSize: 64}},
		{name: "plain transformer (cross-encoder)", src: synthetic("tiny-cross-encoder"),
			want: FolderConfig{ONNXPath: "model.onnx", Pooling: "mean", MaxSeqLen: 512, HiddenSize: 64}},
		{name: "prompts from config_sentence_transformers.json", src: enc,
			extra: map[string]string{"config_sentence_transformers.json": `{"prompts": {"query": "query: ", "document": "passage: "}}`},
			want:  FolderConfig{ONNXPath: "model.onnx", Pooling: "mean", Normalize: true, MaxSeqLen: 256, HiddenSize: 64, QueryPrefix: "query: ", PassagePrefix: "passage: "}},
		{name: "kairos.json overrides", src: enc,
			extra: map[string]string{"kairos.json": `{"pooling": "cls", "normalize": false, "max_seq_length": 128, "query_prefix": "q: ", "output": "last_hidden_state"}`},
			want:  FolderConfig{ONNXPath: "model.onnx", Pooling: "cls", MaxSeqLen: 128, HiddenSize: 64, QueryPrefix: "q: ", Output: "last_hidden_state"}},
		{name: "CLS pooling module", src: enc,
			extra: map[string]string{"1_Pooling/config.json": `{"word_embedding_dimension": 64, "pooling_mode_cls_token": true}`},
			want:  FolderConfig{ONNXPath: "model.onnx", Pooling: "cls", Normalize: true, MaxSeqLen: 256, HiddenSize: 64}},
		{name: "two pooling modes", src: enc,
			extra:   map[string]string{"1_Pooling/config.json": `{"pooling_mode_cls_token": true, "pooling_mode_mean_tokens": true}`},
			wantErr: "enables 2 pooling modes"},
		{name: "unknown pooling override", src: enc,
			extra: map[string]string{"kairos.json": `{"pooling": "median"}`}, wantErr: `unsupported pooling "median"`},
		{name: "max length beyond positions", src: enc,
			extra: map[string]string{"kairos.json": `{"max_seq_length": 4096}`}, wantErr: "exceeds the model's 512 positions"},
		{name: "broken json names the file", src: enc,
			extra: map[string]string{"sentence_bert_config.json": `{"max_seq_length": `}, wantErr: "sentence_bert_config.json"},
		{name: "missing onnx named in kairos.json", src: enc,
			extra: map[string]string{"kairos.json": `{"onnx": "onnx/none.onnx"}`}, wantErr: "none.onnx"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := linkModel(t, tc.src, tc.extra)
			got, err := LoadFolderConfig(dir)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got.ONNXPath = filepath.Base(got.ONNXPath)
			if got != tc.want {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestFindONNX(t *testing.T) {
	dir := t.TempDir()
	if _, err := findONNX(dir, ""); err == nil || !strings.Contains(err.Error(), "no ONNX file") {
		t.Errorf("empty folder: %v", err)
	}
	writeFile(t, filepath.Join(dir, "onnx", "model_qint8_avx512.onnx"), "x")
	if p, err := findONNX(dir, ""); err != nil || filepath.Base(p) != "model_qint8_avx512.onnx" {
		t.Errorf("single variant: %q, %v", p, err)
	}
	writeFile(t, filepath.Join(dir, "onnx", "model_quint8_avx2.onnx"), "x")
	if _, err := findONNX(dir, ""); err == nil || !strings.Contains(err.Error(), "several ONNX files") {
		t.Errorf("two variants: %v", err)
	}
	writeFile(t, filepath.Join(dir, "onnx", "model.onnx"), "x")
	if p, err := findONNX(dir, ""); err != nil || p != filepath.Join(dir, "onnx", "model.onnx") {
		t.Errorf("onnx/model.onnx wins: %q, %v", p, err)
	}
}

// FuzzLoadFolderConfig: any kairos.json / pooling config is accepted or rejected with an error,
// never a panic, and an accepted one has a valid pooling and max length.
func FuzzLoadFolderConfig(f *testing.F) {
	f.Add(`{"pooling": "cls", "max_seq_length": 8}`, `{"pooling_mode_mean_tokens": true}`)
	f.Add(`{"normalize": null, "onnx": ""}`, `{"pooling_mode_max_tokens": true, "word_embedding_dimension": -3}`)
	f.Add(`[]`, `{`)
	src, err := filepath.Abs(synthetic("tiny-encoder"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, kairos, pooling string) {
		dir := t.TempDir()
		for _, name := range []string{"model.onnx", "config.json", "modules.json", "sentence_bert_config.json", "tokenizer_config.json"} {
			if err := os.Symlink(filepath.Join(src, name), filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
		writeFile(t, filepath.Join(dir, "kairos.json"), kairos)
		writeFile(t, filepath.Join(dir, "1_Pooling", "config.json"), pooling)
		c, err := LoadFolderConfig(dir)
		if err != nil {
			return
		}
		if c.MaxSeqLen < 3 || (c.Pooling != "mean" && c.Pooling != "cls" && c.Pooling != "max" && c.Pooling != "none") {
			t.Fatalf("accepted invalid config %+v", c)
		}
	})
}
