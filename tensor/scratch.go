package tensor

import (
	"math/bits"
	"sync"
)

// Scratch buffers for kernels' short-lived intermediates (a convolution's
// GEMM output, say): reusing them saves the allocation and the zeroing that
// Go's make would do on every forward pass.
var scratchPools [48]sync.Pool

// GetScratch returns a buffer of length n with arbitrary contents.
func GetScratch(n int) []float32 {
	if n == 0 {
		return nil
	}
	c := bits.Len(uint(n - 1))
	if p, ok := scratchPools[c].Get().(*[]float32); ok {
		return (*p)[:n]
	}
	return make([]float32, n, 1<<c)
}

// PutScratch hands a buffer from GetScratch back for reuse.
func PutScratch(b []float32) {
	c := cap(b)
	if c == 0 || c&(c-1) != 0 {
		return // not from GetScratch
	}
	b = b[:c]
	scratchPools[bits.Len(uint(c-1))].Put(&b)
}
