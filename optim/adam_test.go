package optim

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/tensor"
)

// refAdam is PyTorch's Adam/AdamW update for one scalar, in float64,
// written out independently of Adam.update.
func refAdam(cfg AdamConfig, x0 float64, grad func(x float64) float64, steps int) []float64 {
	x, m, v := x0, 0.0, 0.0
	var out []float64
	for t := 1; t <= steps; t++ {
		g := grad(x)
		if cfg.Decoupled {
			x *= 1 - cfg.LR*cfg.WeightDecay
		} else {
			g += cfg.WeightDecay * x
		}
		m = cfg.Beta1*m + (1-cfg.Beta1)*g
		v = cfg.Beta2*v + (1-cfg.Beta2)*g*g
		if cfg.NoBiasCorrection {
			x -= cfg.LR * m / (math.Sqrt(v) + cfg.Eps)
		} else {
			bc1 := 1 - math.Pow(cfg.Beta1, float64(t))
			bc2 := 1 - math.Pow(cfg.Beta2, float64(t))
			x -= cfg.LR / bc1 * m / (math.Sqrt(v)/math.Sqrt(bc2) + cfg.Eps)
		}
		out = append(out, x)
	}
	return out
}

func TestAdamMatchesReferenceSteps(t *testing.T) {
	grad := func(x float64) float64 { return 1.5 * (x - 3) } // of 0.75(x-3)²
	base := AdamConfig{LR: 0.1, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}
	with := func(f func(*AdamConfig)) AdamConfig { c := base; f(&c); return c }
	cases := []struct {
		name string
		cfg  AdamConfig
	}{
		{"adam", base},
		{"adam-l2", with(func(c *AdamConfig) { c.WeightDecay = 0.1 })},
		{"adamw", with(func(c *AdamConfig) { c.WeightDecay = 0.1; c.Decoupled = true })},
		{"no-bias-correction", with(func(c *AdamConfig) { c.NoBiasCorrection = true })},
		{"bertadam", with(func(c *AdamConfig) { c.WeightDecay = 0.01; c.Decoupled = true; c.NoBiasCorrection = true })},
		{"other-betas", with(func(c *AdamConfig) { c.Beta1 = 0.5; c.Beta2 = 0.9; c.Eps = 1e-3 })},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := refAdam(c.cfg, 2, grad, 3)
			p := ag.NewParam("x", tensor.From([]float32{2}, 1))
			opt := NewAdam(c.cfg)
			for step, w := range want {
				p.Grad = tensor.From([]float32{float32(grad(float64(p.Value.Data[0])))}, 1)
				opt.Step([]*ag.Param{p})
				if got := float64(p.Value.Data[0]); math.Abs(got-w) > 2e-6 {
					t.Fatalf("step %d: x = %.9f, want %.9f", step+1, got, w)
				}
			}
		})
	}
	// The same three steps worked by hand for plain Adam with grad x-3 from
	// x=2: the first step moves by lr (m̂/√v̂ = -1), then
	// m̂₂ = -0.18/0.19, v̂₂ = 0.001809/0.001999.
	p := ag.NewParam("x", tensor.From([]float32{2}, 1))
	opt := NewAdam(AdamConfig{LR: 0.1})
	for i, w := range []float64{2.1, 2.199587770, 2.298413725} {
		p.Grad = tensor.From([]float32{p.Value.Data[0] - 3}, 1)
		opt.Step([]*ag.Param{p})
		if got := float64(p.Value.Data[0]); math.Abs(got-w) > 1e-6 {
			t.Fatalf("hand-worked step %d: x = %.9f, want %.9f", i+1, got, w)
		}
	}
}

// TestWeightDecayVariants takes one step with a zero loss gradient, where
// the variants differ cleanly: L2 decay goes through Adam's normalisation
// (a step of lr against the sign of θ), decoupled decay shrinks θ by
// lr·wd and the moments stay zero.
func TestWeightDecayVariants(t *testing.T) {
	const lr, wd = 0.1, 0.5
	cases := []struct {
		name string
		opt  Optimizer
		want []float64
	}{
		{"adam-l2", NewAdam(AdamConfig{LR: lr, WeightDecay: wd}), []float64{3.9, -0.9}},
		{"adamw", NewAdam(AdamConfig{LR: lr, WeightDecay: wd, Decoupled: true}), []float64{3.8, -0.95}},
		{"bertadam", NewAdam(AdamConfig{LR: lr, WeightDecay: wd, Decoupled: true, NoBiasCorrection: true}), []float64{3.8, -0.95}},
		{"adam-no-decay", NewAdam(AdamConfig{LR: lr}), []float64{4, -1}},
		{"sgd", NewSGD(lr, 0, wd), []float64{3.8, -0.95}},
		{"sgd-momentum", NewSGD(lr, 0.9, wd), []float64{3.8, -0.95}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := ag.NewParam("w", tensor.From([]float32{4, -1}, 2))
			p.Grad = tensor.New(2)
			c.opt.Step([]*ag.Param{p})
			for i, w := range c.want {
				if got := float64(p.Value.Data[i]); math.Abs(got-w) > 1e-6 {
					t.Fatalf("θ = %v, want %v", p.Value.Data, c.want)
				}
			}
		})
	}
}

// leastSquares builds y = X·w* for a random X and returns a closure that
// computes the loss mean((Xw - y)²) and its gradient into w.
func leastSquares(r *rand.Rand, w *ag.Param) func() float64 {
	const n, d = 32, 4
	x := tensor.New(n, d)
	for i := range x.Data {
		x.Data[i] = float32(r.NormFloat64())
	}
	wTrue := []float32{1, -2, 0.5, 3}
	y := tensor.New(n, 1)
	for i := range n {
		for j := range d {
			y.Data[i] += x.Data[i*d+j] * wTrue[j]
		}
	}
	return func() float64 {
		tp := ag.NewTape()
		diff := tp.Sub(tp.MatMul(tp.Const(x), w.Var, false), tp.Const(y))
		loss := tp.Mean(tp.Square(diff))
		tp.Backward(loss)
		return float64(loss.Item())
	}
}

func TestOptimizersMinimiseLeastSquares(t *testing.T) {
	cases := []struct {
		name  string
		opt   Optimizer
		steps int
	}{
		{"adam", NewAdam(AdamConfig{LR: 0.05}), 600},
		{"adamw", NewAdam(AdamConfig{LR: 0.05, WeightDecay: 1e-4, Decoupled: true}), 600},
		{"sgd", NewSGD(0.05, 0, 0), 600},
		{"sgd-momentum", NewSGD(0.02, 0.9, 0), 300},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := ag.NewParam("w", tensor.New(4, 1))
			lossGrad := leastSquares(rand.New(rand.NewSource(1)), w)
			params := []*ag.Param{w}
			first := math.NaN()
			var last float64
			for i := range c.steps {
				ZeroGrad(params)
				last = lossGrad()
				if i == 0 {
					first = last
				}
				c.opt.Step(params)
			}
			if !(last < 1e-4*first) || !(last < 1e-3) {
				t.Fatalf("loss %g after %d steps (from %g)", last, c.steps, first)
			}
			for i, want := range []float32{1, -2, 0.5, 3} {
				if math.Abs(float64(w.Value.Data[i]-want)) > 0.02 {
					t.Fatalf("w = %v, want ≈ [1 -2 0.5 3]", w.Value.Data)
				}
			}
		})
	}
}

// TestAdamParallelMatchesSerial checks the chunked update loop against a
// single chunk on a param big enough to be split.
func TestAdamParallelMatchesSerial(t *testing.T) {
	defer tensor.SetWorkers(tensor.Workers())
	run := func(workers int) []float32 {
		tensor.SetWorkers(workers)
		r := rand.New(rand.NewSource(3))
		p := ag.NewParam("emb", tensor.New(1000, 37))
		for i := range p.Value.Data {
			p.Value.Data[i] = float32(r.NormFloat64())
		}
		p.Grad = tensor.New(1000, 37)
		opt := NewAdam(AdamConfig{LR: 0.01, WeightDecay: 0.1})
		for range 3 {
			for i := range p.Grad.Data {
				p.Grad.Data[i] = float32(r.NormFloat64())
			}
			opt.Step([]*ag.Param{p})
		}
		return p.Value.Data
	}
	serial := run(1)
	for _, w := range []int{2, 3, 7} {
		if d := tensor.MaxAbsDiff(run(w), serial); d != 0 {
			t.Fatalf("%d workers differ from 1 by %g", w, d)
		}
	}
}

func TestNewAdamRejectsBadConfig(t *testing.T) {
	cases := []struct {
		name string
		cfg  AdamConfig
	}{
		{"negative-lr", AdamConfig{LR: -1}},
		{"nan-lr", AdamConfig{LR: math.NaN()}},
		{"beta1-one", AdamConfig{LR: 1, Beta1: 1}},
		{"beta2-negative", AdamConfig{LR: 1, Beta2: -0.5}},
		{"negative-eps", AdamConfig{LR: 1, Eps: -1}},
		{"negative-decay", AdamConfig{LR: 1, WeightDecay: -1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			NewAdam(c.cfg)
		})
	}
	if cfg := NewAdam(AdamConfig{LR: 1}).Config(); cfg.Beta1 != 0.9 || cfg.Beta2 != 0.999 || cfg.Eps != 1e-8 {
		t.Errorf("defaults %+v", cfg)
	}
}

func TestStepPanicsOnAmbiguousParams(t *testing.T) {
	withGrad := func(name string, shape ...int) *ag.Param {
		p := ag.NewParam(name, tensor.New(shape...))
		p.Grad = tensor.New(shape...)
		return p
	}
	cases := []struct {
		name   string
		steps  [][]*ag.Param
		wantIn string
	}{
		{"duplicate-name", [][]*ag.Param{{withGrad("w", 2), withGrad("w", 2)}}, `two params are named "w"`},
		{"no-name", [][]*ag.Param{{withGrad("", 2)}}, "no name"},
		{"shape-changed", [][]*ag.Param{{withGrad("w", 2)}, {withGrad("w", 3)}}, "shape"},
	}
	for _, c := range cases {
		for _, opt := range []Optimizer{NewAdam(AdamConfig{LR: 1}), NewSGD(1, 0.9, 0)} {
			t.Run(fmt.Sprintf("%s/%T", c.name, opt), func(t *testing.T) {
				defer func() {
					r := recover()
					if s, _ := r.(string); !strings.Contains(s, c.wantIn) {
						t.Fatalf("panic %v, want one saying %q", r, c.wantIn)
					}
				}()
				for _, ps := range c.steps {
					opt.Step(ps)
				}
			})
		}
	}
}

func BenchmarkAdamEmbedding(b *testing.B) {
	const rows, dim = 15000, 300
	p := ag.NewParam("emb", tensor.New(rows, dim))
	p.SetRowSparse()
	p.Grad = tensor.New(rows, dim)
	r := rand.New(rand.NewSource(1))
	for i := range p.Grad.Data {
		p.Grad.Data[i] = float32(r.NormFloat64())
	}
	opt := NewAdam(AdamConfig{LR: 1e-3, WeightDecay: 0.01, Decoupled: true})
	params := []*ag.Param{p}
	b.SetBytes(int64(rows * dim * 4 * 4)) // θ, g, m, v
	b.ResetTimer()
	for range b.N {
		opt.Step(params)
	}
}

// TestNoDecayExemptsNamedParams: AdamW with BERT's exemption shrinks a
// weight matrix but not a bias or a LayerNorm weight (zero gradients, so
// only the decay moves them).
func TestNoDecayExemptsNamedParams(t *testing.T) {
	opt := NewAdam(AdamConfig{LR: 0.1, WeightDecay: 0.5, Decoupled: true, NoDecay: NoDecayBERT})
	var ps []*ag.Param
	for _, name := range []string{"encoder.layer.0.output.dense.weight", "encoder.layer.0.output.dense.bias", "embeddings.LayerNorm.weight"} {
		p := ag.NewParam(name, tensor.From([]float32{4}, 1))
		p.Grad = tensor.New(1)
		ps = append(ps, p)
	}
	opt.Step(ps)
	for i, want := range []float32{3.8, 4, 4} {
		if got := ps[i].Value.Data[0]; math.Abs(float64(got-want)) > 1e-6 {
			t.Errorf("%s: %g, want %g", ps[i].Name, got, want)
		}
	}
}
