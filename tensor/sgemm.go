package tensor

import (
	"sync/atomic"

	"github.com/textarmor/textarmor/tensor/internal/sgemm"
)

// simdBackend is SGEMM in Go with assembly micro-kernels (package
// tensor/internal/sgemm), no cgo: the default where the CPU has AVX2 and
// FMA and OpenBLAS is not compiled in. It runs the fastest kernel the CPU
// has (the package's tests cover every one; they give identical results).
type simdBackend struct {
	kern atomic.Pointer[sgemm.Kernel]
	// threads is SetThreads's count; 0 follows Workers().
	threads atomic.Int32
}

func newSimdBackend(ks []*sgemm.Kernel) *simdBackend {
	s := &simdBackend{}
	s.kern.Store(ks[0])
	return s
}

func (*simdBackend) Name() string { return "simd" }

// Kernel names the micro-kernel in use ("avx512", "avx2"): models and
// tables record it with the backend.
func (s *simdBackend) Kernel() string { return s.kern.Load().Name }

// Threads is how many goroutines a large product uses: SetThreads's count,
// at most Workers() (--workers bounds every parallel loop).
func (s *simdBackend) Threads() int {
	w := Workers()
	if t := int(s.threads.Load()); t > 0 && t < w {
		return t
	}
	return w
}

// SetThreads sets the thread count; Workers() or more follows Workers()
// again, so that restoring a saved count keeps the default.
func (s *simdBackend) SetThreads(n int) {
	if n >= Workers() {
		n = 0
	}
	s.threads.Store(int32(max(n, 0)))
}

func (s *simdBackend) Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	sgemm.Gemm(s.kern.Load(), s.Threads(), transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func init() {
	if ks := sgemm.Kernels(); len(ks) > 0 {
		Register(newSimdBackend(ks), !openblasBuild)
	}
}
