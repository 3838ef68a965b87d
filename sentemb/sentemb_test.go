package sentemb

import (
	"math"
	"math/rand"
	"testing"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/tensor"
)

func rows(data ...[]float32) *tensor.Tensor {
	d := len(data[0])
	t := tensor.New(len(data), d)
	for i, r := range data {
		copy(t.Data[i*d:], r)
	}
	return t
}

// Spec check 1: two orthogonal unit sentences, every view equal.
func TestInfoNCESpecValues(t *testing.T) {
	tp := ag.NewTape()
	e := tp.Const(rows([]float32{1, 0}, []float32{0, 1}))
	main, err := InfoNCE(tp, e, tp.Concat(0, e, e), [][]int{{0, 2}, {1, 3}}, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := InfoNCE(tp, e, e, diagonal(2), 0.05)
	if err != nil {
		t.Fatal(err)
	}
	e20 := math.Exp(20)
	if want := -math.Log(2 * e20 / (2*e20 + 2)); math.Abs(float64(main.Item())-want) > 1e-6 {
		t.Errorf("L_main = %.9g, want %.9g", main.Item(), want)
	}
	if want := -math.Log(e20 / (e20 + 1)); math.Abs(float64(reg.Item())-want) > 1e-6 {
		t.Errorf("L_reg = %.9g, want %.9g", reg.Item(), want)
	}
}

func randRows(r *rand.Rand, n, d int) *tensor.Tensor {
	x := tensor.New(n, d)
	for i := range x.Data {
		x.Data[i] = float32(r.NormFloat64())
	}
	return x
}

// With one positive per anchor InfoNCE is SimCSE's cross-entropy of the
// scaled cosines; its gradient matches finite differences; it is
// invariant to a joint permutation and falls as the adversarial view
// moves towards its anchor (spec checks 2 and 3).
func TestInfoNCEProperties(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	a, c := randRows(r, 4, 5), randRows(r, 4, 5)
	tp := ag.NewTape()
	got, err := InfoNCE(tp, tp.Const(a), tp.Const(c), diagonal(4), 0.1)
	if err != nil {
		t.Fatal(err)
	}
	ce := tp.CrossEntropy(tp.Scale(tp.MatMul(unitRows(tp, tp.Const(a)), unitRows(tp, tp.Const(c)), true), 10), []int{0, 1, 2, 3}, nil)
	if d := math.Abs(float64(got.Item() - ce.Item())); d > 1e-5 {
		t.Errorf("single-positive InfoNCE %g, cross-entropy %g", got.Item(), ce.Item())
	}
	pos := [][]int{{0, 4}, {1, 5}, {2, 6}, {3, 7}}
	if err := ag.GradCheck([]*tensor.Tensor{a, randRows(r, 8, 5)}, 1e-3, 2e-2, func(t *ag.Tape, in []*ag.Var) *ag.Var {
		l, err := InfoNCE(t, in[0], in[1], pos, 0.5)
		if err != nil {
			panic(err)
		}
		return l
	}); err != nil {
		t.Fatal(err)
	}
	z, zp, za := randRows(r, 3, 4), randRows(r, 3, 4), randRows(r, 3, 4)
	loss := func(z, zp, za *tensor.Tensor) float64 {
		tp := ag.NewTape()
		l, err := InfoNCE(tp, tp.Const(z), tp.Concat(0, tp.Const(zp), tp.Const(za)), [][]int{{0, 3}, {1, 4}, {2, 5}}, 0.05)
		if err != nil {
			t.Fatal(err)
		}
		return float64(l.Item())
	}
	perm := func(x *tensor.Tensor) *tensor.Tensor { // rows 2, 0, 1
		return rows(x.Data[8:12], x.Data[0:4], x.Data[4:8])
	}
	base := loss(z, zp, za)
	if d := math.Abs(base - loss(perm(z), perm(zp), perm(za))); d > 1e-5 {
		t.Errorf("a joint permutation changed the loss by %g", d)
	}
	closer := za.Clone()
	for i := range closer.Data {
		closer.Data[i] = 0.5*closer.Data[i] + 0.5*z.Data[i]
	}
	if loss(z, zp, closer) >= base {
		t.Errorf("moving z^adv towards z did not lower the loss: %g → %g", base, loss(z, zp, closer))
	}
	if _, err := InfoNCE(ag.NewTape(), tp.Const(z), tp.Const(zp), [][]int{{0}, {}, {1}}, 0.05); err == nil {
		t.Error("an anchor without positives accepted")
	}
}

func TestProjectL1(t *testing.T) {
	d := []float32{3, -1, 0.5}
	projectL1(d, 2)
	// θ = 1: (2, 0, 0).
	if math.Abs(float64(d[0])-2) > 1e-6 || d[1] != 0 || d[2] != 0 {
		t.Fatalf("projection %v, want [2 0 0]", d)
	}
	d = []float32{0.2, -0.3}
	projectL1(d, 1)
	if d[0] != 0.2 || d[1] != -0.3 {
		t.Fatalf("a point inside the ball moved: %v", d)
	}
}

// tinyEncoder is a random 2-layer transformer over 30 ids, mean pooling.
func tinyEncoder(t *testing.T) *nn.Classifier {
	t.Helper()
	cfg := nn.DefaultConfig("transformer")
	tc := *cfg.Transformer
	tc.Layers, tc.Intermediate, tc.MaxPositions, tc.Pool = 2, 32, 16, "mean"
	cfg.Transformer, cfg.EmbedDim, cfg.VocabSize, cfg.NumClasses = &tc, 16, 30, 2
	net, err := nn.New(cfg, rand.New(rand.NewSource(7)))
	if err != nil {
		t.Fatal(err)
	}
	return net
}

func tinyBatch() *nn.Batch {
	return nn.MakeBatch([][]int32{{2, 5, 7, 9, 3}, {2, 11, 3}, {2, 8, 8, 12, 13, 14, 3}, {2, 20, 21, 3}}, nil, 0)
}

// The search stays in the ball, leaves padding and the parameters alone,
// and raises the attack objective.
func TestSearch(t *testing.T) {
	net := tinyEncoder(t)
	b := tinyBatch()
	zPos := sentence(ag.NewTape(), net, b, nil).Value
	attackLoss := func(delta *tensor.Tensor) float64 {
		tp := ag.NewTape()
		l, err := InfoNCE(tp, sentence(tp, net, b, delta), tp.Const(zPos), diagonal(b.B), 0.05)
		if err != nil {
			t.Fatal(err)
		}
		return float64(l.Item())
	}
	before := map[string]*tensor.Tensor{}
	for _, p := range net.Params() {
		before[p.Name] = p.Value.Clone()
	}
	for _, norm := range []Norm{"inf", "2", "1"} {
		c := DefaultConfig()
		c.Norm, c.Eps, c.Alpha, c.Beta = norm, 0.5, 0.2, 0.1
		if norm == "1" {
			c.Eps = 5
		}
		re, err := New(c)
		if err != nil {
			t.Fatal(err)
		}
		delta, err := re.Search(net, b, zPos)
		if err != nil {
			t.Fatal(err)
		}
		d := delta.Shape[2]
		for i := range b.B {
			real := delta.Data[i*b.L*d : (i*b.L+b.Lengths[i])*d]
			switch norm {
			case "inf":
				for _, v := range real {
					if math.Abs(float64(v)) > c.Eps+1e-6 {
						t.Fatalf("ℓ∞: |δ| = %g beyond ε", v)
					}
				}
			case "2":
				if n := tensor.Norm(real); n > c.Eps+1e-5 {
					t.Fatalf("ℓ2: ‖δ_%d‖ = %g beyond ε", i, n)
				}
			case "1":
				var s float64
				for _, v := range real {
					s += math.Abs(float64(v))
				}
				if s > c.Eps+1e-4 {
					t.Fatalf("ℓ1: ‖δ_%d‖₁ = %g beyond ε", i, s)
				}
			}
			for _, v := range delta.Data[(i*b.L+b.Lengths[i])*d : (i+1)*b.L*d] {
				if v != 0 {
					t.Fatalf("padding of row %d perturbed", i)
				}
			}
		}
		if l0, l := attackLoss(nil), attackLoss(delta); l <= l0 {
			t.Errorf("%s: the search lowered the attack loss: %g → %g", norm, l0, l)
		}
	}
	for _, p := range net.Params() {
		if tensor.MaxAbsDiff(before[p.Name].Data, p.Value.Data) != 0 || (p.Grad != nil && maxAbs(p.Grad.Data) != 0) {
			t.Fatalf("the search touched %s", p.Name)
		}
	}
}

func maxAbs(x []float32) float32 {
	var m float32
	for _, v := range x {
		m = max(m, v, -v)
	}
	return m
}

// RobustEmbed's loss is finite with both views, γ = 0 leaves L_reg out of
// the gradients (spec check 2), and the random stream resumes.
func TestRobustEmbedLoss(t *testing.T) {
	net := tinyEncoder(t)
	b := tinyBatch()
	grads := func(gamma float64, regOnly bool) map[string][]float32 {
		c := DefaultConfig()
		c.Gamma = gamma
		re, _ := New(c)
		for _, p := range net.Params() {
			p.ZeroGrad()
		}
		tp := ag.NewTape()
		tp.Train = true
		tp.Rng = rand.New(rand.NewSource(4))
		out, err := re.Loss(tp, net, b)
		if err != nil {
			t.Fatal(err)
		}
		if math.IsNaN(float64(out.Loss.Item())) || out.Terms["main"] <= 0 || out.Terms["reg"] <= 0 {
			t.Fatalf("loss %v terms %v", out.Loss.Item(), out.Terms)
		}
		tp.Backward(out.Loss)
		g := map[string][]float32{}
		for _, p := range net.Params() {
			if p.Grad != nil {
				g[p.Name] = append([]float32(nil), p.Grad.Data...)
			}
		}
		return g
	}
	g0, g1 := grads(0, false), grads(1.0/128, false)
	var diff float64
	for k, v := range g0 {
		diff = max(diff, tensor.MaxAbsDiff(v, g1[k]))
	}
	if diff == 0 {
		t.Error("γ > 0 did not change the gradients")
	}
	if again := grads(0, false); func() float64 {
		var d float64
		for k, v := range g0 {
			d = max(d, tensor.MaxAbsDiff(v, again[k]))
		}
		return d
	}() != 0 {
		t.Error("the same seed gave other gradients")
	}
	re, _ := New(DefaultConfig())
	re.Search(net, b, sentence(ag.NewTape(), net, b, nil).Value)
	n := re.RandomDraws()
	re2, _ := New(DefaultConfig())
	re2.SkipRandom(n)
	if a, b := re.random().Int63(), re2.random().Int63(); a != b {
		t.Error("SkipRandom does not continue the stream")
	}
	if _, err := New(Config{Tau: 0.05, Norm: "3", K: 1, Lambda: 0.5}); err == nil {
		t.Error("norm 3 accepted")
	}
}
