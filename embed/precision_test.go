package embed

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Which file each precision picks, from folders laid out as model repositories ship them.
func TestSelectONNX(t *testing.T) {
	tests := []struct {
		name      string
		files     []string
		broken    []string // links to a file that does not exist
		rel       string   // kairos.json "onnx"
		precision string
		cuda      bool
		want      string   // file picked, relative to the folder
		wantErr   []string // substrings of the error instead
	}{
		{"auto cpu keeps model.onnx", []string{"model.onnx", "model_fp16.onnx"}, nil, "", PrecisionAuto, false, "model.onnx", nil},
		{"empty is auto", []string{"model.onnx", "model_fp16.onnx"}, nil, "", "", false, "model.onnx", nil},
		{"auto cuda takes fp16", []string{"model.onnx", "model_fp16.onnx"}, nil, "", PrecisionAuto, true, "model_fp16.onnx", nil},
		{"auto cuda, Xenova layout", []string{"onnx/model.onnx", "onnx/model_fp16.onnx", "onnx/model_quantized.onnx"}, nil, "", PrecisionAuto, true, "onnx/model_fp16.onnx", nil},
		{"auto cuda without fp16 is fp32", []string{"onnx/model.onnx", "onnx/model_quantized.onnx"}, nil, "", PrecisionAuto, true, "onnx/model.onnx", nil},
		{"auto cuda, kairos.json wins", []string{"model.onnx", "model_fp16.onnx"}, nil, "model.onnx", PrecisionAuto, true, "model.onnx", nil},
		{"fp16 explicit on cpu", []string{"onnx/model.onnx", "onnx/model_fp16.onnx"}, nil, "", PrecisionFP16, false, "onnx/model_fp16.onnx", nil},
		{"fp16 over kairos.json", []string{"model.onnx", "model_fp16.onnx"}, nil, "model.onnx", PrecisionFP16, false, "model_fp16.onnx", nil},
		{"fp32 explicit", []string{"onnx/model.onnx", "onnx/model_fp16.onnx"}, nil, "", PrecisionFP32, true, "onnx/model.onnx", nil},
		{"top level before onnx/", []string{"model_fp16.onnx", "onnx/model_fp16.onnx"}, nil, "", PrecisionFP16, false, "model_fp16.onnx", nil},
		{"int8 Xenova", []string{"onnx/model.onnx", "onnx/model_quantized.onnx"}, nil, "", PrecisionInt8, false, "onnx/model_quantized.onnx", nil},
		{"int8 name before quantized", []string{"model_quantized.onnx", "model_int8.onnx"}, nil, "", PrecisionInt8, false, "model_int8.onnx", nil},
		{"int8 sentence-transformers", []string{"onnx/model.onnx", "onnx/model_qint8_avx512.onnx", "onnx/model_quint8_avx2.onnx"}, nil, "", PrecisionInt8, false, "onnx/model_qint8_avx512.onnx", nil},
		{"fp16 missing names folder and files", []string{"model.onnx", "onnx/model_quantized.onnx"}, nil, "", PrecisionFP16, false, "",
			[]string{"no fp16 ONNX file", "model_fp16.onnx, onnx/model_fp16.onnx", "the folder has model.onnx (fp32), onnx/model_quantized.onnx (int8)"}},
		{"int8 missing", []string{"model.onnx"}, nil, "", PrecisionInt8, false, "", []string{"no int8 ONNX file", "model_quantized.onnx", "model.onnx (fp32)"}},
		{"fp32 missing", []string{"onnx/model_fp16.onnx"}, nil, "", PrecisionFP32, false, "", []string{"no fp32 ONNX file", "onnx/model_fp16.onnx (fp16)"}},
		{"empty folder", nil, nil, "", PrecisionFP16, false, "", []string{"the folder has no ONNX file"}},
		{"unknown precision", []string{"model.onnx"}, nil, "", "bf16", false, "", []string{`unknown precision "bf16"`}},
		{"a link to nothing is named as such", []string{"onnx/model_fp16.onnx"}, []string{"model.onnx"}, "", PrecisionFP32, false, "",
			[]string{"no fp32 ONNX file", "model.onnx (fp32, a link to ", "gone/model.onnx, which does not exist)", "onnx/model_fp16.onnx (fp16)"}},
		{"a directory named like the file is no file", []string{"model_fp16.onnx/x", "model.onnx"}, nil, "", PrecisionFP16, false, "", []string{"no fp16 ONNX file"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range tc.files {
				writeFile(t, filepath.Join(dir, f), "x")
			}
			for _, f := range tc.broken {
				if err := os.Symlink(filepath.Join(dir, "gone", f), filepath.Join(dir, f)); err != nil {
					t.Fatal(err)
				}
			}
			got, err := selectONNX(dir, tc.rel, tc.precision, tc.cuda)
			if tc.wantErr != nil {
				if err == nil {
					t.Fatalf("picked %s, want an error", got)
				}
				want := tc.wantErr
				if tc.precision != "bf16" {
					want = append(want, dir)
				}
				for _, w := range want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if rel := onnxFile(dir, got); rel != tc.want {
				t.Errorf("picked %s, want %s", rel, tc.want)
			}
		})
	}
}

func TestPrecisionOfFile(t *testing.T) {
	tests := map[string]string{
		"model.onnx": PrecisionFP32, "onnx/model.onnx": PrecisionFP32, "model_optimized.onnx": PrecisionFP32,
		"onnx/model_fp16.onnx": PrecisionFP16, "Model_Float16.onnx": PrecisionFP16,
		"model_int8.onnx": PrecisionInt8, "onnx/model_quantized.onnx": PrecisionInt8,
		"model_qint8_avx512.onnx": PrecisionInt8, "model_quint8_avx2.onnx": PrecisionInt8, "model_uint8.onnx": PrecisionInt8,
	}
	for name, want := range tests {
		if got := PrecisionOfFile(name); got != want {
			t.Errorf("PrecisionOfFile(%q) = %s, want %s", name, got, want)
		}
	}
}

func TestValidatePrecision(t *testing.T) {
	for _, p := range []string{"", PrecisionAuto, PrecisionFP32, PrecisionFP16, PrecisionInt8} {
		if err := (Options{ModelDir: "m", Precision: p}).Validate(); err != nil {
			t.Errorf("precision %q: %v", p, err)
		}
	}
	for _, p := range []string{"FP16", "float16", "half", "int4"} {
		err := (Options{ModelDir: "m", Precision: p}).Validate()
		if err == nil || !strings.Contains(err.Error(), "want auto, fp32, fp16 or int8") {
			t.Errorf("precision %q: %v, want an error listing the precisions", p, err)
		}
	}
}

func TestHalfToFloat32(t *testing.T) {
	tests := []struct {
		bits uint16
		want float64
	}{
		{0x0000, 0}, {0x3c00, 1}, {0xc000, -2}, {0x3555, 0.333251953125}, {0x7bff, 65504},
		{0x0400, 6.103515625e-05}, {0x0001, 5.960464477539063e-08}, {0x03ff, 6.097555160522461e-05},
		{0x8001, -5.960464477539063e-08}, {0x7c00, math.Inf(1)}, {0xfc00, math.Inf(-1)},
	}
	for _, tc := range tests {
		if got := halfToFloat32(tc.bits); float64(got) != tc.want {
			t.Errorf("halfToFloat32(%#04x) = %g, want %g", tc.bits, got, tc.want)
		}
	}
	if got := halfToFloat32(0x8000); got != 0 || !math.Signbit(float64(got)) {
		t.Errorf("halfToFloat32(0x8000) = %g, want -0", got)
	}
	if got := halfToFloat32(0x7e00); !math.IsNaN(float64(got)) {
		t.Errorf("halfToFloat32(0x7e00) = %g, want NaN", got)
	}
	// Every finite half is a float32 whose bits round-trip: sign, exponent and mantissa.
	for b := range uint32(1 << 16) {
		h := uint16(b)
		if h&0x7c00 == 0x7c00 {
			continue
		}
		f := float64(halfToFloat32(h))
		mag := math.Ldexp(float64(h&0x3ff), -24) // subnormal scale
		if e := int(h>>10) & 0x1f; e != 0 {
			mag = math.Ldexp(1+float64(h&0x3ff)/1024, e-15)
		}
		if h&0x8000 != 0 {
			mag = -mag
		}
		if f != mag {
			t.Fatalf("halfToFloat32(%#04x) = %g, want %g", h, f, mag)
		}
	}
}

// fixtures is where `make models-fp16` builds the fp16 models ($KAIROS_FIXTURES, default
// $HOME/.cache/kairos/fixtures). A missing fixture fails the test, as a missing ONNX Runtime
// does: these are the only real fp16 files Kairos can test on here.
func fixture(t *testing.T, name string) string {
	t.Helper()
	root := os.Getenv("KAIROS_FIXTURES")
	if root == "" {
		home, _ := os.UserHomeDir()
		root = filepath.Join(home, ".cache", "kairos", "fixtures")
	}
	dir := filepath.Join(root, name)
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("fp16 fixture missing: run `make models-fp16` (%v)", err)
	}
	return dir
}

// fp16 and int8 files of the same weights give vectors close to fp32's on the CPU provider,
// and the encoder reports which file and precision it runs.
func TestPrecisionsAgreeWithFP32(t *testing.T) {
	requireORT(t)
	dir := fixture(t, "minilm-l6-precisions")
	ctx := context.Background()
	texts := testTexts()
	open := func(precision string) *Encoder {
		e, err := OpenEncoder(ctx, Options{ModelDir: dir, Backend: BackendORT, Precision: precision, BatchSize: 4})
		if err != nil {
			t.Fatalf("precision %s: %v", precision, err)
		}
		t.Cleanup(func() { _ = e.Close() })
		return e
	}
	ref, err := open(PrecisionFP32).Encode(ctx, Passage, texts)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		precision, file string
		minCos          float64
		same            bool // bit-identical to fp32 (else it must differ: another file ran)
	}{
		{PrecisionAuto, "model.onnx", 1, true},               // the CPU keeps fp32
		{PrecisionFP16, "onnx/model_fp16.onnx", 0.99, false}, // the bar for fp16
		{PrecisionInt8, "onnx/model_quantized.onnx", 0.99, false},
	}
	for _, tc := range tests {
		t.Run(tc.precision, func(t *testing.T) {
			e := open(tc.precision)
			info := e.Info()
			wantPrec := tc.precision
			if wantPrec == PrecisionAuto {
				wantPrec = PrecisionFP32
			}
			if info.ONNXFile != tc.file || info.Precision != wantPrec || info.Dim != 384 {
				t.Errorf("Info: file %s precision %s dim %d, want %s %s 384", info.ONNXFile, info.Precision, info.Dim, tc.file, wantPrec)
			}
			got, err := e.Encode(ctx, Passage, texts)
			if err != nil {
				t.Fatal(err)
			}
			worst, identical := 1.0, true
			for i := range got {
				worst = min(worst, cosine(got[i], ref[i]))
				identical = identical && slices.Equal(got[i], ref[i])
			}
			t.Logf("%s (%s): min cosine with fp32 over %d texts = %.7f (1 - cos = %.2g)", tc.precision, tc.file, len(texts), worst, 1-worst)
			if identical != tc.same {
				t.Errorf("vectors bit-identical to fp32: %v, want %v", identical, tc.same)
			}
			if worst < tc.minCos-1e-9 {
				t.Errorf("min cosine %.6f < %.4f", worst, tc.minCos)
			}
		})
	}
}

// An fp16 file with float16 outputs (no keep_io_types) is read into float32 and agrees with
// the fp32 model it came from.
func TestFloat16OutputModel(t *testing.T) {
	requireORT(t)
	dir := fixture(t, "tiny-fp16-io")
	ctx := context.Background()
	e, err := OpenEncoder(ctx, Options{ModelDir: dir, Backend: BackendORT, Precision: PrecisionFP16, BatchSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ref := openEnc(t, synthetic("tiny-encoder"), BackendORT)
	texts := testTexts()
	got, err := e.Encode(ctx, Passage, texts)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ref.Encode(ctx, Passage, texts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if c := cosine(got[i], want[i]); c < 0.99 || math.IsNaN(c) {
			t.Errorf("text %d: cosine %.6f with fp32 < 0.99", i, c)
		}
	}
}
