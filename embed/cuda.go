package embed

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	ort "github.com/yalue/onnxruntime_go"
)

// EnvORTCUDALib names the environment variable that gives the CUDA provider library's path
// when Options.ORTProviderLib is empty.
const EnvORTCUDALib = "KAIROS_ORT_CUDA_LIB"

// ORTGPUVersion is the ONNX Runtime release whose CUDA provider `make ort-gpu` fetches (npm's
// com.github.asus4.onnxruntime*@0.4.9). The provider refuses a core library of another version,
// so the core library beside it is the one used with --device cuda.
const ORTGPUVersion = "1.29.0"

// cudaEPName is the execution provider the CUDA plugin registers its devices under.
const cudaEPName = "CUDAExecutionProvider"

// cudaRegistration is the name the provider library is registered under in the ORT environment.
const cudaRegistration = "kairos-cuda"

// ortGPUHint says how to get the GPU libraries; every CUDA error ends with it or a narrower hint.
const ortGPUHint = "run `make ort-gpu`, or pass --ort-provider-lib / set " + EnvORTCUDALib

// DefaultORTProviderLib is where `make ort-gpu` puts the CUDA provider:
// $HOME/.cache/kairos/onnxruntime-gpu-1.29.0/libonnxruntime_providers_cuda.so.
func DefaultORTProviderLib() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".cache", "kairos", "onnxruntime-gpu-"+ORTGPUVersion, "libonnxruntime_providers_cuda.so")
}

// ResolveORTProviderLib returns the CUDA provider library's path: explicit (--ort-provider-lib),
// then $KAIROS_ORT_CUDA_LIB, then DefaultORTProviderLib.
func ResolveORTProviderLib(explicit string) string {
	if explicit != "" {
		return explicit
	}
	if env := os.Getenv(EnvORTCUDALib); env != "" {
		return env
	}
	return DefaultORTProviderLib()
}

// resolveCUDACoreLib returns the core library to load with the provider at provider: an
// explicit one (--ort-lib) wins; else the libonnxruntime.so `make ort-gpu` put beside the
// provider, since the provider accepts only its own version; else the CPU resolution
// ($KAIROS_ORT_LIB, the `make ort` cache), which registering the provider then checks.
func resolveCUDACoreLib(explicit, provider string) string {
	if explicit != "" {
		return explicit
	}
	for _, name := range []string{"libonnxruntime.so", "libonnxruntime.so.1"} {
		p := filepath.Join(filepath.Dir(provider), name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ResolveORTLib("")
}

// checkProviderLib fails with one sentence when the provider library is not a readable file:
// the first thing a user without `make ort-gpu` meets.
func checkProviderLib(lib string) error {
	if lib == "" {
		return fmt.Errorf("--device cuda needs the ONNX Runtime CUDA provider library and no home directory is set to find it in: %s", ortGPUHint)
	}
	st, err := os.Stat(lib)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("--device cuda needs the ONNX Runtime CUDA provider library, and %s does not exist: %s", lib, ortGPUHint)
	case err != nil:
		return fmt.Errorf("--device cuda: cannot read the ONNX Runtime CUDA provider library %s (%v): %s", lib, err, ortGPUHint)
	case st.IsDir():
		return fmt.Errorf("--device cuda: the ONNX Runtime CUDA provider library %s is a directory, want libonnxruntime_providers_cuda.so: %s", lib, ortGPUHint)
	}
	return nil
}

// missingCUDALib finds, in the dynamic loader's message, the CUDA or cuDNN library it could not
// open ("libcudart.so.13: cannot open shared object file").
var missingCUDALib = regexp.MustCompile(`(lib(?:cudart|cublasLt|cublas|curand|cufft|cudnn[a-z_]*|nvrtc|nvJitLink|cuda)\.so[.0-9]*): cannot open shared object file`)

// notSharedLib matches the dynamic loader's refusals of a file that is not a shared library for
// this machine (a truncated download, an HTML error page saved as .so, another architecture).
var notSharedLib = regexp.MustCompile(`invalid ELF header|file too short|wrong ELF class|ELF file's phentsize|ELF load command|only ET_DYN and ET_EXEC`)

// registerCUDA registers the provider library with the loaded environment once per process
// (ortEnv.mu held). A failure is one sentence naming what is missing and how to get it.
func registerCUDA(lib, core string) error {
	if ortEnv.cuda != "" {
		if ortEnv.cuda != lib {
			return fmt.Errorf("--device cuda: the CUDA provider is already loaded from %s; a process can load only one (asked for %s)", ortEnv.cuda, lib)
		}
		return nil
	}
	if err := ort.RegisterExecutionProviderLibrary(cudaRegistration, lib); err != nil {
		return explainRegisterError(lib, core, ort.GetVersion(), err)
	}
	ortEnv.cuda = lib
	return nil
}

// explainRegisterError turns ONNX Runtime's refusal of the provider library into one sentence.
func explainRegisterError(lib, core, coreVersion string, err error) error {
	if m := missingCUDALib.FindStringSubmatch(err.Error()); m != nil && strings.HasPrefix(m[1], "libcuda.so") {
		return fmt.Errorf("--device cuda: the CUDA provider %s needs the NVIDIA driver's %s, which the dynamic loader cannot find: this machine has no NVIDIA driver (install it for your GPU; nvidia-smi must list the GPU) (ONNX Runtime said: %v)", lib, m[1], err)
	} else if m != nil {
		return fmt.Errorf("--device cuda: the CUDA provider %s needs %s, which the dynamic loader cannot find: install CUDA 13 and cuDNN 9 (NVIDIA's packages) and put their lib directories on LD_LIBRARY_PATH (ONNX Runtime said: %v)", lib, m[1], err)
	}
	if notSharedLib.MatchString(err.Error()) {
		return fmt.Errorf("--device cuda: %s is not a loadable shared library: it must be libonnxruntime_providers_cuda.so of ONNX Runtime %s for linux-x64; %s (ONNX Runtime said: %v)", lib, ORTGPUVersion, ortGPUHint, err)
	}
	if coreVersion != ORTGPUVersion {
		return fmt.Errorf("--device cuda: ONNX Runtime %s (%s) could not load the CUDA provider %s, which must be libonnxruntime_providers_cuda.so of the same ONNX Runtime version as the core library (`make ort-gpu` fetches both, %s; pass its libonnxruntime.so with --ort-lib): %v", coreVersion, core, lib, ORTGPUVersion, err)
	}
	return fmt.Errorf("--device cuda: ONNX Runtime %s could not load the CUDA provider %s (%v): it must be libonnxruntime_providers_cuda.so of ONNX Runtime %s; %s", coreVersion, lib, err, ORTGPUVersion, ortGPUHint)
}

// cudaDevice returns the n-th CUDA device of the registered provider (cuda:N), in the order
// ONNX Runtime lists them.
func cudaDevice(n int, lib string) (ort.EpDevice, error) {
	all, err := ort.GetEpDevices()
	if err != nil {
		return ort.EpDevice{}, fmt.Errorf("--device cuda: listing ONNX Runtime's devices: %w", err)
	}
	var cuda []ort.EpDevice
	for _, d := range all {
		if d.EpName() == cudaEPName {
			cuda = append(cuda, d)
		}
	}
	return pickCUDADevice(n, len(cuda), lib, func(i int) ort.EpDevice { return cuda[i] })
}

// pickCUDADevice chooses device n of count, or says why it cannot.
func pickCUDADevice[D any](n, count int, lib string, at func(int) D) (D, error) {
	var zero D
	switch {
	case count == 0:
		return zero, fmt.Errorf("--device cuda: the CUDA provider %s loaded but found no GPU: check that an NVIDIA GPU and its driver are present (nvidia-smi lists them) and visible to this process (CUDA_VISIBLE_DEVICES)", lib)
	case n >= count:
		return zero, fmt.Errorf("--device cuda:%d: the CUDA provider found %d GPU(s), cuda:0 to cuda:%d", n, count, count-1)
	}
	return at(n), nil
}
