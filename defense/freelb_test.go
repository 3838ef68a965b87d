package defense

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/train"
)

// carl-rar.md §11 checks 1–3: δ within ε after each update and zero on
// padding, a random start of magnitude about γ/√3; the accumulated
// parameter gradient is the mean of the n passes' gradients, recomputed
// pass by pass with the same δ; each ascent step raises the loss to first
// order; FreeLB trains.
func TestFreeLB(t *testing.T) {
	m, tr, dev := lstmSetup(t, 17)
	b := exBatch(tr[:8], m.Net.Enc.MinLen())
	dim := m.Net.Emb.Dim()
	f, err := NewFreeLB(FreeLBConfig{N: 3, Alpha: 0.3, Gamma: 0.6, Eps: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	var deltas []*tensor.Tensor
	var grads [][]float32
	f.Trace = func(step int, d *tensor.Tensor, g []float32) {
		deltas = append(deltas, d.Clone())
		if g != nil {
			grads = append(grads, append([]float32(nil), g...))
		}
	}
	for _, p := range m.Net.Params() {
		p.ZeroGrad()
	}
	tp := ag.NewTape()
	out, err := f.Loss(tp, m.Net, b)
	if err != nil {
		t.Fatal(err)
	}
	tp.Backward(out.Loss)
	if len(deltas) != 3 || len(grads) != 2 {
		t.Fatalf("%d passes traced, %d gradients; want 3 and 2", len(deltas), len(grads))
	}
	for k, d := range deltas {
		for i := range b.B {
			n := min(b.Lengths[i], b.L)
			r := tensor.Norm(d.Data[i*b.L*dim : (i*b.L+n)*dim])
			if pad := tensor.Norm(d.Data[(i*b.L+n)*dim : (i+1)*b.L*dim]); pad != 0 {
				t.Fatalf("pass %d, example %d: padding moved %g", k, i, pad)
			}
			if k == 0 && (n*dim >= 100 && math.Abs(r-0.6/math.Sqrt(3)) > 0.15*0.6/math.Sqrt(3)) {
				t.Errorf("example %d: ‖δ_0‖ %g, want ≈ γ/√3 = %g", i, r, 0.6/math.Sqrt(3))
			}
			if k > 0 && r > 0.5+1e-6 {
				t.Fatalf("pass %d, example %d: ‖δ‖ %g > ε", k, i, r)
			}
		}
		if k > 0 { // check 3: g_k · (δ_k − δ_{k−1}) > 0
			var dot float64
			for j, g := range grads[k-1] {
				dot += float64(g) * float64(d.Data[j]-deltas[k-1].Data[j])
			}
			if dot <= 0 {
				t.Errorf("ascent step %d: g·Δδ = %g", k, dot)
			}
		}
	}
	// Check 2: the mean of the passes' gradients, by hand.
	got := map[string][]float32{}
	for _, p := range m.Net.Params() {
		got[p.Name] = append([]float32(nil), p.Grad.Data...)
		p.ZeroGrad()
	}
	for _, d := range deltas {
		tp := ag.NewTape()
		_, s := m.Net.Encode(tp, tp.Add(m.Net.EmbedInput(tp, b), tp.Const(d)), b.Lengths)
		tp.Backward(tp.Scale(tp.CrossEntropy(m.Net.Head(tp, s), b.Labels, nil), 1.0/3))
	}
	for _, p := range m.Net.Params() {
		if diff := tensor.MaxAbsDiff(got[p.Name], p.Grad.Data); diff > 1e-6 {
			t.Errorf("%s: accumulated gradient differs by %g from the passes' mean", p.Name, diff)
		}
		p.ZeroGrad()
	}
	f.Trace = nil
	opt := train.Options{Epochs: 8, BatchSize: 32, LR: 1e-2, Seed: 3, Out: filepath.Join(t.TempDir(), "m")}
	if _, err := train.Run(m, f, tr, dev, opt); err != nil {
		t.Fatal(err)
	}
	if acc := accuracy(m.Net, dev); acc < 0.75 {
		t.Errorf("dev accuracy %.3f after FreeLB, want >= 0.75", acc)
	}
	for _, bad := range []FreeLBConfig{{N: 0, Alpha: 1}, {N: 2, Alpha: 0}, {N: 2, Alpha: 1, Gamma: -1}, {N: 2, Alpha: 1, Eps: math.NaN()}} {
		if _, err := NewFreeLB(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}

}
