package sgemm

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// kernels returns every kernel the CPU runs, or skips: the AVX2 kernel is
// tested on AVX-512 machines too.
func kernels(t testing.TB) []*Kernel {
	ks := Kernels()
	if len(ks) == 0 {
		t.Skip("no SIMD kernel on this CPU/build (needs amd64 with AVX2 and FMA, without -tags purego)")
	}
	return ks
}

// problem is one GEMM call with its operands laid out with the given
// leading dimensions (extra columns hold garbage the product must not read).
type problem struct {
	ta, tb      bool
	m, n, k     int
	lda, ldb    int
	ldc         int
	alpha, beta float32
	a, b, c     []float32
}

func newProblem(r *rand.Rand, ta, tb bool, m, n, k, pad int, alpha, beta float32) *problem {
	p := &problem{ta: ta, tb: tb, m: m, n: n, k: k, alpha: alpha, beta: beta}
	ra, ca := m, k
	if ta {
		ra, ca = k, m
	}
	rb, cb := k, n
	if tb {
		rb, cb = n, k
	}
	p.lda, p.ldb, p.ldc = ca+pad, cb+pad, n+pad
	p.a = fill(r, (ra-1)*p.lda+ca)
	p.b = fill(r, (rb-1)*p.ldb+cb)
	p.c = fill(r, (m-1)*p.ldc+n)
	return p
}

func fill(r *rand.Rand, n int) []float32 {
	x := make([]float32, max(n, 0))
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

func (p *problem) at(x []float32, ld int, trans bool, i, j int) float32 {
	if trans {
		return x[j*ld+i]
	}
	return x[i*ld+j]
}

// check runs kern on a copy of C and compares every element with a
// float64 reference, within float32 rounding: each of the k products and
// sums, then alpha and beta, may lose half an ulp of the magnitudes
// involved (γ_k = k·u bounds the accumulated error).
func (p *problem) check(t *testing.T, kern *Kernel, threads int) []float32 {
	t.Helper()
	got := append([]float32(nil), p.c...)
	Gemm(kern, threads, p.ta, p.tb, p.m, p.n, p.k, p.alpha, p.a, p.lda, p.b, p.ldb, p.beta, got, p.ldc)
	const u = 1.0 / (1 << 24)
	for i := range p.m {
		for j := range p.n {
			var s, mag float64
			for q := range p.k {
				x := float64(p.at(p.a, p.lda, p.ta, i, q)) * float64(p.at(p.b, p.ldb, p.tb, q, j))
				s += x
				mag += math.Abs(x)
			}
			c0 := float64(p.c[i*p.ldc+j])
			want := float64(p.alpha) * s
			bound := float64(p.k+2) * u * math.Abs(float64(p.alpha)) * mag
			if p.beta != 0 {
				want += float64(p.beta) * c0
				bound += 2 * u * math.Abs(float64(p.beta)*c0)
			}
			bound += 1e-30
			if d := math.Abs(float64(got[i*p.ldc+j]) - want); !(d <= 2*bound) {
				t.Fatalf("%s %v: C[%d][%d] = %g, want %g (diff %g, bound %g)", kern.Name, p, i, j, got[i*p.ldc+j], want, d, 2*bound)
			}
		}
	}
	// Padding between rows of C is not touched.
	for i := 0; i < p.m-1; i++ {
		for j := p.n; j < p.ldc; j++ {
			if got[i*p.ldc+j] != p.c[i*p.ldc+j] {
				t.Fatalf("%s %v: padding C[%d][%d] written", kern.Name, p, i, j)
			}
		}
	}
	return got
}

func (p *problem) String() string {
	return fmt.Sprintf("ta=%v tb=%v %d×%d×%d ld %d,%d,%d alpha %g beta %g", p.ta, p.tb, p.m, p.n, p.k, p.lda, p.ldb, p.ldc, p.alpha, p.beta)
}

// TestGemmShapes covers tile edges (1, primes, one past a tile, blocks of
// kc and mc and beyond), every transpose, strided views and alpha/beta,
// for every kernel; results must be identical for every kernel and thread
// count (each element is the same chain of operations).
func TestGemmShapes(t *testing.T) {
	ks := kernels(t)
	r := rand.New(rand.NewSource(1))
	shapes := [][3]int{
		{1, 1, 1}, {1, 1, 7}, {2, 3, 5}, {7, 13, 11}, {6, 16, 4}, {12, 32, 8}, {13, 33, 9},
		{5, 17, 31}, {23, 47, 257}, {64, 64, 32}, {1, 384, 384}, {3, 100, 513},
		{241, 37, 19}, {250, 70, 300}, {61, 4100, 3}, {1, 200, 600}, {1, 130, 5}, {2, 1030, 9}, {40, 700, 50},
	}
	ab := [][2]float32{{1, 0}, {0.5, 2}, {-1.5, 1}, {1, -0.25}}
	for si, s := range shapes {
		for v := range 4 {
			ta, tb := v&1 != 0, v&2 != 0
			x := ab[(si+v)%len(ab)]
			pad := (si + v) % 3 * 5
			p := newProblem(r, ta, tb, s[0], s[1], s[2], pad, x[0], x[1])
			var ref []float32
			for _, kern := range ks {
				for _, th := range []int{1, 2, 3} {
					got := p.check(t, kern, th)
					if ref == nil {
						ref = got
					} else if !equalBits(ref, got) {
						t.Fatalf("%s threads %d %v: differs from %s threads 1", kern.Name, th, p, ks[0].Name)
					}
				}
			}
		}
	}
}

func equalBits(a, b []float32) bool {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return len(a) == len(b)
}

// TestGemmBetaZeroOverwritesNaN: beta == 0 means C is output only, as in
// BLAS, even where it holds NaN or Inf (fresh scratch buffers do).
func TestGemmBetaZeroOverwritesNaN(t *testing.T) {
	for _, kern := range kernels(t) {
		for _, s := range [][3]int{{1, 1, 1}, {13, 35, 20}, {100, 70, 600}} {
			m, n, k := s[0], s[1], s[2]
			r := rand.New(rand.NewSource(2))
			p := newProblem(r, false, false, m, n, k, 0, 1, 0)
			for i := range p.c {
				p.c[i] = float32(math.NaN())
				if i%3 == 0 {
					p.c[i] = float32(math.Inf(-1))
				}
			}
			p.check(t, kern, 2)
		}
	}
}

// TestGemmZeroK: k == 0 scales C by beta (0 clears it).
func TestGemmZeroK(t *testing.T) {
	kern := kernels(t)[0]
	c := []float32{1, 2, float32(math.NaN()), 4}
	Gemm(kern, 1, false, false, 2, 2, 0, 1, nil, 1, nil, 2, 3, c, 2)
	if c[0] != 3 || c[3] != 12 {
		t.Fatalf("beta 3: %v", c)
	}
	Gemm(kern, 1, false, false, 2, 2, 0, 1, nil, 1, nil, 2, 0, c, 2)
	for _, v := range c {
		if v != 0 {
			t.Fatalf("beta 0: %v", c)
		}
	}
}

// TestGemmBadArgs: sizes the slices cannot hold panic before the kernels
// write anything.
func TestGemmBadArgs(t *testing.T) {
	kern := kernels(t)[0]
	a, b, c := make([]float32, 6), make([]float32, 6), make([]float32, 3)
	for name, f := range map[string]func(){
		"short C": func() { Gemm(kern, 1, false, false, 2, 3, 2, 1, a, 2, b, 3, 0, c, 3) },
		"ldc < n": func() { Gemm(kern, 1, false, false, 1, 3, 2, 1, a, 2, b, 3, 0, c, 2) },
		"short A": func() { Gemm(kern, 1, false, false, 4, 1, 2, 1, a, 2, b, 1, 0, c, 1) },
		"lda < k": func() { Gemm(kern, 1, false, false, 1, 1, 3, 1, a, 2, b, 1, 0, c, 1) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// TestGemmAgreesWithGonum: the backends agree within float32 accumulation
// error on a product of the engine's size (the MiniLM feed-forward).
func TestGemmAgreesWithGonum(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	m, n, k := 130, 1536, 384
	a, b := fill(r, m*k), fill(r, k*n)
	want := make([]float32, m*n)
	gonum.Implementation{}.Sgemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, a, k, b, n, 0, want, n)
	for _, kern := range kernels(t) {
		got := make([]float32, m*n)
		Gemm(kern, 2, false, false, m, n, k, 1, a, k, b, n, 0, got, n)
		for i := range got {
			// Both are within k·u·Σ|a||b| of the exact value; with unit
			// normal entries Σ|a||b| ≈ 0.64·k.
			if d := math.Abs(float64(got[i] - want[i])); d > 2*float64(k)*0.64*float64(k)/(1<<24)*4 {
				t.Fatalf("%s: element %d: %g, gonum %g", kern.Name, i, got[i], want[i])
			}
		}
	}
}

// FuzzGemm checks random shapes, transposes, strides and alpha/beta
// against the float64 reference on every kernel.
func FuzzGemm(f *testing.F) {
	f.Add(uint8(1), uint8(1), uint16(1), uint8(0), uint8(0), int8(2), int8(0))
	f.Add(uint8(13), uint8(33), uint16(257), uint8(3), uint8(2), int8(-3), int8(1))
	f.Add(uint8(64), uint8(64), uint16(32), uint8(2), uint8(0), int8(1), int8(4))
	f.Fuzz(func(t *testing.T, m, n uint8, k uint16, trans, pad uint8, alpha, beta int8) {
		ks := Kernels()
		if len(ks) == 0 {
			t.Skip("no SIMD kernel")
		}
		if m == 0 || n == 0 || k == 0 || k > 700 {
			return
		}
		r := rand.New(rand.NewSource(int64(m)*7 + int64(n)*131 + int64(k)))
		p := newProblem(r, trans&1 != 0, trans&2 != 0, int(m), int(n), int(k), int(pad%9), float32(alpha)/2, float32(beta)/4)
		var ref []float32
		for _, kern := range ks {
			got := p.check(t, kern, 1+int(pad%3))
			if ref != nil && !equalBits(ref, got) {
				t.Fatalf("%s %v: kernels differ", kern.Name, p)
			}
			ref = got
		}
	})
}

// BenchmarkKernels reports GFLOP/s of each kernel on the engine's shapes
// (m×n×k): square, CNN convolution, LSTM time step, MiniLM feed-forward,
// attention scores (B transposed), batch-1 layer, single-threaded and
// on two goroutines.
func BenchmarkKernels(b *testing.B) {
	shapes := []struct {
		name    string
		m, n, k int
		tb      bool
	}{
		{"sgemm1024", 1024, 1024, 1024, false},
		{"cnn3200x300x1200", 3200, 300, 1200, false},
		{"lstm64x1024x256", 64, 1024, 256, false},
		{"minilm2048x1536x384", 2048, 1536, 384, false},
		{"attn128x128x32T", 128, 128, 32, true},
		{"attn64x64x32T", 64, 64, 32, true},
		{"batch1x384x384T", 1, 384, 384, true},
	}
	r := rand.New(rand.NewSource(4))
	for _, kern := range kernels(b) {
		for _, s := range shapes {
			a, bb, c := fill(r, s.m*s.k), fill(r, s.k*s.n), make([]float32, s.m*s.n)
			ldb := s.n
			if s.tb {
				ldb = s.k
			}
			for _, th := range []int{1, 2} {
				b.Run(fmt.Sprintf("%s/%s/t%d", kern.Name, s.name, th), func(b *testing.B) {
					for b.Loop() {
						Gemm(kern, th, false, s.tb, s.m, s.n, s.k, 1, a, s.k, bb, ldb, 0, c, s.n)
					}
					b.ReportMetric(2*float64(s.m*s.n*s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				})
			}
		}
	}
}

// BenchmarkPack reports the packing cost per element: it is paid once per
// element of A and of B, against k (or n, m) multiply-adds.
func BenchmarkPack(b *testing.B) {
	r := rand.New(rand.NewSource(5))
	const kc, ld = 256, 384
	src := fill(r, 384*ld)
	for _, w := range []int{6, 12, 16, 32} {
		dst := make([]float32, kc*384)
		b.Run(fmt.Sprintf("rows/w%d", w), func(b *testing.B) {
			for b.Loop() {
				packA(dst, false, src, ld, 0, 0, 384/w*w, kc, w)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(384/w*w*kc), "ns/elem")
		})
		b.Run(fmt.Sprintf("cols/w%d", w), func(b *testing.B) {
			for b.Loop() {
				packB(dst, false, src, ld, 0, 0, kc, 384/w*w, w)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(384/w*w*kc), "ns/elem")
		})
	}
}
