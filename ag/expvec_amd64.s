//go:build amd64 && !purego

#include "textflag.h"

// Each constant is four equal float32 (or int32) lanes.
DATA exp_hi<>+0(SB)/4, $0x42b0c0a5
DATA exp_hi<>+4(SB)/4, $0x42b0c0a5
DATA exp_hi<>+8(SB)/4, $0x42b0c0a5
DATA exp_hi<>+12(SB)/4, $0x42b0c0a5
GLOBL exp_hi<>(SB), RODATA|NOPTR, $16
DATA exp_lo<>+0(SB)/4, $0xc2aeac50
DATA exp_lo<>+4(SB)/4, $0xc2aeac50
DATA exp_lo<>+8(SB)/4, $0xc2aeac50
DATA exp_lo<>+12(SB)/4, $0xc2aeac50
GLOBL exp_lo<>(SB), RODATA|NOPTR, $16
DATA exp_log2e<>+0(SB)/4, $0x3fb8aa3b
DATA exp_log2e<>+4(SB)/4, $0x3fb8aa3b
DATA exp_log2e<>+8(SB)/4, $0x3fb8aa3b
DATA exp_log2e<>+12(SB)/4, $0x3fb8aa3b
GLOBL exp_log2e<>(SB), RODATA|NOPTR, $16
DATA exp_half<>+0(SB)/4, $0x3f000000
DATA exp_half<>+4(SB)/4, $0x3f000000
DATA exp_half<>+8(SB)/4, $0x3f000000
DATA exp_half<>+12(SB)/4, $0x3f000000
GLOBL exp_half<>(SB), RODATA|NOPTR, $16
DATA exp_one<>+0(SB)/4, $0x3f800000
DATA exp_one<>+4(SB)/4, $0x3f800000
DATA exp_one<>+8(SB)/4, $0x3f800000
DATA exp_one<>+12(SB)/4, $0x3f800000
GLOBL exp_one<>(SB), RODATA|NOPTR, $16
DATA exp_ln2hi<>+0(SB)/4, $0x3f318000
DATA exp_ln2hi<>+4(SB)/4, $0x3f318000
DATA exp_ln2hi<>+8(SB)/4, $0x3f318000
DATA exp_ln2hi<>+12(SB)/4, $0x3f318000
GLOBL exp_ln2hi<>(SB), RODATA|NOPTR, $16
DATA exp_ln2lo<>+0(SB)/4, $0xb95e8083
DATA exp_ln2lo<>+4(SB)/4, $0xb95e8083
DATA exp_ln2lo<>+8(SB)/4, $0xb95e8083
DATA exp_ln2lo<>+12(SB)/4, $0xb95e8083
GLOBL exp_ln2lo<>(SB), RODATA|NOPTR, $16
DATA exp_p0<>+0(SB)/4, $0x39506967
DATA exp_p0<>+4(SB)/4, $0x39506967
DATA exp_p0<>+8(SB)/4, $0x39506967
DATA exp_p0<>+12(SB)/4, $0x39506967
GLOBL exp_p0<>(SB), RODATA|NOPTR, $16
DATA exp_p1<>+0(SB)/4, $0x3ab743ce
DATA exp_p1<>+4(SB)/4, $0x3ab743ce
DATA exp_p1<>+8(SB)/4, $0x3ab743ce
DATA exp_p1<>+12(SB)/4, $0x3ab743ce
GLOBL exp_p1<>(SB), RODATA|NOPTR, $16
DATA exp_p2<>+0(SB)/4, $0x3c088908
DATA exp_p2<>+4(SB)/4, $0x3c088908
DATA exp_p2<>+8(SB)/4, $0x3c088908
DATA exp_p2<>+12(SB)/4, $0x3c088908
GLOBL exp_p2<>(SB), RODATA|NOPTR, $16
DATA exp_p3<>+0(SB)/4, $0x3d2aa9c1
DATA exp_p3<>+4(SB)/4, $0x3d2aa9c1
DATA exp_p3<>+8(SB)/4, $0x3d2aa9c1
DATA exp_p3<>+12(SB)/4, $0x3d2aa9c1
GLOBL exp_p3<>(SB), RODATA|NOPTR, $16
DATA exp_p4<>+0(SB)/4, $0x3e2aaaaa
DATA exp_p4<>+4(SB)/4, $0x3e2aaaaa
DATA exp_p4<>+8(SB)/4, $0x3e2aaaaa
DATA exp_p4<>+12(SB)/4, $0x3e2aaaaa
GLOBL exp_p4<>(SB), RODATA|NOPTR, $16
DATA exp_inf<>+0(SB)/4, $0x7f800000
DATA exp_inf<>+4(SB)/4, $0x7f800000
DATA exp_inf<>+8(SB)/4, $0x7f800000
DATA exp_inf<>+12(SB)/4, $0x7f800000
GLOBL exp_inf<>(SB), RODATA|NOPTR, $16
DATA exp_bias<>+0(SB)/4, $0x0000007f
DATA exp_bias<>+4(SB)/4, $0x0000007f
DATA exp_bias<>+8(SB)/4, $0x0000007f
DATA exp_bias<>+12(SB)/4, $0x0000007f
GLOBL exp_bias<>(SB), RODATA|NOPTR, $16

// func expVec4(x []float32)
// Replaces x[i] by expf(x[i]) four lanes at a time (len(x) a multiple of
// 4), with exactly the float32 operations of expf in the same order and no
// fused multiply-add, so every lane equals the scalar result bit for bit.
TEXT ·expVec4(SB), NOSPLIT, $0-24
	MOVQ x_base+0(FP), SI
	MOVQ x_len+8(FP), CX
	SHRQ $2, CX
	JZ   done
	MOVUPS exp_hi<>(SB), X8
	MOVUPS exp_lo<>(SB), X9
	MOVUPS exp_log2e<>(SB), X10
	MOVUPS exp_half<>(SB), X11
	MOVUPS exp_one<>(SB), X12
	MOVUPS exp_ln2hi<>(SB), X13
	MOVUPS exp_ln2lo<>(SB), X14
	MOVUPS exp_inf<>(SB), X15

loop:
	MOVUPS (SI), X0       // v
	MOVUPS X8, X1
	CMPPS  X0, X1, $1     // X1 = hi < v: overflow lanes
	MOVUPS X0, X2
	CMPPS  X9, X2, $1     // X2 = v < lo: underflow lanes
	MOVUPS X0, X3
	MULPS  X10, X3
	ADDPS  X11, X3        // t = v·log2e + 0.5
	CVTTPS2PL X3, X4      // trunc(t)
	CVTPL2PS  X4, X5
	MOVUPS X3, X6
	CMPPS  X5, X6, $1     // t < trunc(t): a negative non-integer
	PADDL  X6, X4         // n = floor(t) as int32 (the mask is −1)
	ANDPS  X12, X6
	SUBPS  X6, X5         // n as float32
	MOVUPS X5, X6
	MULPS  X13, X6
	SUBPS  X6, X0         // v − n·ln2hi
	MOVUPS X5, X6
	MULPS  X14, X6
	SUBPS  X6, X0         // r = v − n·ln2hi − n·ln2lo
	MOVUPS exp_p0<>(SB), X6
	MULPS  X0, X6
	MOVUPS exp_p1<>(SB), X7
	ADDPS  X7, X6
	MULPS  X0, X6
	MOVUPS exp_p2<>(SB), X7
	ADDPS  X7, X6
	MULPS  X0, X6
	MOVUPS exp_p3<>(SB), X7
	ADDPS  X7, X6
	MULPS  X0, X6
	MOVUPS exp_p4<>(SB), X7
	ADDPS  X7, X6
	MULPS  X0, X6
	ADDPS  X11, X6        // p (the last coefficient rounds to 0.5)
	MULPS  X0, X6
	MULPS  X0, X6
	ADDPS  X0, X6
	ADDPS  X12, X6        // y = p·r·r + r + 1
	MOVUPS exp_bias<>(SB), X7
	PADDL  X7, X4
	PSLLL  $23, X4        // 2^n
	MULPS  X4, X6
	MOVUPS X1, X7
	ANDNPS X6, X7         // y where not overflow
	ANDPS  X15, X1        // +Inf where overflow
	ORPS   X1, X7
	ANDNPS X7, X2         // 0 where underflow
	MOVUPS X2, (SI)
	ADDQ   $16, SI
	DECQ   CX
	JNZ    loop

done:
	RET
