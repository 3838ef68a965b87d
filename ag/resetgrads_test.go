package ag

import (
	"math/rand"
	"testing"

	"github.com/textarmor/textarmor/tensor"
)

// TestResetGrads: Backward of one loss, ResetGrads, Backward of another
// on the same tape gives the first loss's input gradient in between and
// the sum of both losses' gradients at the end, as two separate tapes do.
// The graph has the ops a transformer and a BiLSTM run (attention, layer
// norm, GELU, a Reshape that hands its buffer on, the LSTM pair, whose
// joint backward pass keeps state between its two outputs), two losses
// sharing it, as RAR's classification and reconstruction losses do.
func TestResetGrads(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	const b, l, h = 2, 4, 6
	lengths := []int{4, 2}
	x := randT(r, b, l, h)
	ws := map[string]*Param{
		"qkv": NewParam("qkv", randT(r, 3*h, h)), "qkvb": NewParam("qkvb", randT(r, 3*h)),
		"g": NewParam("g", positive(r, h)), "beta": NewParam("beta", randT(r, h)),
		"fwx": NewParam("fwx", randT(r, h, 4*3)), "fwh": NewParam("fwh", randT(r, 3, 4*3)), "fb": NewParam("fb", randT(r, 4*3)),
		"bwx": NewParam("bwx", randT(r, h, 4*3)), "bwh": NewParam("bwh", randT(r, 3, 4*3)), "bb": NewParam("bb", randT(r, 4*3)),
		"out1": NewParam("out1", randT(r, 6, 3)), "out2": NewParam("out2", randT(r, 6, 5)),
	}
	// build returns the two losses on tp with x as a leaf.
	build := func(tp *Tape) (xv, l1, l2 *Var) {
		xv = tp.Leaf(x)
		a := tp.SelfAttentionPacked(tp.LinearT(xv, ws["qkv"].Var, ws["qkvb"].Var), 2, lengths, 0)
		hid := tp.GELU(tp.LayerNorm(tp.Add(xv, a), ws["g"].Var, ws["beta"].Var, 1e-5))
		f, bw := tp.LSTMPair(hid, LSTMWeights{Wx: ws["fwx"].Var, Wh: ws["fwh"].Var, Bias: ws["fb"].Var},
			LSTMWeights{Wx: ws["bwx"].Var, Wh: ws["bwh"].Var, Bias: ws["bb"].Var, Reverse: true}, lengths)
		tokens := tp.Concat(-1, f, bw)
		s := tp.MeanOverTime(tokens, lengths)
		l1 = tp.CrossEntropy(tp.MatMul(s, ws["out1"].Var, false), []int{1, 2}, nil)
		rows := tp.Gather(tp.Reshape(tokens, b*l, 6), []int{0, 1, 2, 3, 4, 5})
		l2 = tp.Scale(tp.CrossEntropy(tp.MatMul(rows, ws["out2"].Var, false), []int{0, 1, 2, 3, 4, 0}, nil), 0.3)
		return xv, l1, l2
	}
	grads := func() map[string][]float32 {
		out := map[string][]float32{}
		for n, p := range ws {
			out[n] = append([]float32(nil), p.Grad.Data...)
			p.ZeroGrad()
		}
		return out
	}
	for _, p := range ws {
		p.Grad = tensor.New(p.Value.Shape...)
	}
	// Reference: each loss on a tape of its own.
	tp := NewTape()
	xv, l1, _ := build(tp)
	tp.Backward(l1)
	x1, g1 := append([]float32(nil), xv.Grad.Data...), grads()
	tp = NewTape()
	xv, _, l2 := build(tp)
	tp.Backward(l2)
	x2, g2 := append([]float32(nil), xv.Grad.Data...), grads()

	tp = NewTape()
	xv, l1, l2 = build(tp)
	tp.Backward(l1)
	if d := tensor.MaxAbsDiff(xv.Grad.Data, x1); d > 1e-6 {
		t.Fatalf("first backward: input gradient differs by %g", d)
	}
	tp.ResetGrads()
	tp.Backward(l2)
	for i := range x1 {
		x1[i] += x2[i]
	}
	if d := tensor.MaxAbsDiff(xv.Grad.Data, x1); d > 1e-5 {
		t.Errorf("after the second backward the input gradient differs from the sum by %g", d)
	}
	got := grads()
	for n := range ws {
		want := append([]float32(nil), g1[n]...)
		for i := range want {
			want[i] += g2[n][i]
		}
		if d := tensor.MaxAbsDiff(got[n], want); d > 1e-5 {
			t.Errorf("%s: gradient differs from the sum of the two losses' by %g", n, d)
		}
	}
}
