//go:build amd64 && !purego

#include "textflag.h"

// func scanRunAVX2(blocks *byte, nb, stride, count int, luts *byte, out *int32)
//
// For each of nb blocks (stride bytes apart) of count transposed code bytes of 32 codes
// (fastscan.go), the sum of the query's tables over the bytes, less their bias 120*count: the
// low and high half of each byte index their 16-entry tables (VPSHUFB), the two lookups are
// added in bytes (at most 240) and then into 16-bit lanes, the even bytes (codes 0 to 15) in
// Y0, the odd (16 to 31) in Y1, widened to 32 code sums at the end.
TEXT ·scanRunAVX2(SB), NOSPLIT, $0-48
	MOVQ blocks+0(FP), SI
	MOVQ nb+8(FP), CX
	MOVQ stride+16(FP), R9
	MOVQ count+24(FP), DX
	MOVQ luts+32(FP), R8
	MOVQ out+40(FP), DI
	MOVQ $0x0f0f0f0f0f0f0f0f, AX
	VMOVQ AX, X15
	VPBROADCASTQ X15, Y15
	MOVQ $0x00ff00ff00ff00ff, AX
	VMOVQ AX, X14
	VPBROADCASTQ X14, Y14
	IMUL3Q $120, DX, AX
	VMOVQ AX, X13
	VPBROADCASTD X13, Y13

block:
	TESTQ CX, CX
	JZ    done
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	MOVQ  SI, R10
	MOVQ  R8, R11
	MOVQ  DX, R13

row:
	VMOVDQU (R10), Y2
	VPSRLW  $4, Y2, Y3
	VPAND   Y15, Y2, Y2
	VPAND   Y15, Y3, Y3
	VMOVDQU (R11), Y4
	VMOVDQU 32(R11), Y5
	VPSHUFB Y2, Y4, Y4
	VPSHUFB Y3, Y5, Y5
	VPADDB  Y4, Y5, Y4
	VPAND   Y14, Y4, Y5
	VPSRLW  $8, Y4, Y4
	VPADDW  Y5, Y0, Y0
	VPADDW  Y4, Y1, Y1
	ADDQ    $32, R10
	ADDQ    $64, R11
	DECQ    R13
	JNZ     row

	VPMOVZXWD    X0, Y6
	VEXTRACTI128 $1, Y0, X7
	VPMOVZXWD    X7, Y7
	VPMOVZXWD    X1, Y8
	VEXTRACTI128 $1, Y1, X9
	VPMOVZXWD    X9, Y9
	VPSUBD       Y13, Y6, Y6
	VPSUBD       Y13, Y7, Y7
	VPSUBD       Y13, Y8, Y8
	VPSUBD       Y13, Y9, Y9
	VMOVDQU      Y6, (DI)
	VMOVDQU      Y7, 32(DI)
	VMOVDQU      Y8, 64(DI)
	VMOVDQU      Y9, 96(DI)
	ADDQ         $128, DI
	ADDQ         R9, SI
	DECQ         CX
	JMP          block

done:
	VZEROUPPER
	RET

// func scanRunAVX512(blocks *byte, np, stride, count int, luts *byte, out *int32)
//
// scanRunAVX2 over np pairs of blocks, a pair at a time in 64-byte registers: a row of the
// first block in the low half, the same row of the second in the high half, and each table
// broadcast to both (half the instructions a code).
TEXT ·scanRunAVX512(SB), NOSPLIT, $0-48
	MOVQ blocks+0(FP), SI
	MOVQ np+8(FP), CX
	MOVQ stride+16(FP), R9
	MOVQ count+24(FP), DX
	MOVQ luts+32(FP), R8
	MOVQ out+40(FP), DI
	MOVQ $0x0f0f0f0f0f0f0f0f, AX
	VPBROADCASTQ AX, Z15
	MOVQ $0x00ff00ff00ff00ff, AX
	VPBROADCASTQ AX, Z14
	IMUL3Q $120, DX, AX
	VPBROADCASTD AX, Z13

pair:
	TESTQ  CX, CX
	JZ     pairsdone
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	MOVQ   SI, R10
	MOVQ   R8, R11
	MOVQ   DX, R13

prow:
	VMOVDQU         (R10), Y2
	VINSERTI64X4    $1, (R10)(R9*1), Z2, Z2
	VPSRLW          $4, Z2, Z3
	VPANDQ          Z15, Z2, Z2
	VPANDQ          Z15, Z3, Z3
	VBROADCASTI64X4 (R11), Z4
	VBROADCASTI64X4 32(R11), Z5
	VPSHUFB         Z2, Z4, Z4
	VPSHUFB         Z3, Z5, Z5
	VPADDB          Z4, Z5, Z4
	VPANDQ          Z14, Z4, Z5
	VPSRLW          $8, Z4, Z4
	VPADDW          Z5, Z0, Z0
	VPADDW          Z4, Z1, Z1
	ADDQ            $32, R10
	ADDQ            $64, R11
	DECQ            R13
	JNZ             prow

	VPMOVZXWD     Y0, Z6
	VPMOVZXWD     Y1, Z8
	VEXTRACTI64X4 $1, Z0, Y7
	VEXTRACTI64X4 $1, Z1, Y9
	VPMOVZXWD     Y7, Z7
	VPMOVZXWD     Y9, Z9
	VPSUBD        Z13, Z6, Z6
	VPSUBD        Z13, Z7, Z7
	VPSUBD        Z13, Z8, Z8
	VPSUBD        Z13, Z9, Z9
	VMOVDQU32     Z6, (DI)
	VMOVDQU32     Z8, 64(DI)
	VMOVDQU32     Z7, 128(DI)
	VMOVDQU32     Z9, 192(DI)
	ADDQ          $256, DI
	ADDQ          R9, SI
	ADDQ          R9, SI
	DECQ          CX
	JMP           pair

pairsdone:
	VZEROUPPER
	RET
