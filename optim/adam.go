package optim

import (
	"fmt"
	"math"
	"strings"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/tensor"
)

// AdamConfig holds Adam's hyperparameters. Zero Beta1, Beta2 and Eps mean
// PyTorch's defaults 0.9, 0.999 and 1e-8.
type AdamConfig struct {
	LR, Beta1, Beta2, Eps float64
	// WeightDecay is L2 regularisation added to the gradient (Adam) or,
	// with Decoupled, a direct shrink of the weights by LR·WeightDecay
	// each step (AdamW).
	WeightDecay float64
	Decoupled   bool
	// NoBiasCorrection drops the 1-βᵗ corrections, as the original BERT
	// optimizer (BertAdam) does; use it with Decoupled to reproduce it.
	NoBiasCorrection bool
	// NoDecay, when set, exempts the params it names from weight decay
	// (BERT fine-tuning exempts biases and LayerNorm weights: NoDecayBERT).
	NoDecay func(name string) bool
	// LRScale, when set, multiplies the learning rate (and the decoupled
	// decay it scales) of the params it names by the factor it returns;
	// 0 or less means 1 (PyTorch's parameter groups, by name).
	LRScale func(name string) float64
}

// NoDecayBERT is the weight-decay exemption of BERT fine-tuning (Hugging
// Face's run_glue and Trainer): biases and LayerNorm parameters.
func NoDecayBERT(name string) bool {
	return strings.HasSuffix(name, ".bias") || strings.Contains(name, "LayerNorm")
}

// Adam is the Adam optimizer with PyTorch's update rule:
//
//	g ← g + wd·θ                      (not Decoupled)
//	θ ← θ·(1 − lr·wd)                 (Decoupled)
//	m ← β₁m + (1−β₁)g,  v ← β₂v + (1−β₂)g²
//	θ ← θ − lr/(1−β₁ᵗ) · m / (√v/√(1−β₂ᵗ) + ε)
//
// t counts the steps each param has taken. Every element is updated each
// step, even rows of a row-sparse param that got no gradient (their
// moments still decay), exactly as PyTorch's dense Adam does.
type Adam struct {
	cfg   AdamConfig
	state map[string]*adamState
	seen  map[string]struct{}
}

type adamState struct {
	shape []int
	m, v  []float32
	step  int64
}

// NewAdam returns an Adam optimizer. Out-of-range hyperparameters are
// programming errors and panic.
func NewAdam(cfg AdamConfig) *Adam {
	if cfg.Beta1 == 0 {
		cfg.Beta1 = 0.9
	}
	if cfg.Beta2 == 0 {
		cfg.Beta2 = 0.999
	}
	if cfg.Eps == 0 {
		cfg.Eps = 1e-8
	}
	switch {
	case !(cfg.LR >= 0):
		panic(fmt.Sprintf("optim: Adam learning rate %v", cfg.LR))
	case !(cfg.Beta1 > 0 && cfg.Beta1 < 1) || !(cfg.Beta2 > 0 && cfg.Beta2 < 1):
		panic(fmt.Sprintf("optim: Adam betas (%v, %v) outside (0, 1)", cfg.Beta1, cfg.Beta2))
	case !(cfg.Eps > 0):
		panic(fmt.Sprintf("optim: Adam eps %v", cfg.Eps))
	case !(cfg.WeightDecay >= 0):
		panic(fmt.Sprintf("optim: Adam weight decay %v", cfg.WeightDecay))
	}
	return &Adam{cfg: cfg, state: map[string]*adamState{}, seen: map[string]struct{}{}}
}

// Config returns the hyperparameters in use (defaults filled in, LR
// current).
func (a *Adam) Config() AdamConfig { return a.cfg }

// SetLR sets the learning rate for the following steps.
func (a *Adam) SetLR(lr float64) { a.cfg.LR = lr }

// LR returns the learning rate.
func (a *Adam) LR() float64 { return a.cfg.LR }

// Step updates every param that is not Frozen and has a gradient. It
// panics if a param's shape differs from the state held under its name.
func (a *Adam) Step(params []*ag.Param) {
	checkParams(params, a.seen)
	for _, p := range params {
		if p.Frozen || p.Grad == nil {
			continue
		}
		st := a.state[p.Name]
		if st == nil {
			n := len(p.Value.Data)
			st = &adamState{shape: append([]int(nil), p.Value.Shape...), m: make([]float32, n), v: make([]float32, n)}
			a.state[p.Name] = st
		} else if !sameShape(st.shape, p.Value.Shape) {
			panic(fmt.Sprintf("optim: param %q has shape %v but its Adam state has %v", p.Name, p.Value.Shape, st.shape))
		}
		st.step++
		scale := 1.0
		if a.cfg.LRScale != nil {
			if f := a.cfg.LRScale(p.Name); f > 0 {
				scale = f
			}
		}
		a.update(p.Value.Data, p.Grad.Data, st, a.cfg.NoDecay != nil && a.cfg.NoDecay(p.Name), scale)
	}
}

// update applies one step to a param's values w with gradient g. The
// per-step scalars are computed in float64, the per-element work in
// float32 like PyTorch on float32 tensors.
func (a *Adam) update(w, g []float32, st *adamState, noDecay bool, lrScale float64) {
	c := a.cfg
	if noDecay {
		c.WeightDecay = 0
	}
	c.LR *= lrScale
	bc1, bc2 := 1.0, 1.0
	if !c.NoBiasCorrection {
		bc1 = 1 - math.Pow(c.Beta1, float64(st.step))
		bc2 = 1 - math.Pow(c.Beta2, float64(st.step))
	}
	var (
		b1, b2     = float32(c.Beta1), float32(c.Beta2)
		omb1, omb2 = float32(1 - c.Beta1), float32(1 - c.Beta2)
		stepSize   = float32(c.LR / bc1)
		bc2Sqrt    = float32(math.Sqrt(bc2))
		eps        = float32(c.Eps)
		l2         float32 // weight decay folded into the gradient
		shrink     = float32(1)
	)
	if c.Decoupled {
		shrink = float32(1 - c.LR*c.WeightDecay)
	} else {
		l2 = float32(c.WeightDecay)
	}
	m, v := st.m, st.v
	// About 15 flops and 16 bytes of traffic per element: worth splitting
	// over cores for the big embedding tables.
	tensor.ParallelFor(len(w), 16, func(lo, hi int) {
		w, g, m, v := w[lo:hi], g[lo:hi], m[lo:hi], v[lo:hi]
		for i := range w {
			gi := g[i]
			if l2 != 0 { // skipped when off, as PyTorch does: 0·Inf would be NaN
				gi += l2 * w[i]
			}
			w[i] *= shrink
			mi := b1*m[i] + omb1*gi
			vi := b2*v[i] + omb2*gi*gi
			m[i], v[i] = mi, vi
			denom := float32(math.Sqrt(float64(vi)))/bc2Sqrt + eps
			w[i] -= stepSize * (mi / denom)
		}
	})
}

// State returns a copy of the state: for each param that has stepped,
// "<name>.exp_avg" and "<name>.exp_avg_sq" (shaped like the param) and
// "<name>.step", a 2-vector [t / 2²⁴, t mod 2²⁴] so the count stays exact
// in float32 far beyond 2²⁴ steps. The learning rate and other
// hyperparameters are not included: they come from the training config
// and schedule.
func (a *Adam) State() map[string]*tensor.Tensor {
	out := make(map[string]*tensor.Tensor, 3*len(a.state))
	for name, st := range a.state {
		out[name+"."+fieldExpAvg] = tensor.From(append([]float32(nil), st.m...), st.shape...)
		out[name+"."+fieldExpAvgSq] = tensor.From(append([]float32(nil), st.v...), st.shape...)
		out[name+"."+fieldStep] = tensor.From([]float32{float32(st.step >> 24), float32(st.step & (1<<24 - 1))}, 2)
	}
	return out
}

// LoadState replaces the state with a copy of s (from State). Nothing is
// changed if s is inconsistent: an unknown field, a param missing one of
// its three entries, moments of different shapes, a malformed step count,
// or a shape that differs from a param this optimizer has already seen.
func (a *Adam) LoadState(s map[string]*tensor.Tensor) error {
	next := map[string]*adamState{}
	got := map[string]int{} // fields seen per param
	for _, key := range sortedKeys(s) {
		t := s[key]
		name, field, ok := splitKey(key)
		if !ok {
			return fmt.Errorf("optim: Adam state key %q is not <param>.<field>", key)
		}
		if err := checkTensor(key, t); err != nil {
			return err
		}
		st := next[name]
		if st == nil {
			st = &adamState{}
			next[name] = st
		}
		switch field {
		case fieldExpAvg:
			st.m = append([]float32(nil), t.Data...)
			st.shape = append([]int(nil), t.Shape...)
		case fieldExpAvgSq:
			st.v = append([]float32(nil), t.Data...)
		case fieldStep:
			step, err := decodeStep(key, t)
			if err != nil {
				return err
			}
			st.step = step
		default:
			return fmt.Errorf("optim: Adam state key %q has unknown field %q", key, field)
		}
		got[name]++
		if field == fieldExpAvgSq && st.m != nil && !sameShape(t.Shape, st.shape) {
			return fmt.Errorf("optim: Adam state for %q: exp_avg has shape %v, exp_avg_sq %v", name, st.shape, t.Shape)
		}
	}
	for _, name := range sortedKeys(next) {
		st := next[name]
		if got[name] != 3 || st.m == nil || st.v == nil {
			return fmt.Errorf("optim: Adam state for %q needs exp_avg, exp_avg_sq and step", name)
		}
		if old := a.state[name]; old != nil && !sameShape(old.shape, st.shape) {
			return fmt.Errorf("optim: Adam state for %q has shape %v, the param has %v", name, st.shape, old.shape)
		}
	}
	a.state = next
	return nil
}

// decodeStep reads the [hi, lo] step encoding written by State.
func decodeStep(key string, t *tensor.Tensor) (int64, error) {
	if len(t.Data) != 2 {
		return 0, fmt.Errorf("optim: state %q has shape %v, want [2]", key, t.Shape)
	}
	hi, lo := float64(t.Data[0]), float64(t.Data[1])
	if hi < 0 || lo < 0 || lo >= 1<<24 || hi >= 1<<24 || hi != math.Trunc(hi) || lo != math.Trunc(lo) {
		return 0, fmt.Errorf("optim: state %q holds %v, not a step count", key, t.Data)
	}
	return int64(hi)<<24 | int64(lo), nil
}
