package defense

import (
	"fmt"
	"math"
	"math/rand"
	"slices"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/train"
)

// FreeLBConfig are FreeLB's settings (Zhu et al. 2020; carl-rar.md §3.1).
type FreeLBConfig struct {
	// N ascent steps, each a forward and backward pass whose parameter
	// gradients (of the loss over N) accumulate; one optimiser step
	// follows.
	N int
	// Alpha is the normalised ascent step, Gamma the magnitude of the
	// uniform random start (0: start at zero), Eps the per-example L2
	// bound of δ (0: none).
	Alpha, Gamma, Eps float64
}

// DefaultFreeLB is the paper's SST-2 row (Table 1): n 2, α 0.1, γ 0.6, ε 0.
func DefaultFreeLB() FreeLBConfig { return FreeLBConfig{N: 2, Alpha: 0.1, Gamma: 0.6} }

// Validate checks the ranges.
func (c FreeLBConfig) Validate() error {
	bad := func(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) || x < 0 }
	switch {
	case c.N < 1 || c.N > 100:
		return fmt.Errorf("defense: freelb n %d must be in [1, 100]", c.N)
	case bad(c.Alpha) || c.Alpha == 0:
		return fmt.Errorf("defense: freelb α %g must be positive", c.Alpha)
	case bad(c.Gamma), bad(c.Eps):
		return fmt.Errorf("defense: freelb γ %g and ε %g must be ≥ 0", c.Gamma, c.Eps)
	}
	return nil
}

// FreeLB is the objective: N passes over the batch with the embedding
// perturbation δ ascending between them, the parameter gradients of each
// pass's loss/N accumulated, the optimiser stepping once.
type FreeLB struct {
	FreeLBConfig
	// Trace, when set, receives each pass's δ before it is used (tests).
	Trace func(step int, delta *tensor.Tensor, grad []float32)
}

// NewFreeLB returns the objective of c.
func NewFreeLB(c FreeLBConfig) (*FreeLB, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &FreeLB{FreeLBConfig: c}, nil
}

// Name implements train.Objective.
func (f *FreeLB) Name() string { return "freelb" }

// Info implements train.Recorded.
func (f *FreeLB) Info() map[string]any {
	return map[string]any{"n": f.N, "alpha": f.Alpha, "gamma": f.Gamma, "eps": f.Eps}
}

// Loss implements train.Objective. The first N−1 passes run on tapes of
// their own and back-propagate at once (their parameter gradients stay in
// the parameters' Grad); the last is built on t, whose backward pass the
// trainer runs, so it adds the last pass's share.
func (f *FreeLB) Loss(t *ag.Tape, m *nn.Classifier, b *nn.Batch) (train.Output, error) {
	delta := f.Ascend(t, m, b, nil)
	_, s := m.Encode(t, t.Add(m.EmbedInput(t, b), t.Const(delta)), b.Lengths)
	logits := m.Head(t, s)
	ce := t.CrossEntropy(logits, b.Labels, nil)
	return train.Output{Loss: t.Scale(ce, float32(1/float64(f.N))), Logits: logits, Terms: map[string]float32{"ce_last": ce.Item()}}, nil
}

// Ascend runs the first N−1 passes, each back-propagating its loss/N into
// the parameters' Grad, and returns δ_{N−1}, the last pass's perturbation.
// first, when set, receives the first pass's sentence vectors (clean when
// γ is 0).
func (f *FreeLB) Ascend(t *ag.Tape, m *nn.Classifier, b *nn.Batch, first func(sentence *tensor.Tensor)) *tensor.Tensor {
	var extra func(*ag.Tape, int, *ag.Var, *ag.Var) *ag.Var
	if first != nil {
		extra = func(_ *ag.Tape, step int, _, s *ag.Var) *ag.Var {
			if step == 1 {
				first(s.Value)
			}
			return nil
		}
	}
	return freeLBPasses(f.FreeLBConfig, t, m, b, f.Trace, extra)
}

// freeLBPasses runs the first N−1 passes of c, each on a tape of its own
// seeded from t's source: the classification loss/N back-propagates into
// the parameters' Grad, and its gradient in δ is the ascent direction.
// extra, when set, sees each pass's token and sentence states and may
// return a further loss (RAR's w_r·L_R/n); it back-propagates after δ's
// direction is taken (ag.Tape.ResetGrads), so δ ascends L_C alone while
// the parameters get both. It returns δ_{N−1}.
func freeLBPasses(c FreeLBConfig, t *ag.Tape, m *nn.Classifier, b *nn.Batch, trace func(int, *tensor.Tensor, []float32),
	extra func(tp *ag.Tape, step int, tokens, sentence *ag.Var) *ag.Var) *tensor.Tensor {
	var seed int64
	if t.Train {
		seed = t.Rng.Int63()
	}
	r := rand.New(rand.NewSource(seed))
	dim := m.Emb.Dim()
	delta := freeLBStart(c, r, b, dim)
	scale := float32(1 / float64(c.N))
	for step := 1; step < c.N; step++ {
		tp := &ag.Tape{Train: t.Train, Rng: rand.New(rand.NewSource(r.Int63()))}
		leaf := tp.Leaf(delta)
		tokens, s := m.Encode(tp, tp.Add(m.EmbedInput(tp, b), leaf), b.Lengths)
		ce := tp.CrossEntropy(m.Head(tp, s), b.Labels, nil)
		var more *ag.Var
		if extra != nil {
			more = extra(tp, step, tokens, s)
		}
		tp.Backward(tp.Scale(ce, scale))
		grad := leaf.Grad.Data
		if more != nil {
			grad = slices.Clone(grad)
			tp.ResetGrads()
			tp.Backward(more)
		}
		if trace != nil {
			trace(step, delta, grad)
		}
		delta = freeLBAscend(c, delta, grad, b, dim)
	}
	if trace != nil {
		trace(c.N, delta, nil)
	}
	return delta
}
