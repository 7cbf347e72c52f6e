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
