//go:build amd64 && !purego

#include "textflag.h"

// GROUP unpacks the group of eight values at SI into Y0 by the control in Y15 (shuffle), Y14
// (shifts) and Y13 (mask), R9 the byte of its fifth value: the two lanes of 16 bytes are
// loaded on their own, each 32-bit lane gets the four bytes from its value's first, which a
// shift and a mask reduce to the value.
#define GROUP \
	VMOVDQU     (SI), X0            \
	VINSERTI128 $1, (SI)(R9*1), Y0, Y0 \
	VPSHUFB     Y15, Y0, Y0         \
	VPSRLVD     Y14, Y0, Y0         \
	VPAND       Y13, Y0, Y0

// ARGS loads the kernels' first four arguments into SI, CX, R8 and DI, and the control at
// R8 (unpackCtl) into Y15, Y14, Y13, R9 and R10.
#define ARGS \
	MOVQ         src+0(FP), SI    \
	MOVQ         groups+8(FP), CX \
	MOVQ         ctl+16(FP), R8   \
	MOVQ         dst+24(FP), DI   \
	VMOVDQU      0(R8), Y15       \
	VMOVDQU      32(R8), Y14      \
	VPBROADCASTD 64(R8), Y13      \
	MOVQ         72(R8), R9       \
	MOVQ         80(R8), R10

// func unpackOrdsAVX2(src *byte, groups int, ctl *unpackCtl, dst *uint32, carry uint32) uint32
//
// Each group's values plus one are summed in place (two shifts within each lane of four,
// then the first lane's total added to the second) and added to the carry, the ordinal
// before the group, which then becomes the group's last.
TEXT ·unpackOrdsAVX2(SB), NOSPLIT, $0-44
	ARGS
	MOVL         carry+32(FP), AX
	VMOVD         AX, X11
	VPBROADCASTD X11, Y11
	MOVL         $1, AX
	VMOVD         AX, X12
	VPBROADCASTD X12, Y12
	MOVL         $3, AX
	VMOVD         AX, X9
	VPBROADCASTD X9, Y9
	MOVL         $7, AX
	VMOVD         AX, X8
	VPBROADCASTD X8, Y8
	VPXOR        Y10, Y10, Y10

ords:
	TESTQ   CX, CX
	JZ      ordsdone
	GROUP
	VPADDD  Y12, Y0, Y0
	VPSLLDQ $4, Y0, Y1
	VPADDD  Y1, Y0, Y0
	VPSLLDQ $8, Y0, Y1
	VPADDD  Y1, Y0, Y0
	VPERMD  Y0, Y9, Y1
	VPBLENDD $0x0f, Y10, Y1, Y1
	VPADDD  Y1, Y0, Y0
	VPADDD  Y11, Y0, Y0
	VMOVDQU Y0, (DI)
	VPERMD  Y0, Y8, Y11
	ADDQ    R10, SI
	ADDQ    $32, DI
	DECQ    CX
	JMP     ords

ordsdone:
	VMOVD      X11, AX
	MOVL       AX, ret+40(FP)
	VZEROUPPER
	RET

// func unpackAddAVX2(src *byte, groups int, ctl *unpackCtl, dst *uint32, add uint32)
TEXT ·unpackAddAVX2(SB), NOSPLIT, $0-36
	ARGS
	MOVL         add+32(FP), AX
	VMOVD         AX, X12
	VPBROADCASTD X12, Y12

add:
	TESTQ   CX, CX
	JZ      adddone
	GROUP
	VPADDD  Y12, Y0, Y0
	VMOVDQU Y0, (DI)
	ADDQ    R10, SI
	ADDQ    $32, DI
	DECQ    CX
	JMP     add

adddone:
	VZEROUPPER
	RET
