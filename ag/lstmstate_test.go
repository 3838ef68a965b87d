package ag

import (
	"math/rand"
	"testing"

	"github.com/textarmor/textarmor/tensor"
)

// Two segments of LSTMState, the second starting from the first's final
// states, compute the hidden states of one LSTM over the whole sequence;
// rows of different lengths keep the state of their last real step.
func TestLSTMStateCarriesAcrossSegments(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	const b, steps, d, h = 3, 8, 4, 5
	x, wx, wh, bias := randT(r, b, steps, d), randT(r, d, 4*h), scaled(randT(r, h, 4*h), 0.5), randT(r, 4*h)
	tp := NewTape()
	whole := tp.LSTM(tp.Const(x), tp.Const(wx), tp.Const(wh), tp.Const(bias), nil, false).Data()
	cut := 3
	part := func(from, to int) *tensor.Tensor {
		p := tensor.New(b, to-from, d)
		for i := range b {
			copy(p.Data[i*(to-from)*d:(i+1)*(to-from)*d], x.Data[(i*steps+from)*d:(i*steps+to)*d])
		}
		return p
	}
	carry := &LSTMCarry{}
	first := tp.LSTMState(tp.Const(part(0, cut)), tp.Const(wx), tp.Const(wh), tp.Const(bias), nil, carry).Data()
	second := tp.LSTMState(tp.Const(part(cut, steps)), tp.Const(wx), tp.Const(wh), tp.Const(bias), nil, carry).Data()
	for i := range b {
		for s := range steps {
			var got []float32
			if s < cut {
				got = first[(i*cut+s)*h : (i*cut+s+1)*h]
			} else {
				got = second[(i*(steps-cut)+s-cut)*h : (i*(steps-cut)+s-cut+1)*h]
			}
			if dd := tensor.MaxAbsDiff(got, whole[(i*steps+s)*h:(i*steps+s+1)*h]); dd > 1e-5 {
				t.Fatalf("row %d step %d: segmented LSTM differs by %g", i, s, dd)
			}
		}
		if dd := tensor.MaxAbsDiff(carry.H[i*h:(i+1)*h], whole[(i*steps+steps-1)*h:(i*steps+steps)*h]); dd > 1e-6 {
			t.Fatalf("row %d: final state differs by %g from the last hidden state", i, dd)
		}
	}
	// Short rows end with the state of their own last step.
	c := &LSTMCarry{}
	out := tp.LSTMState(tp.Const(x), tp.Const(wx), tp.Const(wh), tp.Const(bias), []int{8, 2, 5}, c).Data()
	for i, n := range []int{8, 2, 5} {
		if dd := tensor.MaxAbsDiff(c.H[i*h:(i+1)*h], out[(i*steps+n-1)*h:(i*steps+n)*h]); dd > 1e-6 {
			t.Fatalf("row %d of length %d: final state differs by %g", i, n, dd)
		}
	}
}

// The backward pass from a non-zero initial state: the gradients of the
// input and the weights against finite differences.
func TestLSTMStateGradients(t *testing.T) {
	r := rand.New(rand.NewSource(6))
	const b, steps, d, h = 2, 4, 3, 4
	h0, c0 := randT(r, b, h), randT(r, b, h)
	err := GradCheck([]*tensor.Tensor{randT(r, b, steps, d), randT(r, d, 4*h), scaled(randT(r, h, 4*h), 0.5), randT(r, 4*h)}, 1e-2, 2e-2,
		func(tp *Tape, v []*Var) *Var {
			carry := &LSTMCarry{H: h0.Data, C: c0.Data}
			return tp.LSTMState(v[0], v[1], v[2], v[3], []int{4, 3}, carry)
		})
	if err != nil {
		t.Fatal(err)
	}
}

// LastOverTime takes each row's last real step (a length 0 counts as 1,
// as the other poolings count it), and passes the finite-difference check.
func TestLastOverTime(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	x := randT(r, 3, 4, 2)
	tp := NewTape()
	out := tp.LastOverTime(tp.Const(x), []int{4, 1, 0}).Data()
	want := append(append(append([]float32{}, x.Data[6:8]...), x.Data[8:10]...), x.Data[16:18]...)
	if tensor.MaxAbsDiff(out, want) != 0 {
		t.Fatalf("last steps %v, want %v", out, want)
	}
	if err := GradCheck([]*tensor.Tensor{x}, 1e-2, 1e-2, func(tp *Tape, v []*Var) *Var {
		return tp.LastOverTime(v[0], []int{2, 4, 3})
	}); err != nil {
		t.Fatal(err)
	}
}
