//go:build amd64 && !purego

#include "textflag.h"

// TRANSPOSE4 turns Y0..Y3 (rows r0..r3, each k0..k7) into Y0..Y3 holding,
// in their low lanes, k0..k3 of the four rows and, in their high lanes,
// k4..k7: Y0 = k0|k4, Y1 = k1|k5, Y2 = k2|k6, Y3 = k3|k7.
#define TRANSPOSE4(a, b, c, d, t0, t1, t2, t3) \
	VUNPCKLPS b, a, t0 \
	VUNPCKHPS b, a, t1 \
	VUNPCKLPS d, c, t2 \
	VUNPCKHPS d, c, t3 \
	VSHUFPS   $0x44, t2, t0, a \
	VSHUFPS   $0xEE, t2, t0, b \
	VSHUFPS   $0x44, t3, t1, c \
	VSHUFPS   $0xEE, t3, t1, d

// func transpose8(dst *float32, dstride int, src *float32, sstride int, blocks int)
// For 8 rows of src (sstride apart) and k in [0, 8·blocks):
// dst[k·dstride + r] = src[r·sstride + k], eight rows a store.
TEXT ·transpose8(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ dstride+8(FP), R8
	SHLQ $2, R8
	MOVQ src+16(FP), SI
	MOVQ sstride+24(FP), R9
	SHLQ $2, R9
	MOVQ blocks+32(FP), CX
	LEAQ (R9)(R9*2), R10 // 3 rows
	LEAQ (R8)(R8*2), R11 // 3 k
	TESTQ CX, CX
	JZ   t8done

t8loop:
	MOVQ SI, AX
	VMOVUPS (AX), Y0
	VMOVUPS (AX)(R9*1), Y1
	VMOVUPS (AX)(R9*2), Y2
	VMOVUPS (AX)(R10*1), Y3
	LEAQ (AX)(R9*4), AX
	VMOVUPS (AX), Y4
	VMOVUPS (AX)(R9*1), Y5
	VMOVUPS (AX)(R9*2), Y6
	VMOVUPS (AX)(R10*1), Y7
	TRANSPOSE4(Y0, Y1, Y2, Y3, Y8, Y9, Y10, Y11)
	TRANSPOSE4(Y4, Y5, Y6, Y7, Y8, Y9, Y10, Y11)
	VPERM2F128 $0x20, Y4, Y0, Y8
	VPERM2F128 $0x20, Y5, Y1, Y9
	VPERM2F128 $0x20, Y6, Y2, Y10
	VPERM2F128 $0x20, Y7, Y3, Y11
	VPERM2F128 $0x31, Y4, Y0, Y12
	VPERM2F128 $0x31, Y5, Y1, Y13
	VPERM2F128 $0x31, Y6, Y2, Y14
	VPERM2F128 $0x31, Y7, Y3, Y15
	MOVQ DI, AX
	VMOVUPS Y8, (AX)
	VMOVUPS Y9, (AX)(R8*1)
	VMOVUPS Y10, (AX)(R8*2)
	VMOVUPS Y11, (AX)(R11*1)
	LEAQ (AX)(R8*4), AX
	VMOVUPS Y12, (AX)
	VMOVUPS Y13, (AX)(R8*1)
	VMOVUPS Y14, (AX)(R8*2)
	VMOVUPS Y15, (AX)(R11*1)
	ADDQ $32, SI
	LEAQ (DI)(R8*8), DI
	DECQ CX
	JNZ  t8loop

t8done:
	VZEROUPPER
	RET

// func transpose4(dst *float32, dstride int, src *float32, sstride int, blocks int)
// transpose8 for 4 rows.
TEXT ·transpose4(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ dstride+8(FP), R8
	SHLQ $2, R8
	MOVQ src+16(FP), SI
	MOVQ sstride+24(FP), R9
	SHLQ $2, R9
	MOVQ blocks+32(FP), CX
	LEAQ (R9)(R9*2), R10
	LEAQ (R8)(R8*2), R11
	TESTQ CX, CX
	JZ   t4done

t4loop:
	VMOVUPS (SI), Y0
	VMOVUPS (SI)(R9*1), Y1
	VMOVUPS (SI)(R9*2), Y2
	VMOVUPS (SI)(R10*1), Y3
	TRANSPOSE4(Y0, Y1, Y2, Y3, Y8, Y9, Y10, Y11)
	MOVQ DI, AX
	VMOVUPS X0, (AX)
	VMOVUPS X1, (AX)(R8*1)
	VMOVUPS X2, (AX)(R8*2)
	VMOVUPS X3, (AX)(R11*1)
	LEAQ (AX)(R8*4), AX
	VEXTRACTF128 $1, Y0, X4
	VEXTRACTF128 $1, Y1, X5
	VEXTRACTF128 $1, Y2, X6
	VEXTRACTF128 $1, Y3, X7
	VMOVUPS X4, (AX)
	VMOVUPS X5, (AX)(R8*1)
	VMOVUPS X6, (AX)(R8*2)
	VMOVUPS X7, (AX)(R11*1)
	ADDQ $32, SI
	LEAQ (DI)(R8*8), DI
	DECQ CX
	JNZ  t4loop

t4done:
	VZEROUPPER
	RET
