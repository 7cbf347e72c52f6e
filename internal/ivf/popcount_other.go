//go:build !amd64 || purego

package ivf

func popcounts(codes []uint64, n, words int, planes []uint64, out []int32) {
	popcountsGeneric(codes, n, words, planes, out)
}
