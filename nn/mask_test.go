package nn

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/tensor"
)

func maskedCNN(t *testing.T) *Classifier {
	cfg := DefaultConfig("cnn")
	cfg.VocabSize, cfg.EmbedDim, cfg.Filters, cfg.Mask, cfg.MaskHidden = 40, 6, 4, true, 7
	m, err := New(cfg, rand.New(rand.NewSource(5)))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestMaskSampleStatistics(t *testing.T) {
	w := &WordMask{Tau: 1}
	logits := []float32{-2, -0.3, 0, 0.8, 2.5}
	const n = 100000
	x := tensor.New(n*len(logits), 1)
	for i := range x.Data {
		x.Data[i] = logits[i%len(logits)]
	}
	tp := ag.NewTape()
	tp.Train = true
	tp.Rng = rand.New(rand.NewSource(9))
	in := tp.Leaf(x)
	s := w.Sample(tp, in)
	sums := make([]float64, len(logits))
	for i, v := range s.Data() {
		if v != 0 && v != 1 {
			t.Fatalf("sample %d is %v, not 0/1", i, v)
		}
		sums[i%len(logits)] += float64(v)
	}
	for k, l := range logits {
		phi := 1 / (1 + math.Exp(-float64(l)))
		if got := sums[k] / n; math.Abs(got-phi) > 0.005 {
			t.Errorf("logit %g: mean mask %.4f, φ %.4f", l, got, phi)
		}
	}
	// Backward = gradient of the soft sample: seed ones, expect s(1−s) ≥ 0,
	// and ≤ 1/4.
	tp.Backward(tp.Sum(s))
	for i, g := range in.Grad.Data {
		if g < 0 || g > 0.25+1e-6 {
			t.Fatalf("grad %d = %g outside [0, 1/4]", i, g)
		}
	}
}

func TestMaskStraightThroughMatchesSoft(t *testing.T) {
	// Same seed: the soft sample's gradient equals the ST mask's gradient.
	x := tensor.From([]float32{0.3, -1.2, 2}, 3, 1)
	grads := [2][]float32{}
	for k := 0; k < 2; k++ {
		tp := ag.NewTape()
		tp.Train = true
		tp.Rng = rand.New(rand.NewSource(4))
		in := tp.Leaf(x.Clone())
		var out *ag.Var
		if k == 0 {
			out = (&WordMask{Tau: 1}).Sample(tp, in)
		} else {
			noise := tensor.New(3, 1)
			for i := range noise.Data {
				noise.Data[i] = float32(gumbel(tp.Rng) - gumbel(tp.Rng))
			}
			out = tp.Sigmoid(tp.Add(in, tp.Const(noise)))
		}
		tp.Backward(tp.Sum(tp.Mul(out, tp.Const(tensor.From([]float32{1, 2, 3}, 3, 1)))))
		grads[k] = in.Grad.Data
	}
	for i := range grads[0] {
		if math.Abs(float64(grads[0][i]-grads[1][i])) > 1e-6 {
			t.Errorf("ST grad %v, soft grad %v", grads[0], grads[1])
		}
	}
}

func TestMaskGradCheck(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	w := NewWordMask(4, 5, rng)
	e := uniform(rng, 1, 3, 4)
	err := ag.GradCheck([]*tensor.Tensor{e, w.Hidden.W.Value, w.Hidden.B.Value, w.Out.W.Value, w.Out.B.Value}, 1e-3, 2e-2,
		func(t *ag.Tape, in []*ag.Var) *ag.Var {
			wm := &WordMask{Hidden: &Linear{W: &ag.Param{Var: in[1]}, B: &ag.Param{Var: in[2]}},
				Out: &Linear{W: &ag.Param{Var: in[3]}, B: &ag.Param{Var: in[4]}}, Tau: 1}
			phi := wm.Phi(t, in[0])
			return t.Add(t.Sum(t.Mul(phi, t.Const(tensor.From([]float32{1, -2, 0.5}, 3, 1)))), NegEntropy(t, phi, 1, 3, []int{2}, EntropyMean))
		})
	if err != nil {
		t.Fatal(err)
	}
}

func TestMaskGlobalAndInference(t *testing.T) {
	m := maskedCNN(t)
	phi := m.WordImportance()
	tp := ag.NewTape()
	tp.NoGrad = true
	b := MakeBatch([][]int32{{3, 7, 3, 9, 12}, {9, 3, 20}}, nil, 5)
	mo := m.Mask.Apply(tp, m.Emb, m.Embed(tp, b), b.IDs)
	for r := 0; r < b.B; r++ {
		for i := 0; i < b.L; i++ {
			id := b.IDs[r*b.L+i]
			if got := mo.Phi.Data()[r*b.L+i]; got != phi[id] {
				t.Errorf("row %d pos %d word %d: φ %v, table %v", r, i, id, got, phi[id])
			}
			for k := 0; k < 6; k++ {
				want := phi[id] * m.Emb.W.Value.Data[int(id)*6+k]
				if got := mo.X.Data()[(r*b.L+i)*6+k]; got != want {
					t.Fatalf("inference input %v, want φ·x = %v", got, want)
				}
			}
		}
	}
	p1, p2 := m.Predict([][]int32{{3, 7, 9}}), m.Predict([][]int32{{3, 7, 9}})
	if p1[0][0] != p2[0][0] {
		t.Error("two inference runs differ")
	}
}

func TestMaskSavedWithTensors(t *testing.T) {
	m := maskedCNN(t)
	ts := m.Tensors()
	for _, n := range []string{"mask.hidden.weight", "mask.hidden.bias", "mask.out.weight", "mask.out.bias"} {
		if ts[n] == nil {
			t.Errorf("tensor %s not saved", n)
		}
	}
	m2, _ := New(m.Cfg, rand.New(rand.NewSource(99)))
	if err := m2.LoadTensors(ts); err != nil {
		t.Fatal(err)
	}
	if a, b := m.Predict([][]int32{{4, 5, 6}}), m2.Predict([][]int32{{4, 5, 6}}); a[0][1] != b[0][1] {
		t.Error("reloaded masked model predicts differently")
	}
	// Without Mask the parameter list is unchanged.
	cfg := m.Cfg
	cfg.Mask = false
	plain, _ := New(cfg, rand.New(rand.NewSource(5)))
	if plain.Mask != nil || len(plain.Params()) != len(m.Params())-4 {
		t.Error("an unmasked model has mask parameters")
	}
}

// The three reductions of L_ent (spec F4) on two rows of lengths 2 and 1
// in a batch of length 3: mean over the 3 real tokens, mean over all 6
// positions, and the per-text sum averaged over the 2 texts; each has the
// gradient finite differences give.
func TestNegEntropyReductions(t *testing.T) {
	phiVals := []float32{0.2, 0.5, 0.9, 0.7, 0.3, 0.6}
	negH := func(p float64) float64 { return p*math.Log(p) + (1-p)*math.Log(1-p) }
	real := negH(0.2) + negH(0.5) + negH(0.7)
	all := real + negH(0.9) + negH(0.3) + negH(0.6)
	want := map[EntropyReduction]float64{EntropyMean: real / 3, EntropyMeanPadded: all / 6, EntropySum: real / 2}
	for red, w := range want {
		tp := ag.NewTape()
		got := NegEntropy(tp, tp.Const(tensor.From(append([]float32(nil), phiVals...), 6, 1)), 2, 3, []int{2, 1}, red).Item()
		if math.Abs(float64(got)-w) > 1e-5 {
			t.Errorf("%s: %v, want %v", red, got, w)
		}
		x := tensor.From(append([]float32(nil), phiVals...), 6, 1)
		if err := ag.GradCheck([]*tensor.Tensor{x}, 1e-3, 1e-2, func(tp *ag.Tape, in []*ag.Var) *ag.Var {
			return NegEntropy(tp, in[0], 2, 3, []int{2, 1}, red)
		}); err != nil {
			t.Errorf("%s: %v", red, err)
		}
	}
	if r, err := ParseEntropyReduction(""); err != nil || r != EntropyMean {
		t.Errorf(`"" parses to %q, %v`, r, err)
	}
	if _, err := ParseEntropyReduction("max"); err == nil || !strings.Contains(err.Error(), "mean-padded") {
		t.Errorf("bad reduction: %v", err)
	}
}
