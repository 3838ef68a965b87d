//go:build !openblas

package tensor

// openblasBuild says whether OpenBLAS is compiled in: it is then the
// default backend, else the simd one where the CPU has its kernels.
const openblasBuild = false
