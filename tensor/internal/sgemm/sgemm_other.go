//go:build !amd64 || purego

package sgemm

// Kernels is empty without assembly kernels: tensor does not register
// the simd backend and gonum stays the default.
func Kernels() []*Kernel { return nil }

var haveTranspose = false

func transpose8(dst *float32, dstride int, src *float32, sstride int, blocks int) {
	panic("sgemm: no vector transpose in this build")
}

func transpose4(dst *float32, dstride int, src *float32, sstride int, blocks int) {
	panic("sgemm: no vector transpose in this build")
}
