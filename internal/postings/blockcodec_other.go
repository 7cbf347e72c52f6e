//go:build !amd64 || purego

package postings

// kernelGroups is 0: no kernel unpacks here.
func kernelGroups(src []byte, n int, width uint) int { return 0 }

func unpackOrdGroups(src []byte, groups int, width uint, carry uint64, n int, ords *[BlockSize]uint32) (uint64, bool) {
	return 0, false
}

func unpackAddGroups(src []byte, groups int, width uint, add uint32, dst *[BlockSize]uint32) {}
