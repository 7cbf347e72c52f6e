package embed

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Precision names accepted by Options.Precision. A model folder may hold one ONNX file per
// precision (model.onnx, model_fp16.onnx, model_int8.onnx or model_quantized.onnx, at the top
// or under onnx/ as Xenova's exports put them); the precision picks the file.
const (
	PrecisionAuto = "auto" // fp16 on a CUDA device when the folder has it, else fp32
	PrecisionFP32 = "fp32"
	PrecisionFP16 = "fp16"
	PrecisionInt8 = "int8"
)

// precisionFiles lists the file names that hold precision p, first match wins. The int8 names
// are Xenova's (model_int8, model_quantized) and sentence-transformers' (model_qint8_*,
// model_quint8_*), in that order.
func precisionFiles(p string) []string {
	switch p {
	case PrecisionFP32:
		return []string{"model.onnx"}
	case PrecisionFP16:
		return []string{"model_fp16.onnx"}
	case PrecisionInt8:
		return []string{"model_int8.onnx", "model_quantized.onnx", "model_qint8_avx512.onnx",
			"model_qint8_avx512_vnni.onnx", "model_quint8_avx2.onnx", "model_qint8_arm64.onnx", "model_uint8.onnx"}
	}
	return nil
}

// validPrecision reports whether p is a precision Options.Precision accepts ("" is auto).
func validPrecision(p string) bool {
	switch p {
	case "", PrecisionAuto, PrecisionFP32, PrecisionFP16, PrecisionInt8:
		return true
	}
	return false
}

// PrecisionOfFile says which precision an ONNX file holds, from its name: fp16 for names with
// fp16 or float16, int8 for int8, uint8 or quantized, else fp32. A file whose name says
// nothing (model.onnx) is taken for fp32; the name is all Kairos reads.
func PrecisionOfFile(path string) string {
	b := strings.ToLower(filepath.Base(path))
	switch {
	case strings.Contains(b, "fp16") || strings.Contains(b, "float16"):
		return PrecisionFP16
	case strings.Contains(b, "int8") || strings.Contains(b, "quantized"):
		return PrecisionInt8
	}
	return PrecisionFP32
}

// selectONNX resolves the ONNX file of folder dir for a precision on a device. rel is
// kairos.json's "onnx" (empty when unset); it is the folder's own choice and wins under auto,
// while an explicit precision picks its file by name. Auto on a CUDA device takes the fp16 file
// when there is one (on an H100 it ran 1.5 to 1.7 times the fp32 rate, issue 13); otherwise auto keeps the CPU's
// long-standing rule (see findONNX). Asking for a precision the folder lacks is an error that
// names the folder and the ONNX files it has.
func selectONNX(dir, rel, precision string, cuda bool) (string, error) {
	if precision == "" {
		precision = PrecisionAuto
	}
	if !validPrecision(precision) {
		return "", fmt.Errorf("unknown precision %q (want auto, fp32, fp16 or int8)", precision)
	}
	if precision == PrecisionAuto {
		if rel == "" && cuda {
			if p, ok := firstExisting(dir, precisionFiles(PrecisionFP16)); ok {
				return p, nil
			}
		}
		return findONNX(dir, rel)
	}
	if p, ok := firstExisting(dir, precisionFiles(precision)); ok {
		return p, nil
	}
	var looked []string
	for _, name := range precisionFiles(precision) {
		looked = append(looked, name, filepath.Join("onnx", name))
	}
	return "", fmt.Errorf("%s: no %s ONNX file (looked for %s); the folder has %s",
		dir, precision, strings.Join(looked, ", "), describeONNX(dir))
}

// firstExisting returns the first of names found in dir or dir/onnx, top level first.
func firstExisting(dir string, names []string) (string, bool) {
	for _, name := range names {
		for _, sub := range []string{"", "onnx"} {
			p := filepath.Join(dir, sub, name)
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				return p, true
			}
		}
	}
	return "", false
}

// describeONNX lists the folder's ONNX files relative to it, with their precision, for errors.
func describeONNX(dir string) string {
	var found []string
	for _, sub := range []string{"", "onnx"} {
		m, _ := filepath.Glob(filepath.Join(dir, sub, "*.onnx"))
		for _, p := range m {
			desc := PrecisionOfFile(p)
			// A link whose target is gone (a fixture linked from another checkout's ../shared)
			// is listed, but it is no file: say so, or the error contradicts itself.
			if _, err := os.Stat(p); err != nil {
				if target, lerr := os.Readlink(p); lerr == nil {
					desc += ", a link to " + target + ", which does not exist"
				}
			}
			found = append(found, fmt.Sprintf("%s (%s)", filepath.Join(sub, filepath.Base(p)), desc))
		}
	}
	if len(found) == 0 {
		return "no ONNX file"
	}
	sort.Strings(found)
	return strings.Join(found, ", ")
}

// onnxFile is path relative to the model folder (slash-separated), or its base name when it
// lies elsewhere (kairos.json may point outside).
func onnxFile(dir, path string) string {
	rel, err := filepath.Rel(dir, path)
	if err != nil || strings.HasPrefix(rel, "..") {
		return filepath.Base(path)
	}
	return filepath.ToSlash(rel)
}
