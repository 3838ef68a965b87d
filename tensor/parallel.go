package tensor

import (
	"runtime"
	"sync"
)

// minParallelWork is the element count below which splitting a loop over
// goroutines costs more than it saves.
const minParallelWork = 1 << 15

var workers = runtime.GOMAXPROCS(0)

// SetWorkers sets how many goroutines ParallelFor uses (at least 1).
func SetWorkers(n int) {
	if n < 1 {
		n = 1
	}
	workers = n
}

// Workers returns the ParallelFor width.
func Workers() int { return workers }

// ParallelFor calls fn over [0,n) split into contiguous chunks, one per
// worker, when cost (about n times the work per index) is large enough to
// pay for goroutines. Chunk boundaries depend only on n and the worker
// count, so any per-chunk reduction is deterministic.
func ParallelFor(n, costPerItem int, fn func(lo, hi int)) {
	w := workers
	if w <= 1 || n < 2 || n*costPerItem < minParallelWork {
		fn(0, n)
		return
	}
	if w > n {
		w = n
	}
	var wg sync.WaitGroup
	chunk := (n + w - 1) / w
	for lo := chunk; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			fn(lo, hi)
		}(lo, hi)
	}
	fn(0, min(chunk, n))
	wg.Wait()
}

// ParallelGemmFor is ParallelFor for loops whose bodies call Gemm (many
// small products, one per chunk item). When the loop runs on several
// goroutines the BLAS backend's own threads are set to 1 meanwhile: a
// threaded BLAS under parallel goroutines oversubscribes the cores, and
// OpenBLAS threads each product of 256×256 or more (a transformer's
// attention at length 256 ran 3× slower).
func ParallelGemmFor(n, costPerItem int, fn func(lo, hi int)) {
	if workers > 1 && n >= 2 && n*costPerItem >= minParallelWork {
		defer SingleThreadedBLAS()()
	}
	ParallelFor(n, costPerItem, fn)
}
