package ag

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"testing"
)

func TestFastMathAccuracy(t *testing.T) {
	var worstExp, worstTanh, worstSig float64
	for x := -87.0; x < 88; x += 0.00731 {
		want := math.Exp(x)
		got := float64(expf(float32(x)))
		// compare against the exp of the float32-rounded input
		want = math.Exp(float64(float32(x)))
		if rel := math.Abs(got-want) / want; rel > worstExp {
			worstExp = rel
		}
	}
	for x := -12.0; x < 12; x += 0.000377 {
		xf := float64(float32(x))
		if d := math.Abs(float64(tanh32(float32(x))) - math.Tanh(xf)); d > worstTanh {
			worstTanh = d
		}
		if d := math.Abs(float64(sigmoid32(float32(x))) - 1/(1+math.Exp(-xf))); d > worstSig {
			worstSig = d
		}
	}
	if worstExp > 4e-7 || worstTanh > 3e-7 || worstSig > 2e-7 {
		t.Fatalf("worst errors: exp rel %g, tanh abs %g, sigmoid abs %g", worstExp, worstTanh, worstSig)
	}
	if !math.IsInf(float64(expf(100)), 1) || expf(-100) != 0 || tanh32(50) != 1 || tanh32(-50) != -1 {
		t.Fatal("range limits wrong")
	}
}

func BenchmarkExpf(b *testing.B) {
	var s float32
	for i := 0; i < b.N; i++ {
		s += expf(float32(i%64) * 0.1)
	}
	_ = s
}

func BenchmarkMathExp(b *testing.B) {
	var s float32
	for i := 0; i < b.N; i++ {
		s += float32(math.Exp(float64(float32(i%64) * 0.1)))
	}
	_ = s
}

// LSTMStep and LSTMStepAdd are the scalar cell, bit for bit, on every
// range the activations branch on: with and without the AVX2 kernel, for
// unit counts that leave no, some and only scalar tail units, with and
// without the added input projection and bias.
func TestLSTMStepMatchesScalarCell(t *testing.T) {
	defer setAVX2(setAVX2(true))
	defer setAVX512(setAVX512(true))
	rng := rand.New(rand.NewSource(1))
	for _, kernel := range []string{"scalar", "avx2", "avx512"} {
		setAVX2(kernel != "scalar")
		setAVX512(kernel == "avx512")
		for _, n := range []int{1, 7, 8, 16, 24, 37, 128, 300} {
			for trial := 0; trial < 60; trial++ {
				scale := []float32{0.01, 0.1, 1, 5, 30, 100}[trial%6]
				checkLSTMStep(t, rng, n, scale, trial%2 == 1, kernel)
			}
		}
	}
	t.Logf("kernels on this CPU: avx2 %v, avx512 %v", cpuHas(setAVX2), cpuHas(setAVX512))
}

// cpuHas reports whether set(true) can turn a kernel on, leaving it as it was.
func cpuHas(set func(bool) bool) bool {
	old := set(true)
	return set(old)
}

func checkLSTMStep(t *testing.T, rng *rand.Rand, n int, scale float32, withAdd bool, kernel string) {
	t.Helper()
	normal := func(m int) []float32 {
		v := make([]float32, m)
		for i := range v {
			v[i] = scale * float32(rng.NormFloat64())
		}
		return v
	}
	z, c := normal(4*n), normal(n)
	var add, bias []float32
	if withAdd {
		add, bias = normal(4*n), normal(4*n)
	}
	wantC, wantH := make([]float32, n), make([]float32, n)
	wantZ := make([]float32, 4*n)
	for j := range z {
		wantZ[j] = z[j]
		if withAdd {
			wantZ[j] = z[j] + add[j] + bias[j]
		}
	}
	for k := 0; k < n; k++ {
		ig, fg := sigmoid32(wantZ[k]), sigmoid32(wantZ[n+k])
		gg, og := tanh32(wantZ[2*n+k]), sigmoid32(wantZ[3*n+k])
		wantZ[k], wantZ[n+k], wantZ[2*n+k], wantZ[3*n+k] = ig, fg, gg, og
		wantC[k] = fg*c[k] + ig*gg
		wantH[k] = og * tanh32(wantC[k])
	}
	h := make([]float32, n)
	tmp := make([]float32, 4*n)
	if withAdd {
		LSTMStepAdd(z, add, bias, c, h, tmp)
	} else {
		LSTMStep(z, c, h, tmp)
	}
	where := fmt.Sprintf("%s, %d units, scale %g, add %v", kernel, n, scale, withAdd)
	for k := 0; k < n; k++ {
		if tmp[k] != tanh32(wantC[k]) {
			t.Fatalf("%s: unit %d: tmp holds %v, not tanh(c) %v", where, k, tmp[k], tanh32(wantC[k]))
		}
	}
	for k := range wantZ {
		if z[k] != wantZ[k] {
			t.Fatalf("%s: gate %d = %v, scalar %v", where, k, z[k], wantZ[k])
		}
	}
	for k := range h {
		if c[k] != wantC[k] || h[k] != wantH[k] {
			t.Fatalf("%s: unit %d: c %v h %v, scalar c %v h %v", where, k, c[k], h[k], wantC[k], wantH[k])
		}
	}
}

// expVec (a vector kernel on amd64) equals expf bit for bit: a dense sweep
// of the range, both clamps and their neighbours, values whose scaled
// argument is an integer (the floor's edge), ±Inf, and lengths that leave a
// scalar tail.
func TestExpVecMatchesExpf(t *testing.T) {
	var xs []float32
	for x := -100.0; x < 100; x += 0.00917 {
		xs = append(xs, float32(x))
	}
	for _, e := range []float32{88.3762626647949, -87.3365478515625} {
		xs = append(xs, e, math.Nextafter32(e, 0), math.Nextafter32(e, 200*e))
	}
	for n := -130; n <= 130; n++ {
		// t = x·log2e + 0.5 lands on or next to n
		x := (float32(n) - 0.5) / 1.44269504088896341
		xs = append(xs, x, math.Nextafter32(x, 1000), math.Nextafter32(x, -1000))
	}
	xs = append(xs, 0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), 1e-30, -1e-30, 1e30, -1e30)
	defer setAVX2(setAVX2(true))
	for _, avx2 := range []bool{true, false} { // AVX2 where the CPU has it, then SSE2
		setAVX2(avx2)
		for _, n := range []int{len(xs), len(xs) - 1, len(xs) - 2, len(xs) - 3, len(xs) - 4, len(xs) - 5, 7, 3, 1} {
			got := append([]float32(nil), xs[:n]...)
			expVec(got)
			for i, x := range xs[:n] {
				if want := expf(x); math.Float32bits(got[i]) != math.Float32bits(want) {
					t.Fatalf("avx2 %v, length %d: expVec(%v) = %v (%#x), expf %v (%#x)", avx2, n, x, got[i], math.Float32bits(got[i]), want, math.Float32bits(want))
				}
			}
		}
	}
}

func BenchmarkExpVec(b *testing.B) {
	x := make([]float32, 600)
	r := rand.New(rand.NewSource(1))
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	buf := make([]float32, len(x))
	for i := 0; i < b.N; i++ {
		copy(buf, x)
		expVec(buf)
	}
}

// The gate kernels equal sigmoidFromExp and tanhFromExp bit for bit: a
// sweep through both of tanh's branch edges (|x| = 0.0625 and 9), signed
// zeros and infinities, with the exponentials the LSTM cell passes, and
// lengths that leave a scalar tail.
func TestGateVecsMatchScalar(t *testing.T) {
	var xs []float32
	for x := -12.0; x < 12; x += 0.00271 {
		xs = append(xs, float32(x))
	}
	for _, e := range []float32{0.0625, 9} {
		for _, s := range []float32{1, -1} {
			v := s * e
			xs = append(xs, v, math.Nextafter32(v, 0), math.Nextafter32(v, 100*v))
		}
	}
	xs = append(xs, 0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)))
	sigE, tanhE := make([]float32, len(xs)), make([]float32, len(xs))
	for i, x := range xs {
		ax := float32(math.Abs(float64(x)))
		sigE[i], tanhE[i] = expf(-ax), expf(2*ax)
	}
	for _, n := range []int{len(xs), len(xs) - 1, len(xs) - 2, len(xs) - 3, 2} {
		sig, th := make([]float32, n), make([]float32, n)
		sigmoidFromExpVec(sig, xs[:n], sigE[:n])
		tanhFromExpVec(th, xs[:n], tanhE[:n])
		for i, x := range xs[:n] {
			if w := sigmoidFromExp(x, sigE[i]); math.Float32bits(sig[i]) != math.Float32bits(w) {
				t.Fatalf("sigmoid(%v): vector %v, scalar %v", x, sig[i], w)
			}
			if w := tanhFromExp(x, tanhE[i]); math.Float32bits(th[i]) != math.Float32bits(w) {
				t.Fatalf("tanh(%v): vector %v (%#x), scalar %v (%#x)", x, th[i], math.Float32bits(th[i]), w, math.Float32bits(w))
			}
		}
	}
}

// FastTanhVec equals FastTanh bit for bit, across tanh's branch edges,
// signed zeros, infinities and large values, with and without AVX2 and at
// lengths that leave a scalar tail.
func TestFastTanhVecMatchesFastTanh(t *testing.T) {
	var xs []float32
	for x := -40.0; x < 40; x += 0.00731 {
		xs = append(xs, float32(x))
	}
	for _, e := range []float32{0.0625, 9, 44, 45} {
		for _, s := range []float32{1, -1} {
			v := s * e
			xs = append(xs, v, math.Nextafter32(v, 0), math.Nextafter32(v, 100*v))
		}
	}
	xs = append(xs, 0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), 1e30, -1e30, 1e-30)
	defer setAVX2(setAVX2(true))
	for _, avx2 := range []bool{true, false} {
		setAVX2(avx2)
		for _, n := range []int{len(xs), len(xs) - 1, len(xs) - 3, 5, 1} {
			got := make([]float32, n)
			FastTanhVec(got, xs[:n])
			for i, x := range xs[:n] {
				if w := FastTanh(x); math.Float32bits(got[i]) != math.Float32bits(w) {
					t.Fatalf("avx2 %v, length %d: FastTanhVec(%v) = %v (%#x), FastTanh %v (%#x)", avx2, n, x, got[i], math.Float32bits(got[i]), w, math.Float32bits(w))
				}
			}
		}
	}
}

// lstmCellBackward equals its scalar loop bit for bit on the scalar, AVX2
// and AVX-512 paths, for unit counts with and without a scalar tail.
func TestLSTMCellBackwardMatchesScalarLoop(t *testing.T) {
	defer setAVX2(setAVX2(true))
	defer setAVX512(setAVX512(true))
	rng := rand.New(rand.NewSource(2))
	uniform := func(m int, lo, hi float32) []float32 {
		v := make([]float32, m)
		for i := range v {
			v[i] = lo + (hi-lo)*rng.Float32()
		}
		return v
	}
	for _, kernel := range []string{"scalar", "avx2", "avx512"} {
		setAVX2(kernel != "scalar")
		setAVX512(kernel == "avx512")
		for _, h := range []int{1, 7, 8, 16, 24, 37, 128, 300} {
			for trial := 0; trial < 20; trial++ {
				gates := uniform(4*h, 0, 1)
				copy(gates[2*h:3*h], uniform(h, -1, 1)) // g is a tanh
				dh, dc, gOut := uniform(h, -3, 3), uniform(h, -3, 3), uniform(h, -3, 3)
				tc, cPrev := uniform(h, -1, 1), uniform(h, -5, 5)
				wantDg, wantDc := make([]float32, 4*h), slices.Clone(dc)
				for k := 0; k < h; k++ {
					ig, fg, gg, og := gates[k], gates[h+k], gates[2*h+k], gates[3*h+k]
					dhk := dh[k] + gOut[k]
					dck := wantDc[k] + dhk*og*(1-tc[k]*tc[k])
					wantDg[k] = dck * gg * ig * (1 - ig)
					wantDg[h+k] = dck * cPrev[k] * fg * (1 - fg)
					wantDg[2*h+k] = dck * ig * (1 - gg*gg)
					wantDg[3*h+k] = dhk * tc[k] * og * (1 - og)
					wantDc[k] = dck * fg
				}
				dg := make([]float32, 4*h)
				lstmCellBackward(gates, dg, dh, dc, gOut, tc, cPrev)
				for j := range dg {
					if dg[j] != wantDg[j] {
						t.Fatalf("%s, %d units: dGates[%d] = %v, scalar %v", kernel, h, j, dg[j], wantDg[j])
					}
				}
				for k := range dc {
					if dc[k] != wantDc[k] {
						t.Fatalf("%s, %d units: dc[%d] = %v, scalar %v", kernel, h, k, dc[k], wantDc[k])
					}
				}
			}
		}
	}
}

// intervalCellForward's vector passes give exactly the scalar cell's
// bounds (the reference below is the loop they replaced).
func TestIntervalCellForwardMatchesScalar(t *testing.T) {
	defer setAVX2(setAVX2(true))
	scalar := func(pL, pU, m, rad, cl, cu, g, tc, o []float32) {
		h := len(cl)
		for q := 0; q < 4; q++ {
			for k := 0; k < h; k++ {
				j := q*h + k
				lo, hi := pL[j]+m[j]-rad[j], pU[j]+m[j]+rad[j]
				if q == 2 {
					g[2*q*h+k], g[(2*q+1)*h+k] = tanh32(lo), tanh32(hi)
				} else {
					g[2*q*h+k], g[(2*q+1)*h+k] = sigmoid32(lo), sigmoid32(hi)
				}
			}
		}
		for k := 0; k < h; k++ {
			iL, iU, fL, fU := g[k], g[h+k], g[2*h+k], g[3*h+k]
			gL, gU, oL, oU := g[4*h+k], g[5*h+k], g[6*h+k], g[7*h+k]
			nL := minFirst(fL*cl[k], fU*cl[k]) + minFirst(iL*gL, iU*gL)
			nU := maxFirst(fL*cu[k], fU*cu[k]) + maxFirst(iL*gU, iU*gU)
			tl, tu := tanh32(nL), tanh32(nU)
			tc[k], tc[h+k] = tl, tu
			hl, hu := minFirst(oL*tl, oU*tl), maxFirst(oL*tu, oU*tu)
			o[k], o[h+k] = nL, nU
			o[2*h+k], o[3*h+k] = 0.5*(hl+hu), 0.5*(hu-hl)
			o[4*h+k], o[5*h+k] = hl, hu
		}
	}
	rng := rand.New(rand.NewSource(3))
	for _, avx2 := range []bool{false, true} {
		setAVX2(avx2)
		for _, h := range []int{1, 7, 37, 128} {
			for trial := 0; trial < 30; trial++ {
				scale := []float32{0.01, 0.3, 1, 5, 30, 100}[trial%6]
				vec := func(m int, positive bool) []float32 {
					v := make([]float32, m)
					for i := range v {
						v[i] = scale * float32(rng.NormFloat64())
						if positive && v[i] < 0 {
							v[i] = -v[i]
						}
					}
					return v
				}
				pL, m, rad := vec(4*h, false), vec(4*h, false), vec(4*h, true)
				pU := slices.Clone(pL)
				for j, w := range vec(4*h, true) {
					pU[j] += w
				}
				cl := vec(h, false)
				cu := slices.Clone(cl)
				for k, w := range vec(h, true) {
					cu[k] += w
				}
				g, tc, o := make([]float32, 8*h), make([]float32, 2*h), make([]float32, 6*h)
				wg, wtc, wo := make([]float32, 8*h), make([]float32, 2*h), make([]float32, 6*h)
				intervalCellForward(pL, pU, m, rad, cl, cu, g, tc, o)
				scalar(pL, pU, m, rad, cl, cu, wg, wtc, wo)
				for _, c := range []struct {
					name      string
					got, want []float32
				}{{"gates", g, wg}, {"tanh(c)", tc, wtc}, {"out", o, wo}} {
					for j := range c.got {
						if math.Float32bits(c.got[j]) != math.Float32bits(c.want[j]) {
							t.Fatalf("avx2 %v, %d units, scale %g: %s[%d] = %v, scalar %v", avx2, h, scale, c.name, j, c.got[j], c.want[j])
						}
					}
				}
			}
		}
	}
}
