// Package tensor holds textarmor's float32 tensors and the kernels under them.
//
// Matrix products go through a BLAS backend: gonum's pure-Go implementation
// in the default build, OpenBLAS through cgo when built with -tags openblas.
// Both are always selectable by name when compiled in, so tests can compare
// them. Element-wise kernels split large loops over all cores with
// ParallelFor, always into the same chunks so results are deterministic.
package tensor
