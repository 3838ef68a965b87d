//go:build amd64 && !purego

package sgemm

import "golang.org/x/sys/cpu"

//go:generate go run gen_sgemm.go

// The micro-kernels of sgemm_amd64.s, one per row count of the tile; see
// Kernel for the contract.

//go:noescape
func sgemmAVX2_1(kc int, a, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

//go:noescape
func sgemmAVX2_2(kc int, a, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

//go:noescape
func sgemmAVX2_3(kc int, a, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

//go:noescape
func sgemmAVX2_4(kc int, a, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

//go:noescape
func sgemmAVX2_5(kc int, a, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

//go:noescape
func sgemmAVX2_6(kc int, a, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

//go:noescape
func sgemmAVX512_1(kc int, a, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

//go:noescape
func sgemmAVX512_2(kc int, a, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

//go:noescape
func sgemmAVX512_3(kc int, a, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

//go:noescape
func sgemmAVX512_4(kc int, a, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

//go:noescape
func sgemmAVX512_5(kc int, a, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

//go:noescape
func sgemmAVX512_6(kc int, a, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

//go:noescape
func sgemmAVX512_7(kc int, a, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

//go:noescape
func sgemmAVX512_8(kc int, a, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

//go:noescape
func sgemmAVX512_9(kc int, a, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

//go:noescape
func sgemmAVX512_10(kc int, a, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

//go:noescape
func sgemmAVX512_11(kc int, a, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

//go:noescape
func sgemmAVX512_12(kc int, a, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

//go:noescape
func sgemmAVX2_wide(kc int, a, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

//go:noescape
func sgemmAVX512_wide(kc int, a, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

var sgemmAVX2 = [...]kernelFunc{nil, sgemmAVX2_1, sgemmAVX2_2, sgemmAVX2_3, sgemmAVX2_4, sgemmAVX2_5, sgemmAVX2_6}

var sgemmAVX512 = [...]kernelFunc{nil, sgemmAVX512_1, sgemmAVX512_2, sgemmAVX512_3, sgemmAVX512_4, sgemmAVX512_5, sgemmAVX512_6, sgemmAVX512_7, sgemmAVX512_8, sgemmAVX512_9, sgemmAVX512_10, sgemmAVX512_11, sgemmAVX512_12}

// transpose8 and transpose4 are interleave's vector part (AVX): for 8 or
// 4 rows of src (sstride apart) and k in [0, 8·blocks),
// dst[k·dstride+r] = src[r·sstride+k]; see pack_amd64.s.
//
//go:noescape
func transpose8(dst *float32, dstride int, src *float32, sstride int, blocks int)

//go:noescape
func transpose4(dst *float32, dstride int, src *float32, sstride int, blocks int)

// haveTranspose: the transposes need AVX, which every CPU with a kernel has.
var haveTranspose = cpu.X86.HasAVX

// Kernels lists the kernels this CPU runs, fastest first: AVX-512 where
// the CPU and OS have it (twice the lanes and registers), else AVX2 with
// FMA. Without AVX2 and FMA the list is empty, tensor does not register
// the simd backend and gonum stays the default.
func Kernels() []*Kernel {
	var ks []*Kernel
	if cpu.X86.HasAVX512F {
		ks = append(ks, &Kernel{Name: "avx512", MR: 12, NR: 32, fns: sgemmAVX512[:], wide: sgemmAVX512_wide, wideNR: 128})
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		ks = append(ks, &Kernel{Name: "avx2", MR: 6, NR: 16, fns: sgemmAVX2[:], wide: sgemmAVX2_wide, wideNR: 64})
	}
	return ks
}
