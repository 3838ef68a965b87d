package ag

import (
	"math/rand"
	"testing"

	"github.com/textarmor/textarmor/tensor"
)

// The sparse Conv1D backward (taken when the output gradient is mostly
// zero, as under max pooling) gives the dense GEMM path's gradients, for
// the input and the weight together and each alone, and is taken only
// when the gradient is sparse enough.
func TestConv1DSparseBackwardMatchesDense(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	const b, l, d, f, width = 3, 40, 5, 6, 4
	lo := l - width + 1
	G := make([]float32, b*lo*f)
	for bi := 0; bi < b; bi++ {
		for k := 0; k < f; k++ {
			if (bi+k)%5 != 0 { // some filters without a gradient, as after a ReLU
				G[(bi*lo+r.Intn(lo))*f+k] = float32(r.NormFloat64())
			}
		}
	}
	G[(1*lo+3)*f+2] += 0.5 // two windows of one filter in one text
	if nz := conv1DNonzeros(G, lo, f, b*l*f/sparseConvWork); nz == nil {
		t.Fatal("a max-pooling gradient did not take the sparse path")
	}
	dense := make([]float32, len(G))
	for i := range dense {
		dense[i] = 1
	}
	if nz := conv1DNonzeros(dense, lo, f, b*l*f/sparseConvWork); nz != nil {
		t.Fatal("a dense gradient took the sparse path")
	}
	// Positions reading shared rows of a smaller input (Conv1DRows), too.
	const u = 7
	shared := make([]int, b*l)
	for p := range shared {
		shared[p] = r.Intn(u)
	}
	for _, rows := range [][]int{nil, shared} {
		xT, wT := randT(r, b, l, d), randT(r, d, width*f)
		if rows != nil {
			xT = randT(r, u, d)
		}
		checkConvBackward(t, G, xT, wT, nil, rows, b, l, lo, d, f, width)
		// A scale per position (FLAT's word masks, Conv1DRowsScaled).
		checkConvBackward(t, G, xT, wT, randT(r, b*l), rows, b, l, lo, d, f, width)
	}
}

func checkConvBackward(t *testing.T, G []float32, xT, wT, scaleT *tensor.Tensor, rows []int, b, l, lo, d, f, width int) {
	for _, needs := range []struct{ x, w bool }{{true, true}, {true, false}, {false, true}} {
		grads := func(sparse bool) (gx, gw, gs []float32) {
			tp := NewTape()
			x, w := tp.Leaf(xT), tp.Leaf(wT)
			if !needs.x {
				x = tp.Const(xT)
			}
			if !needs.w {
				w = tp.Const(wT)
			}
			var scale *Var
			if scaleT != nil {
				scale = tp.Leaf(scaleT)
			}
			if sparse {
				conv1DBackwardSparse(tp, x, rows, scale, w, conv1DNonzeros(G, lo, f, len(G)), b, l, d, f, width)
			} else {
				conv1DBackwardDense(tp, x, rows, scale, w, G, b, l, lo, d, f, width)
			}
			if x.Grad != nil {
				gx = x.Grad.Data
			}
			if w.Grad != nil {
				gw = w.Grad.Data
			}
			if scale != nil && scale.Grad != nil {
				gs = scale.Grad.Data
			}
			return gx, gw, gs
		}
		sx, sw, ss := grads(true)
		dx, dw, ds := grads(false)
		if (ss != nil) != (scaleT != nil) || (ds != nil) != (scaleT != nil) {
			t.Fatalf("rows %v needs %+v: scale gradients present %v/%v", rows != nil, needs, ss != nil, ds != nil)
		}
		if diff := tensor.MaxAbsDiff(ss, ds); diff > 1e-4 {
			t.Errorf("rows %v needs %+v: scale gradients differ by %g", rows != nil, needs, diff)
		}
		if (sx != nil) != needs.x || (sw != nil) != needs.w || (dx != nil) != needs.x || (dw != nil) != needs.w {
			t.Fatalf("rows %v needs %+v: gradients present x %v/%v w %v/%v", rows != nil, needs, sx != nil, dx != nil, sw != nil, dw != nil)
		}
		if needs.x {
			if diff := tensor.MaxAbsDiff(sx, dx); diff > 1e-5 {
				t.Errorf("rows %v needs %+v: input gradients differ by %g", rows != nil, needs, diff)
			}
		}
		if needs.w {
			if diff := tensor.MaxAbsDiff(sw, dw); diff > 1e-5 {
				t.Errorf("rows %v needs %+v: weight gradients differ by %g", rows != nil, needs, diff)
			}
		}
	}
}
