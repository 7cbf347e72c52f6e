//go:build amd64 && !purego

#include "textflag.h"

// func dotI8AVX2(q *float32, c *byte, n int) float32
// n must be a multiple of 8. Each group of 8 code bytes is sign-extended to 8 int32 lanes
// (VPMOVSXBD), converted to float and multiplied into four accumulators with the query.
TEXT ·dotI8AVX2(SB), NOSPLIT, $0-28
	MOVQ q+0(FP), SI
	MOVQ c+8(FP), DI
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

i32:
	CMPQ CX, $32
	JL   i8
	VPMOVSXBD (DI), Y4
	VPMOVSXBD 8(DI), Y5
	VPMOVSXBD 16(DI), Y6
	VPMOVSXBD 24(DI), Y7
	VCVTDQ2PS Y4, Y4
	VCVTDQ2PS Y5, Y5
	VCVTDQ2PS Y6, Y6
	VCVTDQ2PS Y7, Y7
	VFMADD231PS (SI), Y4, Y0
	VFMADD231PS 32(SI), Y5, Y1
	VFMADD231PS 64(SI), Y6, Y2
	VFMADD231PS 96(SI), Y7, Y3
	ADDQ $128, SI
	ADDQ $32, DI
	SUBQ $32, CX
	JMP  i32

i8:
	CMPQ CX, $8
	JL   reduce
	VPMOVSXBD (DI), Y4
	VCVTDQ2PS Y4, Y4
	VFMADD231PS (SI), Y4, Y0
	ADDQ $32, SI
	ADDQ $8, DI
	SUBQ $8, CX
	JMP  i8

reduce:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotsI16AVX2(q *int16, c *byte, dim, count int, out *int32)
// dim must be a multiple of 16. For each of count consecutive rows of dim code bytes, 16 bytes
// at a time are sign-extended to words (VPMOVSXBW) and multiplied with the query's words into
// pairs of int32 sums (VPMADDWD), kept in four accumulators and summed into out.
TEXT ·dotsI16AVX2(SB), NOSPLIT, $0-40
	MOVQ c+8(FP), DI
	MOVQ dim+16(FP), DX
	MOVQ count+24(FP), R8
	MOVQ out+32(FP), R9

row:
	TESTQ R8, R8
	JZ    done
	MOVQ  q+0(FP), SI
	MOVQ  DX, CX
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3

w64:
	CMPQ      CX, $64
	JL        w16
	VPMOVSXBW (DI), Y4
	VPMOVSXBW 16(DI), Y5
	VPMOVSXBW 32(DI), Y6
	VPMOVSXBW 48(DI), Y7
	VPMADDWD  (SI), Y4, Y4
	VPMADDWD  32(SI), Y5, Y5
	VPMADDWD  64(SI), Y6, Y6
	VPMADDWD  96(SI), Y7, Y7
	VPADDD    Y4, Y0, Y0
	VPADDD    Y5, Y1, Y1
	VPADDD    Y6, Y2, Y2
	VPADDD    Y7, Y3, Y3
	ADDQ      $64, DI
	ADDQ      $128, SI
	SUBQ      $64, CX
	JMP       w64

w16:
	CMPQ      CX, $16
	JL        sum
	VPMOVSXBW (DI), Y4
	VPMADDWD  (SI), Y4, Y4
	VPADDD    Y4, Y0, Y0
	ADDQ      $16, DI
	ADDQ      $32, SI
	SUBQ      $16, CX
	JMP       w16

sum:
	VPADDD       Y1, Y0, Y0
	VPADDD       Y3, Y2, Y2
	VPADDD       Y2, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0x4e, X0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0xb1, X0, X1
	VPADDD       X1, X0, X0
	VMOVD        X0, (R9)
	ADDQ         $4, R9
	DECQ         R8
	JMP          row

done:
	VZEROUPPER
	RET

// func prefetch(p *byte, n int)
// Asks for the n bytes from p to be brought into the caches (PREFETCHT0, one per 64 bytes),
// so that a loop over scattered records can have several in flight.
TEXT ·prefetch(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), AX
	MOVQ n+8(FP), CX

line:
	PREFETCHT0 (AX)
	ADDQ       $64, AX
	SUBQ       $64, CX
	JG         line
	RET

// COLUMN adds the products of a chunk of one centroid row (at row, offset AX) with the three
// queries' chunks in Y12 to Y14 to their accumulators a, b and c.
#define COLUMN(row, a, b, c) \
	VMOVUPS     (row)(AX*1), Y15; \
	VFMADD231PS Y15, Y12, a; \
	VFMADD231PS Y15, Y13, b; \
	VFMADD231PS Y15, Y14, c

// SUMS4 turns the accumulators a, b, c, d of one query (eight partial sums each) into its four
// inner products in xa (the low half of a), with xt free: pairwise within lanes, then the halves.
#define SUMS4(a, b, c, d, xa, xt) \
	VHADDPS      b, a, a; \
	VHADDPS      d, c, c; \
	VHADDPS      c, a, a; \
	VEXTRACTF128 $1, a, xt; \
	VADDPS       xt, xa, xa

// LANEMAX keeps, in the tileBest at BX, each lane's larger of its maximum (at boff) and the sum
// in xs, and where xs is greater its index (X15) at ioff. X12 to X14 are free.
#define LANEMAX(xs, boff, ioff) \
	VMOVUPS   boff(BX), X12; \
	VCMPPS    $14, X12, xs, X13; \
	VBLENDVPS X13, xs, X12, X12; \
	VMOVUPS   X12, boff(BX); \
	VMOVUPS   ioff(BX), X14; \
	VBLENDVPS X13, X15, X14, X14; \
	VMOVUPS   X14, ioff(BX)

// func nearest3x4AVX2(q0, q1, q2, c *float32, dim, quads int, st *tileBest)
// Compares three query rows with quads*4 consecutive centroid rows, dim floats each (dim a
// positive multiple of 8), and keeps in st, for each query and each of four lanes (the
// centroids of index equal to the lane modulo 4), the largest inner product and its index:
// a product replaces the lane's only when greater, so each lane keeps its first maximum.
// st.cur holds the indices of the first four rows and advances by st.four a group. Twelve
// accumulators hold a 3x4 tile, so each centroid chunk loaded serves three queries and each
// query chunk four centroids: the loop is bound by the multiplications, not the loads.
TEXT ·nearest3x4AVX2(SB), NOSPLIT, $0-56
	MOVQ q0+0(FP), SI
	MOVQ q1+8(FP), R8
	MOVQ q2+16(FP), R9
	MOVQ c+24(FP), DI
	MOVQ dim+32(FP), R13
	MOVQ quads+40(FP), DX
	MOVQ st+48(FP), BX
	SHLQ $2, R13
	LEAQ (DI)(R13*1), R10
	LEAQ (R10)(R13*1), R11
	LEAQ (R11)(R13*1), R12
	MOVQ R13, R14
	SHLQ $2, R14

quad:
	TESTQ  DX, DX
	JE     tiledone
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	XORQ   AX, AX

chunk:
	VMOVUPS     (SI)(AX*1), Y12
	VMOVUPS     (R8)(AX*1), Y13
	VMOVUPS     (R9)(AX*1), Y14
	COLUMN(DI, Y0, Y4, Y8)
	COLUMN(R10, Y1, Y5, Y9)
	COLUMN(R11, Y2, Y6, Y10)
	COLUMN(R12, Y3, Y7, Y11)
	ADDQ        $32, AX
	CMPQ        AX, R13
	JL          chunk

	// Each query's four accumulators to its four sums: pairwise within lanes, then the halves.
	SUMS4(Y0, Y1, Y2, Y3, X0, X12)
	SUMS4(Y4, Y5, Y6, Y7, X4, X13)
	SUMS4(Y8, Y9, Y10, Y11, X8, X14)

	// Each lane's maximum and its index, where the new sum is greater.
	VMOVUPS 96(BX), X15
	LANEMAX(X0, 0, 48)
	LANEMAX(X4, 16, 64)
	LANEMAX(X8, 32, 80)
	VPADDD    112(BX), X15, X15
	VMOVUPS   X15, 96(BX)

	ADDQ R14, DI
	ADDQ R14, R10
	ADDQ R14, R11
	ADDQ R14, R12
	DECQ DX
	JMP  quad

tiledone:
	VZEROUPPER
	RET
