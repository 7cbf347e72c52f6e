//go:build amd64 && !purego

#include "textflag.h"

// func prefetchLines(b []byte)
TEXT ·prefetchLines(SB), NOSPLIT, $0-24
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), CX
	TESTQ CX, CX
	JEQ done
	LEAQ (SI)(CX*1), DX
loop:
	PREFETCHT0 (SI)
	ADDQ $64, SI
	CMPQ SI, DX
	JB loop
	PREFETCHT0 -1(DX) // the last byte's line, when b does not start a line
done:
	RET
