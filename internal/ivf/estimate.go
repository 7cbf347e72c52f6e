package ivf

// A scan turns each code's table sum t (scanBlocks) into the estimate of the query's inner
// product with the vector, from the code's first two factors f0 (scale) and f1 (bias) and the
// list's centre cq = ⟨c, q⟩:
//
//	est = (cq + f1) + f0 * ((t + shift) * dl)
//
// (queryCode.signs is the last factor). At 40M vectors a query scans about 156,000 codes at
// probe 64, and this arithmetic with its comparison against the candidates' floor, one code
// at a time, was a quarter of the query's time (perf): estimates does it sixteen codes at a
// time where the CPU can, and marks those above the floor in a bitmask, so that the scan
// visits only the few that might be kept.

// estConsts is what estimates needs of the query and the list, in the order the assembly
// reads them.
type estConsts struct {
	shift, dl float32 // the query's (queryCode.signs)
	cq        float32 // the list's centre with the query
	floor     float32 // the estimates kept are above it
}

// estimatesGeneric writes into est the estimate of each code sum in t with its factors
// (factorsPer a code) and sets, in mask, bit i%16 of word i/16 for each estimate above the
// floor (mask holds (len(t)+15)/16 words). Each operation is rounded to float32 in the order
// the assembly computes it, so both give the same bits.
func estimatesGeneric(t []int32, factors []float32, k *estConsts, est []float32, mask []uint16) {
	clear(mask[:(len(t)+15)/16])
	for i, x := range t {
		f := factors[i*factorsPer : i*factorsPer+2]
		s := float32(float32(float32(x)+k.shift) * k.dl)
		e := float32(k.cq+f[1]) + float32(f[0]*s)
		est[i] = e
		if e > k.floor {
			mask[i/16] |= 1 << (i % 16)
		}
	}
}

// estimates is estimatesGeneric, sixteen codes at a time in assembly where the CPU can.
func estimates(t []int32, factors []float32, k *estConsts, est []float32, mask []uint16) {
	m := 0
	if useEstAVX512 && len(t) >= 16 {
		m = len(t) &^ 15
		_ = factors[m*factorsPer-1] // the assembly does no bounds checks
		_ = est[m-1]
		_ = mask[m/16-1]
		estimatesAVX512(&t[0], &factors[0], m, k, &est[0], &mask[0])
	}
	if m < len(t) {
		estimatesGeneric(t[m:], factors[m*factorsPer:], k, est[m:], mask[m/16:])
	}
}
