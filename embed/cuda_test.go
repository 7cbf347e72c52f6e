package embed

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The provider library is found in this order: the explicit path (--ort-provider-lib), then
// $KAIROS_ORT_CUDA_LIB, then the `make ort-gpu` cache under $HOME.
func TestResolveORTProviderLib(t *testing.T) {
	home := t.TempDir()
	cache := filepath.Join(home, ".cache", "kairos", "onnxruntime-gpu-"+ORTGPUVersion, "libonnxruntime_providers_cuda.so")
	tests := []struct {
		name, explicit, env, want string
	}{
		{"flag wins over env", "/opt/flag/libonnxruntime_providers_cuda.so", "/opt/env/p.so", "/opt/flag/libonnxruntime_providers_cuda.so"},
		{"env wins over cache", "", "/opt/env/p.so", "/opt/env/p.so"},
		{"cache last", "", "", cache},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("HOME", home)
			t.Setenv(EnvORTCUDALib, tc.env)
			if got := ResolveORTProviderLib(tc.explicit); got != tc.want {
				t.Errorf("ResolveORTProviderLib(%q) with $%s=%q = %q, want %q", tc.explicit, EnvORTCUDALib, tc.env, got, tc.want)
			}
		})
	}
}

// With --device cuda the core library is --ort-lib, else the one beside the provider (the
// provider accepts only its own ORT version), else the CPU resolution.
func TestResolveCUDACoreLib(t *testing.T) {
	tests := []struct {
		name     string
		explicit string
		siblings []string
		want     string // "" : the CPU resolution ($KAIROS_ORT_LIB)
	}{
		{"explicit wins over sibling", "/opt/core/libonnxruntime.so", []string{"libonnxruntime.so"}, "/opt/core/libonnxruntime.so"},
		{"sibling .so", "", []string{"libonnxruntime.so", "libonnxruntime.so.1"}, "libonnxruntime.so"},
		{"sibling .so.1", "", []string{"libonnxruntime.so.1"}, "libonnxruntime.so.1"},
		{"no sibling: KAIROS_ORT_LIB", "", nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, s := range tc.siblings {
				writeFile(t, filepath.Join(dir, s), "core")
			}
			t.Setenv(EnvORTLib, "/opt/cpu/libonnxruntime.so.1")
			want := tc.want
			switch {
			case want == "":
				want = "/opt/cpu/libonnxruntime.so.1"
			case !filepath.IsAbs(want):
				want = filepath.Join(dir, want)
			}
			if got := resolveCUDACoreLib(tc.explicit, filepath.Join(dir, "libonnxruntime_providers_cuda.so")); got != want {
				t.Errorf("core library %q, want %q", got, want)
			}
		})
	}
}

// --device cuda that cannot run fails in one sentence naming what is missing and how to get it,
// with backend auto too: never a silent CPU run.
func TestCUDAFailsClearly(t *testing.T) {
	requireORT(t)
	model := synthetic("tiny-encoder")
	requireModel(t, model)
	dir := t.TempDir()
	notELF := filepath.Join(dir, "libonnxruntime_providers_cuda.so")
	writeFile(t, notELF, "<html>404 Not Found</html>\n")
	emptyDir := t.TempDir()
	core := ResolveORTLib("") // before $HOME moves below
	tests := []struct {
		name     string
		provider string // --ort-provider-lib
		env      string // $KAIROS_ORT_CUDA_LIB
		backend  string
		want     []string
	}{
		{"missing file, flag", filepath.Join(dir, "nope.so"), "", BackendAuto,
			[]string{filepath.Join(dir, "nope.so"), "does not exist", "make ort-gpu", "--ort-provider-lib", EnvORTCUDALib}},
		{"missing file, env", "", filepath.Join(dir, "env.so"), BackendORT,
			[]string{filepath.Join(dir, "env.so"), "does not exist", "make ort-gpu"}},
		{"a directory", emptyDir, "", BackendAuto, []string{emptyDir, "is a directory", "make ort-gpu"}},
		{"not a shared library", notELF, "", BackendAuto,
			[]string{notELF, "is not a loadable shared library", "libonnxruntime_providers_cuda.so of ONNX Runtime " + ORTGPUVersion, "make ort-gpu"}},
		{"not a shared library, backend ort", notELF, "", BackendORT, []string{notELF, "is not a loadable shared library"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(EnvORTCUDALib, tc.env)
			t.Setenv("HOME", t.TempDir()) // no `make ort-gpu` cache to fall back to
			o := Options{ModelDir: model, Backend: tc.backend, Device: Device{CUDA: true}, ORTProviderLib: tc.provider, ORTLib: core}
			for name, open := range map[string]func() error{
				"encoder": func() error {
					e, err := OpenEncoder(context.Background(), o)
					if err == nil {
						e.Close()
					}
					return err
				},
				"cross-encoder": func() error {
					o := o
					o.ModelDir = synthetic("tiny-cross-encoder")
					e, err := OpenCrossEncoder(context.Background(), o)
					if err == nil {
						e.Close()
					}
					return err
				},
			} {
				err := open()
				if err == nil {
					t.Fatalf("%s opened with an unusable CUDA provider", name)
				}
				msg := err.Error()
				for _, w := range tc.want {
					if !strings.Contains(msg, w) {
						t.Errorf("%s error lacks %q:\n%s", name, w, msg)
					}
				}
				if strings.Contains(msg, "\n") || !strings.Contains(msg, "--device cuda") {
					t.Errorf("%s error is not one line about --device cuda:\n%s", name, msg)
				}
			}
		})
	}
}

// The real provider of `make ort-gpu` on a machine without CUDA 13: the error names the CUDA
// library the loader could not find. Runs where the provider is installed and CUDA is not.
func TestCUDAMissingRuntime(t *testing.T) {
	requireORT(t)
	lib := DefaultORTProviderLib()
	if _, err := os.Stat(lib); err != nil {
		t.Skipf("%s not installed (make ort-gpu); TestExplainRegisterError covers the message", lib)
	}
	if _, err := os.Stat("/usr/local/cuda-13.0"); err == nil {
		t.Skip("CUDA 13 is installed here: the provider's dependencies load")
	}
	// The CPU tests' core library: a process loads one, and the provider's dependencies fail
	// to load before its version is checked.
	o := Options{ModelDir: synthetic("tiny-encoder"), Device: Device{CUDA: true}, ORTLib: ResolveORTLib("")}
	e, err := OpenEncoder(context.Background(), o)
	if err == nil {
		e.Close()
		t.Fatal("opened on cuda without the CUDA runtime")
	}
	if !strings.Contains(err.Error(), "which the dynamic loader cannot find") || !strings.Contains(err.Error(), ".so.") {
		t.Errorf("error does not name the missing CUDA library:\n%v", err)
	}
}

// ONNX Runtime's refusals, as it words them, become sentences that say what to do.
func TestExplainRegisterError(t *testing.T) {
	const lib = "/c/libonnxruntime_providers_cuda.so"
	loadErr := func(msg string) error {
		return errors.New("Failed to load library " + lib + " with error: " + msg)
	}
	tests := []struct {
		name        string
		coreVersion string
		err         error
		want        []string
	}{
		{"cuda runtime", ORTGPUVersion, loadErr("libcudart.so.13: cannot open shared object file: No such file or directory"),
			[]string{"needs libcudart.so.13", "install CUDA 13 and cuDNN 9", "LD_LIBRARY_PATH"}},
		{"cublasLt", "1.27.0", loadErr("libcublasLt.so.13: cannot open shared object file: No such file or directory"),
			[]string{"needs libcublasLt.so.13", "install CUDA 13"}},
		{"cudnn", ORTGPUVersion, loadErr("libcudnn.so.9: cannot open shared object file: No such file or directory"),
			[]string{"needs libcudnn.so.9", "cuDNN 9"}},
		{"no driver", ORTGPUVersion, loadErr("libcuda.so.1: cannot open shared object file: No such file or directory"),
			[]string{"NVIDIA driver's libcuda.so.1", "no NVIDIA driver"}},
		{"not ELF", ORTGPUVersion, loadErr(lib + ": invalid ELF header"), []string{"is not a loadable shared library", "make ort-gpu"}},
		{"version mismatch", "1.27.0", errors.New("provider built for ORT API 29, runtime supports 27"),
			[]string{"ONNX Runtime 1.27.0", "same ONNX Runtime version", "--ort-lib", ORTGPUVersion}},
		{"other", ORTGPUVersion, errors.New("CreateEpFactories failed"), []string{"could not load the CUDA provider", "make ort-gpu"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msg := explainRegisterError(lib, "/core/libonnxruntime.so", tc.coreVersion, tc.err).Error()
			for _, w := range append(tc.want, lib, "--device cuda") {
				if !strings.Contains(msg, w) {
					t.Errorf("lacks %q:\n%s", w, msg)
				}
			}
		})
	}
}

func TestPickCUDADevice(t *testing.T) {
	tests := []struct {
		n, count int
		want     int
		wantErr  string
	}{
		{0, 1, 0, ""},
		{1, 2, 1, ""},
		{0, 0, 0, "found no GPU"},
		{3, 2, 0, "--device cuda:3: the CUDA provider found 2 GPU(s), cuda:0 to cuda:1"},
	}
	for _, tc := range tests {
		got, err := pickCUDADevice(tc.n, tc.count, "/p.so", func(i int) int { return i + 100 })
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("pick(%d of %d) error %v, want %q", tc.n, tc.count, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want+100 {
			t.Errorf("pick(%d of %d) = %d, %v; want %d", tc.n, tc.count, got, err, tc.want+100)
		}
	}
}
