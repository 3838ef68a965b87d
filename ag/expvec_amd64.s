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

// func hasAVX2() bool
// CPUID says AVX and AVX2 are there and XGETBV that the OS saves the YMM
// registers.
TEXT ·hasAVX2(SB), NOSPLIT, $0-1
	MOVL $1, AX
	XORL CX, CX
	CPUID
	ANDL $0x18000000, CX // OSXSAVE (27) and AVX (28)
	CMPL CX, $0x18000000
	JNE  no
	XORL CX, CX
	XGETBV
	ANDL $6, AX          // XMM and YMM state
	CMPL AX, $6
	JNE  no
	MOVL $7, AX
	XORL CX, CX
	CPUID
	BTL  $5, BX          // AVX2
	JCC  no
	MOVB $1, ret+0(FP)
	RET

no:
	MOVB $0, ret+0(FP)
	RET

// func expVec8(x []float32)
// expVec4 eight lanes at a time (len(x) a multiple of 8) with AVX2: the
// same float32 operations in the same order, no fused multiply-add.
TEXT ·expVec8(SB), NOSPLIT, $0-24
	MOVQ x_base+0(FP), SI
	MOVQ x_len+8(FP), CX
	SHRQ $3, CX
	JZ   done8
	VBROADCASTSS exp_hi<>(SB), Y8
	VBROADCASTSS exp_lo<>(SB), Y9
	VBROADCASTSS exp_log2e<>(SB), Y10
	VBROADCASTSS exp_half<>(SB), Y11
	VBROADCASTSS exp_one<>(SB), Y12
	VBROADCASTSS exp_ln2hi<>(SB), Y13
	VBROADCASTSS exp_ln2lo<>(SB), Y14
	VBROADCASTSS exp_inf<>(SB), Y15

loop8:
	VMOVUPS (SI), Y0            // v
	VCMPPS  $1, Y0, Y8, Y1      // hi < v: overflow lanes
	VCMPPS  $1, Y9, Y0, Y2      // v < lo: underflow lanes
	VMULPS  Y10, Y0, Y3
	VADDPS  Y11, Y3, Y3         // t = v·log2e + 0.5
	VROUNDPS $1, Y3, Y5         // floor(t)
	VCVTTPS2DQ Y5, Y4           // as int32
	VMULPS  Y13, Y5, Y6
	VSUBPS  Y6, Y0, Y0          // v − n·ln2hi
	VMULPS  Y14, Y5, Y6
	VSUBPS  Y6, Y0, Y0          // r
	VBROADCASTSS exp_p0<>(SB), Y6
	VMULPS  Y0, Y6, Y6
	VBROADCASTSS exp_p1<>(SB), Y7
	VADDPS  Y7, Y6, Y6
	VMULPS  Y0, Y6, Y6
	VBROADCASTSS exp_p2<>(SB), Y7
	VADDPS  Y7, Y6, Y6
	VMULPS  Y0, Y6, Y6
	VBROADCASTSS exp_p3<>(SB), Y7
	VADDPS  Y7, Y6, Y6
	VMULPS  Y0, Y6, Y6
	VBROADCASTSS exp_p4<>(SB), Y7
	VADDPS  Y7, Y6, Y6
	VMULPS  Y0, Y6, Y6
	VADDPS  Y11, Y6, Y6         // p
	VMULPS  Y0, Y6, Y6
	VMULPS  Y0, Y6, Y6
	VADDPS  Y0, Y6, Y6
	VADDPS  Y12, Y6, Y6         // y = p·r·r + r + 1
	VPBROADCASTD exp_bias<>(SB), Y7
	VPADDD  Y7, Y4, Y4
	VPSLLD  $23, Y4, Y4         // 2^n
	VMULPS  Y4, Y6, Y6
	VANDNPS Y6, Y1, Y7          // y where not overflow
	VANDPS  Y15, Y1, Y1         // +Inf where overflow
	VORPS   Y1, Y7, Y7
	VANDNPS Y7, Y2, Y7          // 0 where underflow
	VMOVUPS Y7, (SI)
	ADDQ    $32, SI
	DECQ    CX
	JNZ     loop8
	VZEROUPPER

done8:
	RET
