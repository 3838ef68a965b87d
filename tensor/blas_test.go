package tensor

import (
	"fmt"
	"math"
	"math/rand"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func naiveGemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for p := 0; p < k; p++ {
				var av, bv float32
				if transA {
					av = a[p*lda+i]
				} else {
					av = a[i*lda+p]
				}
				if transB {
					bv = b[j*ldb+p]
				} else {
					bv = b[p*ldb+j]
				}
				s += float64(av) * float64(bv)
			}
			c[i*ldc+j] = alpha*float32(s) + beta*c[i*ldc+j]
		}
	}
}

func randSlice(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

// TestGemmBackends checks every compiled-in backend against a float64
// reference, and (with -tags openblas) against each other.
func TestGemmBackends(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	shapes := [][3]int{{1, 1, 1}, {3, 5, 7}, {64, 33, 17}, {130, 70, 300}}
	for _, name := range Backends() {
		be := GetBackend(name)
		for _, s := range shapes {
			for _, ta := range []bool{false, true} {
				for _, tb := range []bool{false, true} {
					m, n, k := s[0], s[1], s[2]
					lda, ldb := k, n
					if ta {
						lda = m
					}
					if tb {
						ldb = k
					}
					a, b := randSlice(r, m*k), randSlice(r, k*n)
					c0 := randSlice(r, m*n)
					want := append([]float32(nil), c0...)
					got := append([]float32(nil), c0...)
					naiveGemm(ta, tb, m, n, k, 0.5, a, lda, b, ldb, 2, want, n)
					be.Sgemm(ta, tb, m, n, k, 0.5, a, lda, b, ldb, 2, got, n)
					if d := MaxAbsDiff(want, got); d > 1e-3*float64(k) {
						t.Errorf("%s %v ta=%v tb=%v: max diff %g", name, s, ta, tb, d)
					}
				}
			}
		}
	}
}

func TestBackendsAgree(t *testing.T) {
	names := Backends()
	if len(names) < 2 {
		t.Skipf("only %v compiled in; build with -tags openblas to compare backends", names)
	}
	r := rand.New(rand.NewSource(2))
	m, n, k := 200, 300, 400
	a, b := randSlice(r, m*k), randSlice(r, k*n)
	ref := make([]float32, m*n)
	GetBackend(names[0]).Sgemm(false, true, m, n, k, 1, a, k, randT(b, k, n), k, 0, ref, n)
	for _, name := range names[1:] {
		got := make([]float32, m*n)
		GetBackend(name).Sgemm(false, true, m, n, k, 1, a, k, randT(b, k, n), k, 0, got, n)
		if d := MaxAbsDiff(ref, got); d > 1e-3 {
			t.Errorf("%s vs %s: max diff %g", names[0], name, d)
		}
	}
}

// randT returns the transpose of a k×n matrix.
func randT(b []float32, k, n int) []float32 {
	t := make([]float32, len(b))
	for i := 0; i < k; i++ {
		for j := 0; j < n; j++ {
			t[j*k+i] = b[i*n+j]
		}
	}
	return t
}

func TestUseBackendUnknown(t *testing.T) {
	if err := UseBackend("nope"); err == nil {
		t.Fatal("expected an error for an unknown backend")
	}
}

func TestParallelForCoversRange(t *testing.T) {
	for _, n := range []int{0, 1, 7, 1 << 16} {
		seen := make([]int32, n)
		ParallelFor(n, 1, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				seen[i]++
			}
		})
		for i, s := range seen {
			if s != 1 {
				t.Fatalf("n=%d index %d visited %d times", n, i, s)
			}
		}
	}
}

// BenchmarkGemm reports GFLOP/s of square and engine-shaped products
// (m×n×k; T: B transposed) for every compiled-in backend, on one thread
// and on two: the ceiling the model benchmarks compare with. Build with
// -tags openblas to see all three backends side by side.
func BenchmarkGemm(b *testing.B) {
	r := rand.New(rand.NewSource(3))
	shapes := []struct {
		m, n, k int
		tb      bool
	}{
		{1024, 1024, 1024, false}, {3200, 300, 1200, false}, {64, 1024, 256, false}, {32, 1024, 256, false},
		{2048, 1536, 384, false}, {2048, 1536, 384, true}, {2048, 384, 1536, true}, {128, 128, 32, true}, {64, 64, 32, true},
		{1, 384, 384, true}, {1, 1024, 256, false}, {8, 512, 128, false}, {12800, 400, 300, false},
	}
	for _, name := range Backends() {
		be := GetBackend(name)
		for _, s := range shapes {
			m, n, k := s.m, s.n, s.k
			ldb := n
			if s.tb {
				ldb = k
			}
			a, bb, c := randSlice(r, m*k), randSlice(r, k*n), make([]float32, m*n)
			for _, threads := range []int{1, 2} {
				tag := ""
				if s.tb {
					tag = "T"
				}
				b.Run(fmt.Sprintf("%s/%dx%dx%d%s/t%d", name, m, n, k, tag, threads), func(b *testing.B) {
					defer withThreads(threads)()
					for b.Loop() {
						be.Sgemm(false, s.tb, m, n, k, 1, a, k, bb, ldb, 0, c, n)
					}
					b.ReportMetric(2*float64(m)*float64(n)*float64(k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				})
			}
		}
	}
}

// withThreads runs every backend on n threads until the returned restore:
// GOMAXPROCS for gonum (which splits large products over it), Workers for
// simd, the pool for OpenBLAS.
func withThreads(n int) (restore func()) {
	procs, w := runtime.GOMAXPROCS(n), Workers()
	SetWorkers(n)
	var prev []int
	for _, name := range Backends() {
		if t, ok := GetBackend(name).(threaded); ok {
			prev = append(prev, t.Threads())
			t.SetThreads(n)
		}
	}
	return func() {
		i := 0
		for _, name := range Backends() {
			if t, ok := GetBackend(name).(threaded); ok {
				t.SetThreads(prev[i])
				i++
			}
		}
		SetWorkers(w)
		runtime.GOMAXPROCS(procs)
	}
}

func TestScratchReuse(t *testing.T) {
	for _, n := range []int{1, 3, 1000, 1 << 20} {
		b := GetScratch(n)
		if len(b) != n {
			t.Fatalf("len %d, want %d", len(b), n)
		}
		PutScratch(b)
	}
	PutScratch(make([]float32, 3)) // not from the pool: ignored
	if b := GetScratch(3); len(b) != 3 {
		t.Fatal("bad length")
	}
}

func TestCosine(t *testing.T) {
	for _, tc := range []struct {
		a, b []float32
		want float64
	}{
		{[]float32{1, 0}, []float32{0, 2}, 0},
		{[]float32{1, 1}, []float32{2, 2}, 1},
		{[]float32{1, 2}, []float32{-1, -2}, -1},
		{[]float32{3, 4}, []float32{4, 3}, 24.0 / 25},
		{[]float32{0, 0}, []float32{1, 1}, 0},
	} {
		if got := Cosine(tc.a, tc.b); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("Cosine(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestSetBLASThreads(t *testing.T) {
	prev := SetBLASThreads(1)
	if prev < 1 {
		t.Fatalf("previous thread count %d", prev)
	}
	if got := SetBLASThreads(prev); got != 1 {
		t.Errorf("after SetBLASThreads(1) the backend reports %d threads", got)
	}
}

func TestTransposeInto(t *testing.T) {
	src := []float32{1, 2, 3, 4, 5, 6} // [2, 3]
	dst := make([]float32, 6)
	TransposeInto(dst, src, 2, 3)
	if want := []float32{1, 4, 2, 5, 3, 6}; !slices.Equal(dst, want) {
		t.Fatalf("TransposeInto = %v, want %v", dst, want)
	}
}

func TestDotAxpy(t *testing.T) {
	x, y := []float32{1, 2, 3}, []float32{4, 5, 6, 7}
	if d := Dot(x, y); d != 32 {
		t.Fatalf("Dot = %v, want 32 (over x's length)", d)
	}
	Axpy(2, x, y)
	if want := []float32{6, 9, 12, 7}; !slices.Equal(y, want) {
		t.Fatalf("Axpy gave %v, want %v", y, want)
	}
}

// BenchmarkAxpySubnormal shows why the engine flushes subnormal values: an
// axpy of 400 values with a weight of 1e-37 makes subnormal products, each
// a microcode assist on x86. y is reset each time so that it stays normal.
func BenchmarkAxpySubnormal(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	x := make([]float32, 400)
	for i := range x {
		x[i] = r.Float32() - 0.5
	}
	y := make([]float32, len(x))
	for _, w := range []float32{0.3, 1e-37} {
		b.Run(fmt.Sprintf("w%g", w), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				clear(y)
				Axpy(w, x, y)
			}
		})
	}
}

// BackendDetail names every compiled-in backend, and OpenBLAS's and
// simd's add the kernels they chose for this CPU.
func TestBackendDetail(t *testing.T) {
	prev := BackendName()
	defer UseBackend(prev)
	for _, name := range Backends() {
		if err := UseBackend(name); err != nil {
			t.Fatal(err)
		}
		d := BackendDetail()
		switch {
		case name == "openblas" && !(strings.HasPrefix(d, "openblas (") && strings.Contains(d, "OpenBLAS")):
			t.Errorf("openblas detail %q: want the build configuration and core type", d)
		case name == "simd" && d != "simd (avx512)" && d != "simd (avx2)":
			t.Errorf("simd detail %q: want the kernel in use", d)
		case name == "gonum" && d != name:
			t.Errorf("%s detail %q: want the bare name", name, d)
		}
	}
}

// countingBackend is a backend with a thread pool that only records its
// size.
type countingBackend struct {
	Backend
	threads int
}

func (c *countingBackend) Threads() int     { return c.threads }
func (c *countingBackend) SetThreads(n int) { c.threads = n }

// TestSingleThreadedBLASOverlapping: overlapping sections keep the pool at
// one thread while any is open and restore the count when the last
// closes, in whatever order they close (a save-and-restore per section
// left it at 1 when the first to enter left first).
func TestSingleThreadedBLASOverlapping(t *testing.T) {
	fake := &countingBackend{Backend: active, threads: 8}
	saved := active
	active = fake
	defer func() { active = saved }()
	a := SingleThreadedBLAS()
	b := SingleThreadedBLAS()
	if fake.threads != 1 {
		t.Fatalf("inside: %d threads", fake.threads)
	}
	a()
	a() // a second release is a no-op
	if fake.threads != 1 {
		t.Fatalf("one section still open: %d threads", fake.threads)
	}
	b()
	if fake.threads != 8 {
		t.Fatalf("after both: %d threads, want 8", fake.threads)
	}
}

// TestDefaultBackend: OpenBLAS when compiled in, else simd where the CPU
// has its kernels, else gonum.
func TestDefaultBackend(t *testing.T) {
	want := "gonum"
	switch {
	case openblasBuild:
		want = "openblas"
	case GetBackend("simd") != nil:
		want = "simd"
	}
	if got := BackendName(); got != want {
		t.Fatalf("default backend %q, want %q", got, want)
	}
}
