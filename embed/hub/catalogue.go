package hub

// Layout is the set of files Pull fetches from a repo: Required must exist upstream, Optional
// are fetched when present (a 404 is fine).
type Layout struct {
	Required, Optional []string
}

// onnxLayout is the layout of a transformer repo with an ONNX export: the ONNX file
// (PullOptions.ONNXFile) is added to Required.
func onnxLayout(onnxFile string) Layout {
	return Layout{
		Required: []string{"config.json", "tokenizer.json", onnxFile},
		Optional: []string{"tokenizer_config.json", "special_tokens_map.json", "vocab.txt",
			"modules.json", "sentence_bert_config.json", "config_sentence_transformers.json", "1_Pooling/config.json"},
	}
}

// The layouts of static embedding models (embed's static encoder; no ONNX file).
//
// model2vecLayout is what model2vec's save_pretrained writes (model2vec/persistence/
// persistence.py): config.json (normalize, embedding_dtype), model.safetensors ("embeddings",
// optionally "weights" and "mapping"), tokenizer.json, and a modules.json naming a
// StaticEmbedding at "." for sentence-transformers.
//
// stStaticLayout is what sentence-transformers saves for SentenceTransformer(modules=
// [StaticEmbedding(...)]), as its static-retrieval-mrl-en-v1 was built: modules.json and
// config_sentence_transformers.json at the root, the module's model.safetensors
// ("embedding.weight") and tokenizer.json under 0_StaticEmbedding/ (the third of model2vec's
// FOLDER_LAYOUTS, which reads such repos).
var (
	model2vecLayout = Layout{
		Required: []string{"config.json", "model.safetensors", "tokenizer.json"},
		Optional: []string{"modules.json", "tokenizer_config.json"},
	}
	stStaticLayout = Layout{
		Required: []string{"modules.json", "0_StaticEmbedding/model.safetensors", "0_StaticEmbedding/tokenizer.json"},
		Optional: []string{"config_sentence_transformers.json", "2_Normalize/config.json"},
	}
)

// Catalogue returns the repos whose layout Kairos knows when it is not the ONNX one, by
// "owner/name". A fresh map each call. The file lists come from the libraries that write
// these repos (see the layouts' comments), not from a listing of the hub, which Kairos's
// build machines cannot reach; their sha256 pins are not known (BuiltinPins has none), so
// Pull reports them unverified.
func Catalogue() map[string]Layout {
	return map[string]Layout{
		"minishlab/potion-base-8M":                         model2vecLayout,
		"minishlab/potion-retrieval-32M":                   model2vecLayout,
		"sentence-transformers/static-retrieval-mrl-en-v1": stStaticLayout,
	}
}
