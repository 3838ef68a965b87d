package tensor

import (
	"fmt"
	"sort"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// Backend computes single-precision GEMM on row-major matrices:
// C = alpha*op(A)*op(B) + beta*C with op(A) m×k and op(B) k×n.
type Backend interface {
	Name() string
	Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)
}

var (
	backendsMu sync.Mutex
	backends   = map[string]Backend{}
	active     Backend
)

// Register makes a backend selectable; preferred ones become the default.
func Register(b Backend, preferred bool) {
	backendsMu.Lock()
	defer backendsMu.Unlock()
	backends[b.Name()] = b
	if preferred || active == nil {
		active = b
	}
}

// Backends lists the compiled-in backend names.
func Backends() []string {
	backendsMu.Lock()
	defer backendsMu.Unlock()
	var names []string
	for n := range backends {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// UseBackend selects a compiled-in backend by name.
func UseBackend(name string) error {
	backendsMu.Lock()
	defer backendsMu.Unlock()
	b, ok := backends[name]
	if !ok {
		names := make([]string, 0, len(backends))
		for n := range backends {
			names = append(names, n)
		}
		sort.Strings(names)
		return fmt.Errorf("unknown BLAS backend %q (compiled in: %v; build with -tags openblas for OpenBLAS)", name, names)
	}
	active = b
	return nil
}

// GetBackend returns a compiled-in backend by name, or nil.
func GetBackend(name string) Backend {
	backendsMu.Lock()
	defer backendsMu.Unlock()
	return backends[name]
}

// threaded is a backend with its own thread pool (OpenBLAS).
type threaded interface {
	Threads() int
	SetThreads(n int)
}

// SetBLASThreads sets the thread count of the active backend's own pool and
// returns the previous count; backends without one (gonum, which runs each
// call on the calling goroutine's side) return 1 and ignore it. Callers that
// already run GEMMs from several goroutines (attack workers) set 1: a
// multi-threaded BLAS inside each of them oversubscribes the cores, and
// OpenBLAS's idle threads spin.
func SetBLASThreads(n int) (prev int) {
	t, ok := active.(threaded)
	if !ok {
		return 1
	}
	prev = t.Threads()
	t.SetThreads(n)
	return prev
}

// single counts the goroutines inside SingleThreadedBLAS sections.
var single struct {
	sync.Mutex
	n, prev int
}

// SingleThreadedBLAS runs the backend's own pool on one thread until the
// returned release is called, for code that calls Gemm from several
// goroutines (a threaded BLAS under them oversubscribes the cores).
// Sections may overlap and nest: the first to enter saves the thread count
// and the last to leave restores it, which a save-and-restore around each
// section would not (two overlapping ones could leave it at 1).
func SingleThreadedBLAS() (release func()) {
	single.Lock()
	if single.n == 0 {
		single.prev = SetBLASThreads(1)
	}
	single.n++
	single.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			single.Lock()
			if single.n--; single.n == 0 {
				SetBLASThreads(single.prev)
			}
			single.Unlock()
		})
	}
}

// BackendName names the backend in use.
func BackendName() string { return active.Name() }

// kernelNamer is a backend that picks its kernels by CPU at run time
// (OpenBLAS); Kernel names the ones it picked.
type kernelNamer interface {
	Kernel() string
}

// BackendDetail names the backend in use and, where it chooses kernels by
// CPU, the kernels it chose ("openblas (OpenBLAS 0.3.21 ... SkylakeX)"):
// kernels round differently, so the same seed can train other weights on
// another CPU, and models and benchmark tables record this string.
func BackendDetail() string {
	if k, ok := active.(kernelNamer); ok {
		if d := k.Kernel(); d != "" {
			return active.Name() + " (" + d + ")"
		}
	}
	return active.Name()
}

// Gemm runs the active backend's Sgemm.
func Gemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		scaleInPlace(c, m, n, ldc, beta)
		return
	}
	active.Sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func scaleInPlace(c []float32, m, n, ldc int, beta float32) {
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		for j := range row {
			row[j] *= beta
		}
	}
}

// MatMul returns a·b for 2-d a [m,k] and b [k,n] (or their transposes).
func MatMul(a *Tensor, transA bool, b *Tensor, transB bool) *Tensor {
	m, k := a.Shape[0], a.Shape[1]
	if transA {
		m, k = k, m
	}
	k2, n := b.Shape[0], b.Shape[1]
	if transB {
		k2, n = n, k2
	}
	if k != k2 {
		panic(fmt.Sprintf("tensor.MatMul: inner sizes %d and %d", k, k2))
	}
	c := New(m, n)
	Gemm(transA, transB, m, n, k, 1, a.Data, a.Shape[1], b.Data, b.Shape[1], 0, c.Data, n)
	return c
}

type gonumBackend struct{ impl gonum.Implementation }

func (gonumBackend) Name() string { return "gonum" }

func (g gonumBackend) Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	g.impl.Sgemm(trans(transA), trans(transB), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func trans(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}

func init() { Register(gonumBackend{}, false) }

// Axpy adds alpha·x to y[:len(x)], with gonum's float32 BLAS level 1 (SSE
// assembly on amd64, pure Go elsewhere, no run-time CPU dispatch, so a build
// computes the same sums on every machine) whatever the GEMM backend: the
// callers are short rows where a cgo call would cost more than the
// arithmetic, and it is about 4× faster than a plain Go loop at 300
// dimensions.
func Axpy(alpha float32, x, y []float32) {
	gonum.Implementation{}.Saxpy(len(x), alpha, x, 1, y, 1)
}

// Dot is Σ x[i]·y[i] over x's length, with the same kernels as Axpy.
func Dot(x, y []float32) float32 {
	return gonum.Implementation{}.Sdot(len(x), x, 1, y, 1)
}
