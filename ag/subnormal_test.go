package ag

import (
	"testing"

	"github.com/textarmor/textarmor/tensor"
)

func countSubnormals(x []float32) int {
	n := 0
	for _, v := range x {
		if v != 0 && subnormal(v) {
			n++
		}
	}
	return n
}

// Softmax flushes probabilities below float32's normal range to zero:
// exp(−100) is a subnormal 3.7e-44 otherwise.
func TestSoftmaxFlushesSubnormals(t *testing.T) {
	tp := NewTape()
	x := tp.Leaf(tensor.From([]float32{0, -100, -90, -3}, 1, 4))
	y := tp.Softmax(x)
	if n := countSubnormals(y.Data()); n > 0 {
		t.Fatalf("softmax %v: %d subnormal probabilities", y.Data(), n)
	}
	if y.Data()[1] != 0 || y.Data()[3] == 0 {
		t.Fatalf("softmax %v: want exp(-100) flushed to 0 and exp(-3) kept", y.Data())
	}
	tp.Backward(tp.Sum(tp.Mul(y, tp.Const(tensor.From([]float32{1, 2, 3, 4}, 1, 4)))))
	if n := countSubnormals(x.Grad.Data); n > 0 {
		t.Fatalf("softmax gradient %v: %d subnormals", x.Grad.Data, n)
	}
}

// The interval LSTM's backward pass flushes its pre-activation gradients:
// an input gate saturated at σ(−87.2) ≈ 1.3e-38 (the smallest normal
// float32s) makes its gradient subnormal when the other gates are not
// saturated, and subnormals make the GEMMs they feed ten times slower.
func TestIntervalLSTMGradientsHaveNoSubnormals(t *testing.T) {
	const b, steps, h = 2, 3, 4
	lo := tensor.New(b, steps, 4*h)
	width := tensor.New(b, steps, 4*h)
	for i := range lo.Data {
		switch (i % (4 * h)) / h { // gate blocks i, f, g, o
		case 0:
			lo.Data[i] = -87.2 + 0.01*float32(i%3)
		case 2:
			lo.Data[i] = -1
		default:
			lo.Data[i] = 0
		}
		width.Data[i] = 0.05
	}
	wh := tensor.New(h, 4*h)
	for i := range wh.Data {
		wh.Data[i] = 0.01 * float32(i%5)
	}
	tp := NewTape()
	pl, pu := tp.Leaf(lo), tp.Leaf(tensor.New(b, steps, 4*h))
	copy(pu.Value.Data, lo.Data)
	tensor.Axpy(1, width.Data, pu.Value.Data)
	out := tp.IntervalLSTM(pl, pu, tp.Leaf(wh), []int{3, 2}, false)
	tp.Backward(tp.Sum(out))
	if pl.Grad == nil || pu.Grad == nil {
		t.Fatal("no input gradient")
	}
	if n := countSubnormals(pl.Grad.Data) + countSubnormals(pu.Grad.Data); n > 0 {
		t.Fatalf("%d subnormal input gradients", n)
	}
}

// MixRows skips a term whose weight is below 2⁻⁶⁰ of its row's total
// weight and keeps one above it: on a column where the main term is zero,
// only the small term shows.
func TestMixRowsSkipsNegligibleWeights(t *testing.T) {
	table := tensor.From([]float32{0, 1, 3, 1}, 2, 2) // rows (0, 1) and (3, 1)
	w := tensor.From([]float32{1, 0x1p-50, 1, 0x1p-62}, 2, 2)
	tp := NewTape()
	out := tp.MixRows(tp.Leaf(w), table, []int32{0, 1, 0, 1}).Data()
	if want := float32(3 * 0x1p-50); out[0] != want {
		t.Errorf("weight 2^-50: column 0 is %g, want %g", out[0], want)
	}
	if out[2] != 0 {
		t.Errorf("weight 2^-62: column 0 is %g, want 0 (term skipped)", out[2])
	}
}
