//go:build amd64 && !purego

#include "textflag.h"

// func popcountsAVX512(codes *uint64, n, words int, planes *uint64, out *int32)
//
// For each of n codes of words 64-bit words (a multiple of 4), out = 2*W - 15*pc, where pc is
// the code's popcount and W = sum_j 2^j popcount(code & plane_j) over the four query planes,
// each words long, one after the other at planes.
TEXT ·popcountsAVX512(SB), NOSPLIT, $0-40
	MOVQ codes+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ words+16(FP), DX
	MOVQ planes+24(FP), R8
	MOVQ out+32(FP), DI
	MOVQ DX, R9
	SHLQ $3, R9            // bytes of one plane
	LEAQ (R9)(R9*2), R12   // three planes
	SHRQ $2, DX            // groups of four words per code

entry:
	TESTQ CX, CX
	JZ    done
	VPXOR Y10, Y10, Y10
	MOVQ  R8, R11
	MOVQ  DX, R13

group:
	VMOVDQU  (SI), Y0
	VPOPCNTQ Y0, Y1
	VPAND    (R11), Y0, Y2
	VPOPCNTQ Y2, Y2
	VPAND    (R11)(R9*1), Y0, Y3
	VPOPCNTQ Y3, Y3
	VPAND    (R11)(R9*2), Y0, Y4
	VPOPCNTQ Y4, Y4
	VPAND    (R11)(R12*1), Y0, Y5
	VPOPCNTQ Y5, Y5
	VPSLLQ   $1, Y2, Y2
	VPSLLQ   $2, Y3, Y3
	VPSLLQ   $3, Y4, Y4
	VPSLLQ   $4, Y5, Y5
	VPADDQ   Y2, Y10, Y10
	VPADDQ   Y3, Y10, Y10
	VPADDQ   Y4, Y10, Y10
	VPADDQ   Y5, Y10, Y10
	VPSLLQ   $4, Y1, Y6
	VPSUBQ   Y1, Y6, Y6    // 15*pc
	VPSUBQ   Y6, Y10, Y10
	ADDQ     $32, SI
	ADDQ     $32, R11
	DECQ     R13
	JNZ      group

	VEXTRACTI128 $1, Y10, X11
	VPADDQ       X11, X10, X10
	VPSHUFD      $0x4e, X10, X11
	VPADDQ       X11, X10, X10
	VMOVQ        X10, AX
	MOVL         AX, (DI)
	ADDQ         $4, DI
	DECQ         CX
	JMP          entry

done:
	VZEROUPPER
	RET
