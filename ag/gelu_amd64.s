//go:build amd64 && !purego

#include "textflag.h"

// Eight equal float32 lanes each: normalCDF's constants (elementwise.go).
DATA gelu_rsqrt2<>+0(SB)/4, $0x3f3504f3
DATA gelu_rsqrt2<>+4(SB)/4, $0x3f3504f3
DATA gelu_rsqrt2<>+8(SB)/4, $0x3f3504f3
DATA gelu_rsqrt2<>+12(SB)/4, $0x3f3504f3
DATA gelu_rsqrt2<>+16(SB)/4, $0x3f3504f3
DATA gelu_rsqrt2<>+20(SB)/4, $0x3f3504f3
DATA gelu_rsqrt2<>+24(SB)/4, $0x3f3504f3
DATA gelu_rsqrt2<>+28(SB)/4, $0x3f3504f3
GLOBL gelu_rsqrt2<>(SB), RODATA|NOPTR, $32
DATA gelu_p<>+0(SB)/4, $0x3ea7ba05
DATA gelu_p<>+4(SB)/4, $0x3ea7ba05
DATA gelu_p<>+8(SB)/4, $0x3ea7ba05
DATA gelu_p<>+12(SB)/4, $0x3ea7ba05
DATA gelu_p<>+16(SB)/4, $0x3ea7ba05
DATA gelu_p<>+20(SB)/4, $0x3ea7ba05
DATA gelu_p<>+24(SB)/4, $0x3ea7ba05
DATA gelu_p<>+28(SB)/4, $0x3ea7ba05
GLOBL gelu_p<>(SB), RODATA|NOPTR, $32
DATA gelu_one<>+0(SB)/4, $0x3f800000
DATA gelu_one<>+4(SB)/4, $0x3f800000
DATA gelu_one<>+8(SB)/4, $0x3f800000
DATA gelu_one<>+12(SB)/4, $0x3f800000
DATA gelu_one<>+16(SB)/4, $0x3f800000
DATA gelu_one<>+20(SB)/4, $0x3f800000
DATA gelu_one<>+24(SB)/4, $0x3f800000
DATA gelu_one<>+28(SB)/4, $0x3f800000
GLOBL gelu_one<>(SB), RODATA|NOPTR, $32
DATA gelu_half<>+0(SB)/4, $0x3f000000
DATA gelu_half<>+4(SB)/4, $0x3f000000
DATA gelu_half<>+8(SB)/4, $0x3f000000
DATA gelu_half<>+12(SB)/4, $0x3f000000
DATA gelu_half<>+16(SB)/4, $0x3f000000
DATA gelu_half<>+20(SB)/4, $0x3f000000
DATA gelu_half<>+24(SB)/4, $0x3f000000
DATA gelu_half<>+28(SB)/4, $0x3f000000
GLOBL gelu_half<>(SB), RODATA|NOPTR, $32
DATA gelu_a1<>+0(SB)/4, $0x3e827906
DATA gelu_a1<>+4(SB)/4, $0x3e827906
DATA gelu_a1<>+8(SB)/4, $0x3e827906
DATA gelu_a1<>+12(SB)/4, $0x3e827906
DATA gelu_a1<>+16(SB)/4, $0x3e827906
DATA gelu_a1<>+20(SB)/4, $0x3e827906
DATA gelu_a1<>+24(SB)/4, $0x3e827906
DATA gelu_a1<>+28(SB)/4, $0x3e827906
GLOBL gelu_a1<>(SB), RODATA|NOPTR, $32
DATA gelu_a2<>+0(SB)/4, $0xbe91a98e
DATA gelu_a2<>+4(SB)/4, $0xbe91a98e
DATA gelu_a2<>+8(SB)/4, $0xbe91a98e
DATA gelu_a2<>+12(SB)/4, $0xbe91a98e
DATA gelu_a2<>+16(SB)/4, $0xbe91a98e
DATA gelu_a2<>+20(SB)/4, $0xbe91a98e
DATA gelu_a2<>+24(SB)/4, $0xbe91a98e
DATA gelu_a2<>+28(SB)/4, $0xbe91a98e
GLOBL gelu_a2<>(SB), RODATA|NOPTR, $32
DATA gelu_a3<>+0(SB)/4, $0x3fb5f0e3
DATA gelu_a3<>+4(SB)/4, $0x3fb5f0e3
DATA gelu_a3<>+8(SB)/4, $0x3fb5f0e3
DATA gelu_a3<>+12(SB)/4, $0x3fb5f0e3
DATA gelu_a3<>+16(SB)/4, $0x3fb5f0e3
DATA gelu_a3<>+20(SB)/4, $0x3fb5f0e3
DATA gelu_a3<>+24(SB)/4, $0x3fb5f0e3
DATA gelu_a3<>+28(SB)/4, $0x3fb5f0e3
GLOBL gelu_a3<>(SB), RODATA|NOPTR, $32
DATA gelu_a4<>+0(SB)/4, $0xbfba00e3
DATA gelu_a4<>+4(SB)/4, $0xbfba00e3
DATA gelu_a4<>+8(SB)/4, $0xbfba00e3
DATA gelu_a4<>+12(SB)/4, $0xbfba00e3
DATA gelu_a4<>+16(SB)/4, $0xbfba00e3
DATA gelu_a4<>+20(SB)/4, $0xbfba00e3
DATA gelu_a4<>+24(SB)/4, $0xbfba00e3
DATA gelu_a4<>+28(SB)/4, $0xbfba00e3
GLOBL gelu_a4<>(SB), RODATA|NOPTR, $32
DATA gelu_a5<>+0(SB)/4, $0x3f87dc22
DATA gelu_a5<>+4(SB)/4, $0x3f87dc22
DATA gelu_a5<>+8(SB)/4, $0x3f87dc22
DATA gelu_a5<>+12(SB)/4, $0x3f87dc22
DATA gelu_a5<>+16(SB)/4, $0x3f87dc22
DATA gelu_a5<>+20(SB)/4, $0x3f87dc22
DATA gelu_a5<>+24(SB)/4, $0x3f87dc22
DATA gelu_a5<>+28(SB)/4, $0x3f87dc22
GLOBL gelu_a5<>(SB), RODATA|NOPTR, $32
DATA gelu_abs<>+0(SB)/4, $0x7fffffff
DATA gelu_abs<>+4(SB)/4, $0x7fffffff
DATA gelu_abs<>+8(SB)/4, $0x7fffffff
DATA gelu_abs<>+12(SB)/4, $0x7fffffff
DATA gelu_abs<>+16(SB)/4, $0x7fffffff
DATA gelu_abs<>+20(SB)/4, $0x7fffffff
DATA gelu_abs<>+24(SB)/4, $0x7fffffff
DATA gelu_abs<>+28(SB)/4, $0x7fffffff
GLOBL gelu_abs<>(SB), RODATA|NOPTR, $32
DATA gelu_sign<>+0(SB)/4, $0x80000000
DATA gelu_sign<>+4(SB)/4, $0x80000000
DATA gelu_sign<>+8(SB)/4, $0x80000000
DATA gelu_sign<>+12(SB)/4, $0x80000000
DATA gelu_sign<>+16(SB)/4, $0x80000000
DATA gelu_sign<>+20(SB)/4, $0x80000000
DATA gelu_sign<>+24(SB)/4, $0x80000000
DATA gelu_sign<>+28(SB)/4, $0x80000000
GLOBL gelu_sign<>(SB), RODATA|NOPTR, $32

// func normalCDF8(cdf, x, e []float32)
// Sets cdf[i] = normalCDF(x[i], e[i]) eight lanes at a time (len(x) a
// multiple of 8), with exactly the float32 operations of normalCDF in the
// same order and no fused multiply-add, so every lane equals the scalar
// result bit for bit.
TEXT ·normalCDF8(SB), NOSPLIT, $0-72
	MOVQ cdf_base+0(FP), DI
	MOVQ x_base+24(FP), SI
	MOVQ x_len+32(FP), CX
	MOVQ e_base+48(FP), DX
	SHRQ $3, CX
	JZ   done
	VMOVUPS gelu_rsqrt2<>(SB), Y8
	VMOVUPS gelu_p<>(SB), Y9
	VMOVUPS gelu_one<>(SB), Y10
	VMOVUPS gelu_abs<>(SB), Y11
	VMOVUPS gelu_sign<>(SB), Y12
	VMOVUPS gelu_half<>(SB), Y13
	VXORPS  Y14, Y14, Y14         // 0

loop:
	VMOVUPS (SI), Y0              // x
	VMULPS  Y8, Y0, Y1            // z = x·(1/√2)
	VANDPS  Y11, Y1, Y1           // |z|
	VMULPS  Y9, Y1, Y1            // p·z
	VADDPS  Y10, Y1, Y1           // 1 + p·z
	VDIVPS  Y1, Y10, Y1           // k = 1/(1 + p·z)
	VMOVUPS gelu_a5<>(SB), Y2
	VMULPS  Y1, Y2, Y2            // k·a5
	VADDPS  gelu_a4<>(SB), Y2, Y2
	VMULPS  Y1, Y2, Y2
	VADDPS  gelu_a3<>(SB), Y2, Y2
	VMULPS  Y1, Y2, Y2
	VADDPS  gelu_a2<>(SB), Y2, Y2
	VMULPS  Y1, Y2, Y2
	VADDPS  gelu_a1<>(SB), Y2, Y2
	VMULPS  Y2, Y1, Y2            // poly = k·(a1 + …)
	VMOVUPS (DX), Y3              // e
	VMULPS  Y3, Y2, Y2            // poly·e
	VSUBPS  Y2, Y10, Y2           // erf = 1 − poly·e
	VCMPPS  $1, Y14, Y0, Y4       // x < 0
	VANDPS  Y12, Y4, Y4
	VXORPS  Y4, Y2, Y2            // −erf where x < 0
	VADDPS  Y10, Y2, Y2           // 1 + erf
	VMULPS  Y13, Y2, Y2           // 0.5·(1 + erf)
	VMOVUPS Y2, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	DECQ    CX
	JNZ     loop
	VZEROUPPER

done:
	RET
