//go:build amd64 && !purego

#include "textflag.h"

// Four equal lanes per constant.
DATA gate_one<>+0(SB)/4, $0x3f800000
DATA gate_one<>+4(SB)/4, $0x3f800000
DATA gate_one<>+8(SB)/4, $0x3f800000
DATA gate_one<>+12(SB)/4, $0x3f800000
GLOBL gate_one<>(SB), RODATA|NOPTR, $16
DATA gate_two<>+0(SB)/4, $0x40000000
DATA gate_two<>+4(SB)/4, $0x40000000
DATA gate_two<>+8(SB)/4, $0x40000000
DATA gate_two<>+12(SB)/4, $0x40000000
GLOBL gate_two<>(SB), RODATA|NOPTR, $16
DATA gate_nine<>+0(SB)/4, $0x41100000
DATA gate_nine<>+4(SB)/4, $0x41100000
DATA gate_nine<>+8(SB)/4, $0x41100000
DATA gate_nine<>+12(SB)/4, $0x41100000
GLOBL gate_nine<>(SB), RODATA|NOPTR, $16
DATA gate_small<>+0(SB)/4, $0x3d800000
DATA gate_small<>+4(SB)/4, $0x3d800000
DATA gate_small<>+8(SB)/4, $0x3d800000
DATA gate_small<>+12(SB)/4, $0x3d800000
GLOBL gate_small<>(SB), RODATA|NOPTR, $16
DATA gate_third<>+0(SB)/4, $0xbeaaaaab
DATA gate_third<>+4(SB)/4, $0xbeaaaaab
DATA gate_third<>+8(SB)/4, $0xbeaaaaab
DATA gate_third<>+12(SB)/4, $0xbeaaaaab
GLOBL gate_third<>(SB), RODATA|NOPTR, $16
DATA gate_c2<>+0(SB)/4, $0x3e088889
DATA gate_c2<>+4(SB)/4, $0x3e088889
DATA gate_c2<>+8(SB)/4, $0x3e088889
DATA gate_c2<>+12(SB)/4, $0x3e088889
GLOBL gate_c2<>(SB), RODATA|NOPTR, $16
DATA gate_c3<>+0(SB)/4, $0xbd5d0dd1
DATA gate_c3<>+4(SB)/4, $0xbd5d0dd1
DATA gate_c3<>+8(SB)/4, $0xbd5d0dd1
DATA gate_c3<>+12(SB)/4, $0xbd5d0dd1
GLOBL gate_c3<>(SB), RODATA|NOPTR, $16
DATA gate_abs<>+0(SB)/4, $0x7fffffff
DATA gate_abs<>+4(SB)/4, $0x7fffffff
DATA gate_abs<>+8(SB)/4, $0x7fffffff
DATA gate_abs<>+12(SB)/4, $0x7fffffff
GLOBL gate_abs<>(SB), RODATA|NOPTR, $16
DATA gate_sign<>+0(SB)/4, $0x80000000
DATA gate_sign<>+4(SB)/4, $0x80000000
DATA gate_sign<>+8(SB)/4, $0x80000000
DATA gate_sign<>+12(SB)/4, $0x80000000
GLOBL gate_sign<>(SB), RODATA|NOPTR, $16

// func sigmoidFromExp4(dst, x, e []float32)
// dst[i] = sigmoidFromExp(x[i], e[i]) for len(dst) a multiple of 4:
// 1/(1+e) where x ≥ 0, e/(1+e) elsewhere (NaN included), as the scalar
// code computes them (IEEE division, no fused operations).
TEXT ·sigmoidFromExp4(SB), NOSPLIT, $0-72
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	MOVQ e_base+48(FP), DX
	SHRQ $2, CX
	JZ   sdone
	MOVUPS gate_one<>(SB), X8
	XORPS  X9, X9         // 0

sloop:
	MOVUPS (SI), X0       // x
	MOVUPS (DX), X1       // e
	MOVUPS X9, X2
	CMPPS  X0, X2, $2     // 0 ≤ x
	MOVUPS X8, X3
	ADDPS  X1, X3         // 1 + e
	MOVUPS X8, X4
	ANDPS  X2, X4         // 1 where x ≥ 0
	ANDNPS X1, X2         // e elsewhere
	ORPS   X4, X2
	DIVPS  X3, X2
	MOVUPS X2, (DI)
	ADDQ   $16, SI
	ADDQ   $16, DX
	ADDQ   $16, DI
	DECQ   CX
	JNZ    sloop

sdone:
	RET

// func tanhFromExp4(dst, x, e []float32)
// dst[i] = tanhFromExp(x[i], e[i]) for len(dst) a multiple of 4: the odd
// polynomial where |x| < 0.0625, ±1 where |x| > 9, 1 − 2/(e+1) with x's
// sign elsewhere, each with the scalar code's operations in its order.
TEXT ·tanhFromExp4(SB), NOSPLIT, $0-72
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	MOVQ e_base+48(FP), DX
	SHRQ $2, CX
	JZ   tdone
	MOVUPS gate_one<>(SB), X8
	MOVUPS gate_two<>(SB), X9
	MOVUPS gate_nine<>(SB), X10
	MOVUPS gate_small<>(SB), X11
	MOVUPS gate_abs<>(SB), X12
	MOVUPS gate_sign<>(SB), X13
	XORPS  X14, X14       // 0

tloop:
	MOVUPS (SI), X0       // x
	MOVUPS (DX), X1       // e
	// general: t = 1 − 2/(e+1), negated where x < 0
	ADDPS  X8, X1         // e + 1
	MOVUPS X9, X2
	DIVPS  X1, X2         // 2/(e+1)
	MOVUPS X8, X3
	SUBPS  X2, X3         // t
	MOVUPS X0, X4
	CMPPS  X14, X4, $1    // x < 0
	ANDPS  X13, X4
	XORPS  X4, X3         // −t where x < 0
	// large: |x| > 9 gives 1 where x > 0, −1 elsewhere
	MOVUPS X0, X5
	ANDPS  X12, X5        // |x|
	MOVUPS X10, X6
	CMPPS  X5, X6, $1     // 9 < |x|
	MOVUPS X14, X7
	CMPPS  X0, X7, $1     // 0 < x
	ANDNPS X13, X7        // sign bit where not x > 0
	ORPS   X8, X7         // ±1
	ANDPS  X6, X7
	ANDNPS X3, X6         // general where not large
	ORPS   X7, X6         // X6 = large ? ±1 : general
	// small: |x| < 0.0625 gives x·(1 + x²·(−1/3 + x²·(2/15 + x²·(−17/315))))
	CMPPS  X11, X5, $1    // |x| < 0.0625
	MOVUPS X0, X1
	MULPS  X0, X1         // x²
	MOVUPS gate_c3<>(SB), X2
	MULPS  X1, X2
	MOVUPS gate_c2<>(SB), X3
	ADDPS  X3, X2
	MULPS  X1, X2
	MOVUPS gate_third<>(SB), X3
	ADDPS  X3, X2
	MULPS  X1, X2
	ADDPS  X8, X2
	MULPS  X0, X2         // x·(…)
	ANDPS  X5, X2
	ANDNPS X6, X5
	ORPS   X2, X5
	MOVUPS X5, (DI)
	ADDQ   $16, SI
	ADDQ   $16, DX
	ADDQ   $16, DI
	DECQ   CX
	JNZ    tloop

tdone:
	RET
