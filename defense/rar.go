package defense

import (
	"errors"
	"fmt"
	"math"
	"math/rand"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/train"
)

// RARConfig are RAR's settings (Qiu et al. 2021; carl-rar.md §3.3):
// FreeLB's inner loop and the weight w_r of the reconstruction loss.
type RARConfig struct {
	FreeLB FreeLBConfig
	Weight float64
}

// DefaultRAR is the paper's: FreeLB's defaults (DefaultFreeLB) and w_r
// 0.1.
func DefaultRAR() RARConfig { return RARConfig{FreeLB: DefaultFreeLB(), Weight: 0.1} }

// Validate checks the ranges (w_r 0 is FreeLB with an untrained head).
func (c RARConfig) Validate() error {
	if err := c.FreeLB.Validate(); err != nil {
		return err
	}
	if math.IsNaN(c.Weight) || math.IsInf(c.Weight, 0) || c.Weight < 0 {
		return fmt.Errorf("defense: rar weight %g must be ≥ 0", c.Weight)
	}
	return nil
}

// RAR is the objective: FreeLB's n passes, each adding (L_C + w_r·L_R)/n
// to the parameter gradients, where L_R is the reconstruction head's mean
// token cross-entropy over the real positions of the perturbed input
// against the tokens read; δ ascends ∇_δ L_C alone (ambiguity 6), so it
// moves exactly as FreeLB's does.
type RAR struct {
	RARConfig
	// Trace, when set, receives each pass's δ before it is used and the
	// ascent direction ∇_δ L_C/n taken from it (nil on the last pass).
	Trace func(step int, delta *tensor.Tensor, grad []float32)
}

// NewRAR returns the objective of c.
func NewRAR(c RARConfig) (*RAR, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &RAR{RARConfig: c}, nil
}

// Name implements train.Objective.
func (r *RAR) Name() string { return "rar" }

// Info implements train.Recorded.
func (r *RAR) Info() map[string]any {
	f := r.FreeLB
	return map[string]any{"n": f.N, "alpha": f.Alpha, "gamma": f.Gamma, "eps": f.Eps, "weight": r.Weight}
}

// errNoReconstructor is Loss's and ReconstructIDs' error for a model
// without a head.
var errNoReconstructor = errors.New("defense: rar needs a model with a reconstruction head (nn.Config.Reconstructor, Classifier.AddReconstructor, model.ImportOptions.Reconstructor)")

// Loss implements train.Objective. As FreeLB's, the first n−1 passes run
// on tapes of their own and the last on t. An ascent pass back-propagates
// L_C/n first and keeps δ's gradient (the ascent direction), then clears
// the graph's gradients (ag.Tape.ResetGrads) and back-propagates
// w_r·L_R/n through the same graph: the parameters get both, δ's
// direction has none of L_R. That costs one more backward pass through
// the encoder per ascent pass (n forward and 2n−1 backward passes per
// step); the last pass, whose δ gradient nothing uses, back-propagates
// the sum once.
func (r *RAR) Loss(t *ag.Tape, m *nn.Classifier, b *nn.Batch) (train.Output, error) {
	if m.Rec == nil {
		return train.Output{}, errNoReconstructor
	}
	f := r.FreeLB
	scale, w := float32(1/float64(f.N)), float32(r.Weight)
	var rec, acc float64
	delta := freeLBPasses(f, t, m, b, r.Trace, func(tp *ag.Tape, _ int, tokens, _ *ag.Var) *ag.Var {
		lr, correct, n := m.ReconstructionLoss(tp, tokens, b)
		rec, acc = rec+float64(lr.Item()), acc+float64(correct)/float64(max(n, 1))
		if w == 0 {
			return nil
		}
		return tp.Scale(lr, w*scale)
	})
	tokens, s := m.Encode(t, t.Add(m.EmbedInput(t, b), t.Const(delta)), b.Lengths)
	logits := m.Head(t, s)
	ce := t.CrossEntropy(logits, b.Labels, nil)
	lr, correct, n := m.ReconstructionLoss(t, tokens, b)
	rec, acc = rec+float64(lr.Item()), acc+float64(correct)/float64(max(n, 1))
	loss := t.Scale(t.Add(ce, t.Scale(lr, w)), scale)
	return train.Output{Loss: loss, Logits: logits, Terms: map[string]float32{
		"ce_last": ce.Item(),
		// Means over the n passes: L_R as the objective weighs it, and the
		// share of positions whose arg-max is the token read.
		"rec":     float32(rec / float64(f.N)),
		"rec_acc": float32(acc / float64(f.N)),
	}}, nil
}

// freeLBStart is FreeLB's δ_0 (carl-rar.md §3.1) for b, drawn from rng:
// per example uniform in ±γ/√(len·e) over the real positions, zero on
// padding and everywhere when γ is 0.
func freeLBStart(f FreeLBConfig, rng *rand.Rand, b *nn.Batch, dim int) *tensor.Tensor {
	delta := tensor.New(b.B, b.L, dim)
	if f.Gamma > 0 {
		for i := range b.B {
			d := delta.Data[i*b.L*dim : (i*b.L+min(b.Lengths[i], b.L))*dim]
			s := f.Gamma / math.Sqrt(float64(len(d)))
			for j := range d {
				d[j] = float32((2*rng.Float64() - 1) * s)
			}
		}
	}
	return delta
}

// freeLBAscend is FreeLB's ascent step: per example δ + α·g/‖g‖ over the
// real positions, projected onto the ε-ball when ε > 0; a new tensor.
func freeLBAscend(f FreeLBConfig, delta *tensor.Tensor, grad []float32, b *nn.Batch, dim int) *tensor.Tensor {
	next := delta.Clone()
	for i := range b.B {
		lo, n := i*b.L*dim, min(b.Lengths[i], b.L)*dim
		g, d := grad[lo:lo+n], next.Data[lo:lo+n]
		c := float32(f.Alpha / math.Max(tensor.Norm(g), 1e-8))
		for j, v := range g {
			d[j] += c * v
		}
		if dn := tensor.Norm(d); f.Eps > 0 && dn > f.Eps {
			s := float32(f.Eps / dn)
			for j := range d {
				d[j] *= s
			}
		}
	}
	return next
}

// ReconstructIDs decodes b as the model reads it, perturbed by delta [B,
// L, e] (nil: clean), in evaluation mode: the reconstruction head's
// arg-max token at each real position, one slice per example as long as
// its input (carl-rar.md §3.3, Table 6: text from adversarial
// representations). The ids are rows of the embedding table, so under an
// IDMap (SEM) they are codes, as MapIDs gives. The head's logits take
// B·L·V floats at most: decode a large set in batches.
func ReconstructIDs(m *nn.Classifier, b *nn.Batch, delta *tensor.Tensor) ([][]int32, error) {
	if m.Rec == nil {
		return nil, errNoReconstructor
	}
	if delta != nil && !tensor.SameShape(delta.Shape, []int{b.B, b.L, m.Emb.Dim()}) {
		return nil, fmt.Errorf("defense: perturbation of shape %v for a batch [%d, %d] of %d-dimensional embeddings", delta.Shape, b.B, b.L, m.Emb.Dim())
	}
	tp := ag.NewTape()
	tp.NoGrad = true
	x := m.EmbedInput(tp, b)
	if delta != nil {
		x = tp.Add(x, tp.Const(delta))
	}
	tokens, _ := m.Encode(tp, x, b.Lengths)
	logits, _ := m.Reconstruct(tp, tokens, b.Lengths)
	ids := nn.ArgmaxRows(logits.Data(), m.Cfg.VocabSize)
	out := make([][]int32, b.B)
	k := 0
	for i := range out {
		n := min(b.Lengths[i], b.L)
		out[i] = ids[k : k+n : k+n]
		k += n
	}
	return out, nil
}
