//go:build amd64 && !purego

#include "textflag.h"

// estIdx holds the VPERMT2PS indices that take a code's scale f0 and bias f1 out of 16 codes'
// interleaved factors (f0 f1 f2 each, 48 floats in Z1, Z2, Z3): f0 of codes 0 to 10 from Z1
// and Z2 (indices 0, 3, ..., 30), then of codes 11 to 15 from Z3 (33 to 45: 1, 4, ..., 13 of
// Z3, 17 to 29 as the second table), and likewise f1 (1, 4, ..., 31, then 34 to 46).
DATA ·estIdx+0(SB)/4, $0
DATA ·estIdx+4(SB)/4, $3
DATA ·estIdx+8(SB)/4, $6
DATA ·estIdx+12(SB)/4, $9
DATA ·estIdx+16(SB)/4, $12
DATA ·estIdx+20(SB)/4, $15
DATA ·estIdx+24(SB)/4, $18
DATA ·estIdx+28(SB)/4, $21
DATA ·estIdx+32(SB)/4, $24
DATA ·estIdx+36(SB)/4, $27
DATA ·estIdx+40(SB)/4, $30
DATA ·estIdx+44(SB)/4, $0
DATA ·estIdx+48(SB)/4, $0
DATA ·estIdx+52(SB)/4, $0
DATA ·estIdx+56(SB)/4, $0
DATA ·estIdx+60(SB)/4, $0
DATA ·estIdx+64(SB)/4, $0
DATA ·estIdx+68(SB)/4, $1
DATA ·estIdx+72(SB)/4, $2
DATA ·estIdx+76(SB)/4, $3
DATA ·estIdx+80(SB)/4, $4
DATA ·estIdx+84(SB)/4, $5
DATA ·estIdx+88(SB)/4, $6
DATA ·estIdx+92(SB)/4, $7
DATA ·estIdx+96(SB)/4, $8
DATA ·estIdx+100(SB)/4, $9
DATA ·estIdx+104(SB)/4, $10
DATA ·estIdx+108(SB)/4, $17
DATA ·estIdx+112(SB)/4, $20
DATA ·estIdx+116(SB)/4, $23
DATA ·estIdx+120(SB)/4, $26
DATA ·estIdx+124(SB)/4, $29
DATA ·estIdx+128(SB)/4, $1
DATA ·estIdx+132(SB)/4, $4
DATA ·estIdx+136(SB)/4, $7
DATA ·estIdx+140(SB)/4, $10
DATA ·estIdx+144(SB)/4, $13
DATA ·estIdx+148(SB)/4, $16
DATA ·estIdx+152(SB)/4, $19
DATA ·estIdx+156(SB)/4, $22
DATA ·estIdx+160(SB)/4, $25
DATA ·estIdx+164(SB)/4, $28
DATA ·estIdx+168(SB)/4, $31
DATA ·estIdx+172(SB)/4, $0
DATA ·estIdx+176(SB)/4, $0
DATA ·estIdx+180(SB)/4, $0
DATA ·estIdx+184(SB)/4, $0
DATA ·estIdx+188(SB)/4, $0
DATA ·estIdx+192(SB)/4, $0
DATA ·estIdx+196(SB)/4, $1
DATA ·estIdx+200(SB)/4, $2
DATA ·estIdx+204(SB)/4, $3
DATA ·estIdx+208(SB)/4, $4
DATA ·estIdx+212(SB)/4, $5
DATA ·estIdx+216(SB)/4, $6
DATA ·estIdx+220(SB)/4, $7
DATA ·estIdx+224(SB)/4, $8
DATA ·estIdx+228(SB)/4, $9
DATA ·estIdx+232(SB)/4, $10
DATA ·estIdx+236(SB)/4, $18
DATA ·estIdx+240(SB)/4, $21
DATA ·estIdx+244(SB)/4, $24
DATA ·estIdx+248(SB)/4, $27
DATA ·estIdx+252(SB)/4, $30
GLOBL ·estIdx(SB), RODATA|NOPTR, $256

// func estimatesAVX512(t *int32, factors *float32, n int, k *estConsts, est *float32, mask *uint16)
//
// Sixteen codes at a time: their sums converted to floats, plus shift, times dl (Z0); their
// scales and biases taken out of the interleaved factors (Z4, Z5); est = (cq + f1) + f0*Z0,
// each operation rounded as estimatesGeneric rounds it; compared with the floor into a mask.
TEXT ·estimatesAVX512(SB), NOSPLIT, $0-48
	MOVQ t+0(FP), SI
	MOVQ factors+8(FP), DX
	MOVQ n+16(FP), CX
	MOVQ k+24(FP), R8
	MOVQ est+32(FP), DI
	MOVQ mask+40(FP), R9
	VBROADCASTSS 0(R8), Z10  // shift
	VBROADCASTSS 4(R8), Z11  // dl
	VBROADCASTSS 8(R8), Z12  // cq
	VBROADCASTSS 12(R8), Z13 // floor
	LEAQ         ·estIdx(SB), AX
	VMOVDQU32    0(AX), Z20
	VMOVDQU32    64(AX), Z21
	VMOVDQU32    128(AX), Z22
	VMOVDQU32    192(AX), Z23

loop:
	TESTQ     CX, CX
	JZ        done
	VMOVDQU32 (SI), Z0
	VCVTDQ2PS Z0, Z0
	VADDPS    Z10, Z0, Z0
	VMULPS    Z11, Z0, Z0
	VMOVUPS   0(DX), Z1
	VMOVUPS   64(DX), Z2
	VMOVUPS   128(DX), Z3
	VMOVAPS   Z1, Z4
	VPERMT2PS Z2, Z20, Z4
	VPERMT2PS Z3, Z21, Z4
	VMOVAPS   Z1, Z5
	VPERMT2PS Z2, Z22, Z5
	VPERMT2PS Z3, Z23, Z5
	VADDPS    Z5, Z12, Z5
	VMULPS    Z0, Z4, Z4
	VADDPS    Z4, Z5, Z5
	VMOVUPS   Z5, (DI)
	VCMPPS    $0x1e, Z13, Z5, K1
	KMOVW     K1, AX
	MOVW      AX, (R9)
	ADDQ      $64, SI
	ADDQ      $192, DX
	ADDQ      $64, DI
	ADDQ      $2, R9
	SUBQ      $16, CX
	JMP       loop

done:
	VZEROUPPER
	RET
