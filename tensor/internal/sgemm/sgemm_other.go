//go:build !amd64 || purego

package sgemm

// Kernels is empty without assembly kernels: tensor does not register
// the simd backend and gonum stays the default.
func Kernels() []*Kernel { return nil }
