package hub

// Pin is the known size and sha256 of one upstream file. Size 0 means the size is not known
// (the pin was taken from published hashes, not from a download): the sha256 alone is checked.
type Pin struct {
	Size   int64
	SHA256 string
}

// Pins maps "owner/name" -> file path in the repo -> pin.
type Pins map[string]map[string]Pin

// BuiltinPins returns the pins compiled into Kairos (the table in ../shared/models/README.md,
// checked by a test). A fresh map each call, so no caller can change another's table.
func BuiltinPins() Pins {
	return Pins{
		"sentence-transformers/all-MiniLM-L6-v2": {
			"onnx/model.onnx":              {90405214, "6fd5d72fe4589f189f8ebc006442dbb529bb7ce38f8082112682524616046452"},
			"onnx/model_qint8_avx512.onnx": {23026053, "4278337fd0ff3c68bfb6291042cad8ab363e1d9fbc43dcb499fe91c871902474"},
			"onnx/model_quint8_avx2.onnx":  {23046789, "b941bf19f1f1283680f449fa6a7336bb5600bdcd5f84d10ddc5cd72218a0fd21"},
		},
		"Xenova/all-MiniLM-L6-v2": {
			"onnx/model.onnx":           {90387606, "759c3cd2b7fe7e93933ad23c4c9181b7396442a2ed746ec7c1d46192c469c46e"},
			"onnx/model_quantized.onnx": {22972370, "afdb6f1a0e45b715d0bb9b11772f032c399babd23bfc31fed1c170afc848bdb1"},
			// The fp16 export (float32 I/O) that --precision fp16 and --device cuda run: the
			// sha256 several public projects pin for this file, whose model.onnx pin they
			// give agrees with ours. Kairos has not downloaded it (no hub is reachable from its
			// build machines), so its size is unknown and only the hash is checked.
			"onnx/model_fp16.onnx": {0, "2cdb5e58291813b6d6e248ed69010100246821a367fa17b1b81ae9483744533d"},
		},
		"Xenova/gte-small": {
			"onnx/model.onnx": {133093491, "b9c15a9afac5d465bda995eca8010fac61efc79c827bc980085810e37d271795"},
		},
		"cross-encoder/ms-marco-MiniLM-L-12-v2": {
			"onnx/model.onnx": {133743863, "2ac389ab6abe08dcbddf2c41a69b6a18853e0dca440adbc2abc1adfcee46483f"},
		},
	}
}

// lookup returns the pin of file in repo, if any.
func (p Pins) lookup(repo, file string) (Pin, bool) {
	pin, ok := p[repo][file]
	return pin, ok
}
