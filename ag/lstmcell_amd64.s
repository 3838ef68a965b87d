//go:build amd64 && !purego

#include "textflag.h"

// One float32 per constant, broadcast to eight lanes where used.
DATA lc_hi<>+0(SB)/4, $0x42b0c0a5
GLOBL lc_hi<>(SB), RODATA|NOPTR, $4
DATA lc_lo<>+0(SB)/4, $0xc2aeac50
GLOBL lc_lo<>(SB), RODATA|NOPTR, $4
DATA lc_log2e<>+0(SB)/4, $0x3fb8aa3b
GLOBL lc_log2e<>(SB), RODATA|NOPTR, $4
DATA lc_half<>+0(SB)/4, $0x3f000000
GLOBL lc_half<>(SB), RODATA|NOPTR, $4
DATA lc_one<>+0(SB)/4, $0x3f800000
GLOBL lc_one<>(SB), RODATA|NOPTR, $4
DATA lc_ln2hi<>+0(SB)/4, $0x3f318000
GLOBL lc_ln2hi<>(SB), RODATA|NOPTR, $4
DATA lc_ln2lo<>+0(SB)/4, $0xb95e8083
GLOBL lc_ln2lo<>(SB), RODATA|NOPTR, $4
DATA lc_inf<>+0(SB)/4, $0x7f800000
GLOBL lc_inf<>(SB), RODATA|NOPTR, $4
DATA lc_p0<>+0(SB)/4, $0x39506967
GLOBL lc_p0<>(SB), RODATA|NOPTR, $4
DATA lc_p1<>+0(SB)/4, $0x3ab743ce
GLOBL lc_p1<>(SB), RODATA|NOPTR, $4
DATA lc_p2<>+0(SB)/4, $0x3c088908
GLOBL lc_p2<>(SB), RODATA|NOPTR, $4
DATA lc_p3<>+0(SB)/4, $0x3d2aa9c1
GLOBL lc_p3<>(SB), RODATA|NOPTR, $4
DATA lc_p4<>+0(SB)/4, $0x3e2aaaaa
GLOBL lc_p4<>(SB), RODATA|NOPTR, $4
DATA lc_bias<>+0(SB)/4, $0x0000007f
GLOBL lc_bias<>(SB), RODATA|NOPTR, $4
DATA lc_two<>+0(SB)/4, $0x40000000
GLOBL lc_two<>(SB), RODATA|NOPTR, $4
DATA lc_nine<>+0(SB)/4, $0x41100000
GLOBL lc_nine<>(SB), RODATA|NOPTR, $4
DATA lc_small<>+0(SB)/4, $0x3d800000
GLOBL lc_small<>(SB), RODATA|NOPTR, $4
DATA lc_third<>+0(SB)/4, $0xbeaaaaab
GLOBL lc_third<>(SB), RODATA|NOPTR, $4
DATA lc_c2<>+0(SB)/4, $0x3e088889
GLOBL lc_c2<>(SB), RODATA|NOPTR, $4
DATA lc_c3<>+0(SB)/4, $0xbd5d0dd1
GLOBL lc_c3<>(SB), RODATA|NOPTR, $4
DATA lc_abs<>+0(SB)/4, $0x7fffffff
GLOBL lc_abs<>(SB), RODATA|NOPTR, $4
DATA lc_sign<>+0(SB)/4, $0x80000000
GLOBL lc_sign<>(SB), RODATA|NOPTR, $4

// EXP replaces Y0 by expf(Y0) in every lane: expVec8's operations in its
// order (no fused multiply-add). Clobbers Y1–Y7; Y8–Y15 hold hi, lo,
// log2e, ½, 1, ln2hi, ln2lo and +Inf.
#define EXP \
	VCMPPS  $1, Y0, Y8, Y1; \
	VCMPPS  $1, Y9, Y0, Y2; \
	VMULPS  Y10, Y0, Y3; \
	VADDPS  Y11, Y3, Y3; \
	VROUNDPS $1, Y3, Y5; \
	VCVTTPS2DQ Y5, Y4; \
	VMULPS  Y13, Y5, Y6; \
	VSUBPS  Y6, Y0, Y0; \
	VMULPS  Y14, Y5, Y6; \
	VSUBPS  Y6, Y0, Y0; \
	VBROADCASTSS lc_p0<>(SB), Y6; \
	VMULPS  Y0, Y6, Y6; \
	VBROADCASTSS lc_p1<>(SB), Y7; \
	VADDPS  Y7, Y6, Y6; \
	VMULPS  Y0, Y6, Y6; \
	VBROADCASTSS lc_p2<>(SB), Y7; \
	VADDPS  Y7, Y6, Y6; \
	VMULPS  Y0, Y6, Y6; \
	VBROADCASTSS lc_p3<>(SB), Y7; \
	VADDPS  Y7, Y6, Y6; \
	VMULPS  Y0, Y6, Y6; \
	VBROADCASTSS lc_p4<>(SB), Y7; \
	VADDPS  Y7, Y6, Y6; \
	VMULPS  Y0, Y6, Y6; \
	VADDPS  Y11, Y6, Y6; \
	VMULPS  Y0, Y6, Y6; \
	VMULPS  Y0, Y6, Y6; \
	VADDPS  Y0, Y6, Y6; \
	VADDPS  Y12, Y6, Y6; \
	VPBROADCASTD lc_bias<>(SB), Y7; \
	VPADDD  Y7, Y4, Y4; \
	VPSLLD  $23, Y4, Y4; \
	VMULPS  Y4, Y6, Y6; \
	VANDNPS Y6, Y1, Y7; \
	VANDPS  Y15, Y1, Y1; \
	VORPS   Y1, Y7, Y7; \
	VANDNPS Y7, Y2, Y0

// SIGMOID sets Y2 = sigmoidFromExp(Y1, Y0) (x in Y1, e = expf(−|x|) in
// Y0): 1/(1+e) where 0 ≤ x, e/(1+e) elsewhere. Clobbers Y3, Y4.
#define SIGMOID \
	VXORPS  Y2, Y2, Y2; \
	VCMPPS  $2, Y1, Y2, Y2; \
	VADDPS  Y12, Y0, Y3; \
	VANDPS  Y12, Y2, Y4; \
	VANDNPS Y0, Y2, Y2; \
	VORPS   Y4, Y2, Y2; \
	VDIVPS  Y3, Y2, Y2

// TANH sets Y5 = tanhFromExp(Y1, Y0) (x in Y1, e = expf(2|x|) in Y0): the
// odd polynomial where |x| < 0.0625, ±1 where |x| > 9, 1 − 2/(e+1) with
// x's sign elsewhere, as tanhFromExp4 computes them. Clobbers Y0, Y2–Y7.
#define TANH \
	VADDPS  Y12, Y0, Y0; \
	VBROADCASTSS lc_two<>(SB), Y2; \
	VDIVPS  Y0, Y2, Y2; \
	VSUBPS  Y2, Y12, Y3; \
	VXORPS  Y7, Y7, Y7; \
	VCMPPS  $1, Y7, Y1, Y4; \
	VBROADCASTSS lc_sign<>(SB), Y6; \
	VANDPS  Y6, Y4, Y4; \
	VXORPS  Y4, Y3, Y3; \
	VBROADCASTSS lc_abs<>(SB), Y5; \
	VANDPS  Y5, Y1, Y5; \
	VCMPPS  $1, Y1, Y7, Y7; \
	VANDNPS Y6, Y7, Y7; \
	VORPS   Y12, Y7, Y7; \
	VBROADCASTSS lc_nine<>(SB), Y6; \
	VCMPPS  $1, Y5, Y6, Y6; \
	VANDPS  Y6, Y7, Y7; \
	VANDNPS Y3, Y6, Y6; \
	VORPS   Y7, Y6, Y6; \
	VBROADCASTSS lc_small<>(SB), Y2; \
	VCMPPS  $1, Y2, Y5, Y5; \
	VMULPS  Y1, Y1, Y0; \
	VBROADCASTSS lc_c3<>(SB), Y2; \
	VMULPS  Y0, Y2, Y2; \
	VBROADCASTSS lc_c2<>(SB), Y3; \
	VADDPS  Y3, Y2, Y2; \
	VMULPS  Y0, Y2, Y2; \
	VBROADCASTSS lc_third<>(SB), Y3; \
	VADDPS  Y3, Y2, Y2; \
	VMULPS  Y0, Y2, Y2; \
	VADDPS  Y12, Y2, Y2; \
	VMULPS  Y1, Y2, Y2; \
	VANDPS  Y5, Y2, Y2; \
	VANDNPS Y6, Y5, Y5; \
	VORPS   Y2, Y5, Y5

// PREACT loads gate block OFF of unit block k into Y0, adds add's and
// bias's lanes (when BX is nonzero) and stores the sum back into z.
#define PREACT(OFF) \
	VMOVUPS (DI)(OFF*1), Y0; \
	TESTQ   BX, BX; \
	JZ      3(PC); \
	VADDPS  (SI)(OFF*1), Y0, Y0; \
	VADDPS  (DX)(OFF*1), Y0, Y0; \
	VMOVUPS Y0, (DI)(OFF*1)

// GATE turns gate block OFF of unit block k into its sigmoid.
#define GATE(OFF) \
	PREACT(OFF); \
	VBROADCASTSS lc_sign<>(SB), Y1; \
	VORPS   Y1, Y0, Y0; \
	EXP; \
	VMOVUPS (DI)(OFF*1), Y1; \
	SIGMOID; \
	VMOVUPS Y2, (DI)(OFF*1)

// LSTMBACK is one block of the cell's backward pass, in Y (8 lanes) or Z
// (16 lanes) registers named by its arguments. The operations, per unit k, in the scalar loop's order (no fused
// multiply-add):
//   dhk = dh[k] + gOut[k]
//   dck = dc[k] + dhk·og·(1 − tc²)
//   dg_i = dck·gg·ig·(1 − ig), dg_f = dck·cPrev·fg·(1 − fg)
//   dg_g = dck·ig·(1 − gg²), dg_o = dhk·tc·og·(1 − og), dc[k] = dck·fg
// Registers: DI gates, SI dGates, DX dh, R8 dc, R9 gOut, R10 tanh(c),
// R11 cPrev, R12 a gate block in bytes, R13 three blocks, AX the unit
// block's byte offset, BX scratch; the constant 1 in register ONE.
#define LSTMBACK(I, F, G, O, DHK, TC, T1, DCK, A, B, ONE) \
	VMOVUPS (DI)(AX*1), I; \
	LEAQ    (AX)(R12*1), BX; \
	VMOVUPS (DI)(BX*1), F; \
	LEAQ    (AX)(R12*2), BX; \
	VMOVUPS (DI)(BX*1), G; \
	LEAQ    (AX)(R13*1), BX; \
	VMOVUPS (DI)(BX*1), O; \
	VMOVUPS (DX)(AX*1), DHK; \
	VADDPS  (R9)(AX*1), DHK, DHK; \
	VMOVUPS (R10)(AX*1), TC; \
	VMULPS  TC, TC, T1; \
	VSUBPS  T1, ONE, T1; \
	VMULPS  O, DHK, DCK; \
	VMULPS  T1, DCK, DCK; \
	VADDPS  (R8)(AX*1), DCK, DCK; \
	VMULPS  G, DCK, A; \
	VMULPS  I, A, A; \
	VSUBPS  I, ONE, B; \
	VMULPS  B, A, A; \
	VMOVUPS A, (SI)(AX*1); \
	VMULPS  (R11)(AX*1), DCK, A; \
	VMULPS  F, A, A; \
	VSUBPS  F, ONE, B; \
	VMULPS  B, A, A; \
	LEAQ    (AX)(R12*1), BX; \
	VMOVUPS A, (SI)(BX*1); \
	VMULPS  I, DCK, A; \
	VMULPS  G, G, B; \
	VSUBPS  B, ONE, B; \
	VMULPS  B, A, A; \
	LEAQ    (AX)(R12*2), BX; \
	VMOVUPS A, (SI)(BX*1); \
	VMULPS  TC, DHK, A; \
	VMULPS  O, A, A; \
	VSUBPS  O, ONE, B; \
	VMULPS  B, A, A; \
	LEAQ    (AX)(R13*1), BX; \
	VMOVUPS A, (SI)(BX*1); \
	VMULPS  F, DCK, A; \
	VMOVUPS A, (R8)(AX*1)

// CELLARGS loads lstmCell8's and lstmCell16's arguments: DI z, SI add, BX
// add's length (0: nothing to add), DX bias, R8 c, R9 h, R10 tc, CX the
// block count, R11 a gate block in bytes, R13 three, AX the unit block's
// byte offset (0).
#define CELLARGS \
	MOVQ z_base+0(FP), DI; \
	MOVQ add_base+24(FP), SI; \
	MOVQ add_len+32(FP), BX; \
	MOVQ bias_base+48(FP), DX; \
	MOVQ c_base+72(FP), R8; \
	MOVQ h_base+96(FP), R9; \
	MOVQ tc_base+120(FP), R10; \
	MOVQ n+144(FP), R11; \
	MOVQ blocks+152(FP), CX; \
	SHLQ $2, R11; \
	LEAQ (R11)(R11*2), R13; \
	XORQ AX, AX

// BACKARGS loads lstmBack8's and lstmBack16's arguments into the registers
// LSTMBACK reads.
#define BACKARGS \
	MOVQ gates_base+0(FP), DI; \
	MOVQ dg_base+24(FP), SI; \
	MOVQ dh_base+48(FP), DX; \
	MOVQ dc_base+72(FP), R8; \
	MOVQ gout_base+96(FP), R9; \
	MOVQ tc_base+120(FP), R10; \
	MOVQ cprev_base+144(FP), R11; \
	MOVQ n+168(FP), R12; \
	MOVQ blocks+176(FP), CX; \
	SHLQ $2, R12; \
	LEAQ (R12)(R12*2), R13; \
	XORQ AX, AX

// func lstmCell8(z, add, bias, c, h, tc []float32, n, blocks int)
// One LSTM step for units [0, 8·blocks) of n with AVX2 (gate blocks n
// apart, from each slice's start): z
// (gate blocks i, f, g, o of n each) becomes (z + add) + bias when add is
// not empty, then the gates σ, σ, tanh, σ; c ← f·c + i·g, tc ← tanh(c),
// h ← o·tc. Every value equals LSTMStep's scalar arithmetic bit for bit.
TEXT ·lstmCell8(SB), NOSPLIT, $0-160
	CELLARGS
	TESTQ CX, CX
	JZ   done
	VBROADCASTSS lc_hi<>(SB), Y8
	VBROADCASTSS lc_lo<>(SB), Y9
	VBROADCASTSS lc_log2e<>(SB), Y10
	VBROADCASTSS lc_half<>(SB), Y11
	VBROADCASTSS lc_one<>(SB), Y12
	VBROADCASTSS lc_ln2hi<>(SB), Y13
	VBROADCASTSS lc_ln2lo<>(SB), Y14
	VBROADCASTSS lc_inf<>(SB), Y15

loop:
	// i, f and o: σ(x) from e = expf(−|x|)
	GATE(AX)
	LEAQ (AX)(R11*1), R12
	GATE(R12)
	LEAQ (AX)(R13*1), R12
	GATE(R12)
	// g: tanh(x) from e = expf(2|x|)
	LEAQ (AX)(R11*2), R12
	PREACT(R12)
	VBROADCASTSS lc_abs<>(SB), Y1
	VANDPS  Y1, Y0, Y0
	VADDPS  Y0, Y0, Y0
	EXP
	VMOVUPS (DI)(R12*1), Y1
	TANH
	VMOVUPS Y5, (DI)(R12*1)
	ADDQ $32, AX
	DECQ CX
	JNZ  loop
	// Second pass: the state, whose chain of dependent operations is
	// long; separate from the gates, the CPU overlaps several blocks' chains.
	MOVQ blocks+152(FP), CX
	XORQ AX, AX

cell:
	// c ← f·c + i·g
	LEAQ (AX)(R11*1), R12
	VMOVUPS (DI)(R12*1), Y1
	VMULPS  (R8)(AX*1), Y1, Y1
	LEAQ (AX)(R11*2), R12
	VMOVUPS (DI)(AX*1), Y2
	VMULPS  (DI)(R12*1), Y2, Y2
	VADDPS  Y2, Y1, Y1
	VMOVUPS Y1, (R8)(AX*1)
	// tc ← tanh(c), h ← o·tc
	VBROADCASTSS lc_abs<>(SB), Y0
	VANDPS  Y0, Y1, Y0
	VADDPS  Y0, Y0, Y0
	EXP
	VMOVUPS (R8)(AX*1), Y1
	TANH
	VMOVUPS Y5, (R10)(AX*1)
	LEAQ (AX)(R13*1), R12
	VMULPS  (DI)(R12*1), Y5, Y5
	VMOVUPS Y5, (R9)(AX*1)
	ADDQ $32, AX
	DECQ CX
	JNZ  cell
	VZEROUPPER

done:
	RET

// Z16 lanes per register from here on: constants in Z8–Z31, masks in K1–K7.

// EXP16 replaces Z0 by expf(Z0): EXP's operations, the lane selections by
// masks. Clobbers Z3–Z6, K1, K2.
#define EXP16 \
	VCMPPS  $1, Z0, Z8, K1; \
	VCMPPS  $1, Z9, Z0, K2; \
	VMULPS  Z10, Z0, Z3; \
	VADDPS  Z11, Z3, Z3; \
	VRNDSCALEPS $1, Z3, Z5; \
	VCVTTPS2DQ Z5, Z4; \
	VMULPS  Z13, Z5, Z6; \
	VSUBPS  Z6, Z0, Z0; \
	VMULPS  Z14, Z5, Z6; \
	VSUBPS  Z6, Z0, Z0; \
	VMULPS  Z0, Z17, Z6; \
	VADDPS  Z18, Z6, Z6; \
	VMULPS  Z0, Z6, Z6; \
	VADDPS  Z19, Z6, Z6; \
	VMULPS  Z0, Z6, Z6; \
	VADDPS  Z20, Z6, Z6; \
	VMULPS  Z0, Z6, Z6; \
	VADDPS  Z21, Z6, Z6; \
	VMULPS  Z0, Z6, Z6; \
	VADDPS  Z11, Z6, Z6; \
	VMULPS  Z0, Z6, Z6; \
	VMULPS  Z0, Z6, Z6; \
	VADDPS  Z0, Z6, Z6; \
	VADDPS  Z12, Z6, Z6; \
	VPADDD  Z22, Z4, Z4; \
	VPSLLD  $23, Z4, Z4; \
	VMULPS  Z4, Z6, Z0; \
	VMOVAPS Z15, K1, Z0; \
	VMOVAPS Z16, K2, Z0

// SIGMOID16 sets Z2 = sigmoidFromExp(Z1, Z0). Clobbers Z3, K3.
#define SIGMOID16 \
	VCMPPS  $2, Z1, Z16, K3; \
	VADDPS  Z12, Z0, Z3; \
	VMOVAPS Z0, Z2; \
	VMOVAPS Z12, K3, Z2; \
	VDIVPS  Z3, Z2, Z2

// TANH16 sets Z5 = tanhFromExp(Z1, Z0). Clobbers Z0, Z2, Z3, Z7, K4–K7.
#define TANH16 \
	VADDPS  Z12, Z0, Z0; \
	VDIVPS  Z0, Z23, Z2; \
	VSUBPS  Z2, Z12, Z3; \
	VCMPPS  $1, Z16, Z1, K4; \
	VPXORD  Z30, Z3, K4, Z3; \
	VPANDD  Z29, Z1, Z5; \
	VCMPPS  $1, Z5, Z24, K5; \
	VCMPPS  $1, Z1, Z16, K6; \
	VMOVAPS Z31, Z7; \
	VMOVAPS Z12, K6, Z7; \
	VMOVAPS Z7, K5, Z3; \
	VCMPPS  $1, Z25, Z5, K7; \
	VMULPS  Z1, Z1, Z0; \
	VMULPS  Z0, Z28, Z2; \
	VADDPS  Z27, Z2, Z2; \
	VMULPS  Z0, Z2, Z2; \
	VADDPS  Z26, Z2, Z2; \
	VMULPS  Z0, Z2, Z2; \
	VADDPS  Z12, Z2, Z2; \
	VMULPS  Z1, Z2, Z2; \
	VMOVAPS Z2, K7, Z3; \
	VMOVAPS Z3, Z5

#define PREACT16(OFF) \
	VMOVUPS (DI)(OFF*1), Z0; \
	TESTQ   BX, BX; \
	JZ      3(PC); \
	VADDPS  (SI)(OFF*1), Z0, Z0; \
	VADDPS  (DX)(OFF*1), Z0, Z0; \
	VMOVUPS Z0, (DI)(OFF*1)

#define GATE16(OFF) \
	PREACT16(OFF); \
	VPORD   Z30, Z0, Z0; \
	EXP16; \
	VMOVUPS (DI)(OFF*1), Z1; \
	SIGMOID16; \
	VMOVUPS Z2, (DI)(OFF*1)

// func lstmCell16(z, add, bias, c, h, tc []float32, n, blocks int)
// lstmCell8 for units [0, 16·blocks) with AVX-512 (F only), bit for bit.
TEXT ·lstmCell16(SB), NOSPLIT, $0-160
	CELLARGS
	TESTQ CX, CX
	JZ   done16
	VBROADCASTSS lc_hi<>(SB), Z8
	VBROADCASTSS lc_lo<>(SB), Z9
	VBROADCASTSS lc_log2e<>(SB), Z10
	VBROADCASTSS lc_half<>(SB), Z11
	VBROADCASTSS lc_one<>(SB), Z12
	VBROADCASTSS lc_ln2hi<>(SB), Z13
	VBROADCASTSS lc_ln2lo<>(SB), Z14
	VBROADCASTSS lc_inf<>(SB), Z15
	VPXORD Z16, Z16, Z16
	VBROADCASTSS lc_p0<>(SB), Z17
	VBROADCASTSS lc_p1<>(SB), Z18
	VBROADCASTSS lc_p2<>(SB), Z19
	VBROADCASTSS lc_p3<>(SB), Z20
	VBROADCASTSS lc_p4<>(SB), Z21
	VPBROADCASTD lc_bias<>(SB), Z22
	VBROADCASTSS lc_two<>(SB), Z23
	VBROADCASTSS lc_nine<>(SB), Z24
	VBROADCASTSS lc_small<>(SB), Z25
	VBROADCASTSS lc_third<>(SB), Z26
	VBROADCASTSS lc_c2<>(SB), Z27
	VBROADCASTSS lc_c3<>(SB), Z28
	VPBROADCASTD lc_abs<>(SB), Z29
	VPBROADCASTD lc_sign<>(SB), Z30
	VPORD   Z30, Z12, Z31    // −1

loop16:
	GATE16(AX)
	LEAQ (AX)(R11*1), R12
	GATE16(R12)
	LEAQ (AX)(R13*1), R12
	GATE16(R12)
	LEAQ (AX)(R11*2), R12
	PREACT16(R12)
	VPANDD  Z29, Z0, Z0
	VADDPS  Z0, Z0, Z0
	EXP16
	VMOVUPS (DI)(R12*1), Z1
	TANH16
	VMOVUPS Z5, (DI)(R12*1)
	ADDQ $64, AX
	DECQ CX
	JNZ  loop16
	// Second pass: the state, as in lstmCell8.
	MOVQ blocks+152(FP), CX
	XORQ AX, AX

cell16:
	LEAQ (AX)(R11*1), R12
	VMOVUPS (DI)(R12*1), Z1
	VMULPS  (R8)(AX*1), Z1, Z1
	LEAQ (AX)(R11*2), R12
	VMOVUPS (DI)(AX*1), Z2
	VMULPS  (DI)(R12*1), Z2, Z2
	VADDPS  Z2, Z1, Z1
	VMOVUPS Z1, (R8)(AX*1)
	VPANDD  Z29, Z1, Z0
	VADDPS  Z0, Z0, Z0
	EXP16
	VMOVUPS (R8)(AX*1), Z1
	TANH16
	VMOVUPS Z5, (R10)(AX*1)
	LEAQ (AX)(R13*1), R12
	VMULPS  (DI)(R12*1), Z5, Z5
	VMOVUPS Z5, (R9)(AX*1)
	ADDQ $64, AX
	DECQ CX
	JNZ  cell16
	VZEROUPPER

done16:
	RET

// func hasAVX512() bool
// CPUID says AVX-512 F is there and XGETBV that the OS saves the opmask
// and all ZMM state (and XMM, YMM).
TEXT ·hasAVX512(SB), NOSPLIT, $0-1
	MOVL $1, AX
	XORL CX, CX
	CPUID
	ANDL $0x08000000, CX // OSXSAVE
	JZ   no512
	XORL CX, CX
	XGETBV
	ANDL $0xe6, AX
	CMPL AX, $0xe6
	JNE  no512
	MOVL $7, AX
	XORL CX, CX
	CPUID
	BTL  $16, BX         // AVX512F
	JCC  no512
	MOVB $1, ret+0(FP)
	RET

no512:
	MOVB $0, ret+0(FP)
	RET

// func lstmBack8(gates, dg, dh, dc, gout, tc, cprev []float32, n, blocks int)
// The LSTM cell's backward pass for units [0, 8·blocks) of n with AVX2:
// gates and dg hold gate blocks n apart; see LSTMBACK.
TEXT ·lstmBack8(SB), NOSPLIT, $0-184
	BACKARGS
	TESTQ CX, CX
	JZ   bdone8
	VBROADCASTSS lc_one<>(SB), Y15

bloop8:
	LSTMBACK(Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, Y8, Y9, Y15)
	ADDQ $32, AX
	DECQ CX
	JNZ  bloop8
	VZEROUPPER

bdone8:
	RET

// func lstmBack16(gates, dg, dh, dc, gout, tc, cprev []float32, n, blocks int)
// lstmBack8 sixteen units at a time with AVX-512.
TEXT ·lstmBack16(SB), NOSPLIT, $0-184
	BACKARGS
	TESTQ CX, CX
	JZ   bdone16
	VBROADCASTSS lc_one<>(SB), Z15

bloop16:
	LSTMBACK(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Z8, Z9, Z15)
	ADDQ $64, AX
	DECQ CX
	JNZ  bloop16
	VZEROUPPER

bdone16:
	RET
