//go:build !amd64 || purego

package ivf

// useEstAVX512: never here.
const useEstAVX512 = false

// estimatesAVX512 is never called here.
func estimatesAVX512(*int32, *float32, int, *estConsts, *float32, *uint16) {
	panic("ivf: no AVX-512 estimates on this platform")
}
