package ag

import (
	"math"
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
