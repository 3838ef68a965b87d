package defense

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"sort"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/train"
)

// Embedding-space adversarial training for text (spgd.md): the loss is the
// clean cross-entropy plus λ times the cross-entropy of the embedded input
// moved by a perturbation d that the current model's gradient points to.
// The three methods differ only in d:
//
//   - AdvT-Text (Miyato et al. 2017): d = ε·g/‖g‖, g the loss gradient
//     over the whole sequence's embeddings (dense: every word moves).
//   - iAdvT-Text (Sato et al. 2018): each word moves in the span of the
//     directions towards its K nearest words, weighted by the gradient.
//   - SPGD (Barham and Feizi 2019): the AdvT step, each word's part
//     projected onto the one neighbour direction it is best aligned with
//     (towards it only), and all but the ⌊(1−σ)T⌋ words with the largest
//     raw step zeroed: the perturbation reads as a few word substitutions.
const (
	MethodAdvT  = "advt"
	MethodIAdvT = "iadvt"
	MethodSPGD  = "spgd"
	// MethodFGM is FGM adversarial training (Miyato et al.'s step as used
	// to fine-tune transformers), the AdvT step under its own name and ε;
	// MethodPGD takes Steps projected steps of size Step inside the ε-ball
	// (Madry et al.), each example's ball over its real tokens.
	MethodFGM = "fgm"
	MethodPGD = "pgd"
)

// AdvTextConfig are an embedding-space method's settings (spgd.md §3.3).
type AdvTextConfig struct {
	Method string
	// Eps is ε, the L2 norm of the sequence's (raw) perturbation.
	Eps float64
	// K neighbours per word (iadvt, spgd); Sigma the share of positions
	// SPGD zeroes; Steps SPGD's raw fast-gradient steps M, or PGD's
	// projected steps, of size Step (PGD; 0: 2.5·ε/Steps, Madry et al.'s
	// rule); Refresh the steps between neighbour-table snapshots.
	K, Steps, Refresh int
	Sigma, Step       float64
	// Lambda weighs the adversarial loss (spec: 1).
	Lambda float64
	// KeepOne keeps at least one position in a short sequence, where
	// ⌊(1−σ)T⌋ is 0 (spgd.md ambiguity 6; off: the paper's floor).
	KeepOne bool
	// LiteralIAdvT uses Sato et al.'s Eq. 6 as written (one normalisation
	// of all weights) instead of the per-word normalisation and the
	// rescaling to ε (spgd.md §8).
	LiteralIAdvT bool
}

// DefaultAdvText returns the paper's settings for a method (Appendix B):
// AdvT ε 5; iAdvT ε 15, K 15; SPGD ε 25, K 15, σ 0.75, one step; λ 1,
// neighbours refreshed every 50 steps.
func DefaultAdvText(method string) AdvTextConfig {
	c := AdvTextConfig{Method: method, K: 15, Steps: 1, Refresh: 50, Sigma: 0.75, Lambda: 1}
	switch method {
	case MethodAdvT:
		c.Eps = 5
	case MethodIAdvT:
		c.Eps = 15
	case MethodFGM:
		c.Eps = 1
	case MethodPGD:
		c.Eps, c.Steps = 1, 3
	default:
		c.Eps = 25
	}
	return c
}

// Validate checks the settings' ranges.
func (c AdvTextConfig) Validate() error {
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	switch {
	case c.Method != MethodAdvT && c.Method != MethodIAdvT && c.Method != MethodSPGD && c.Method != MethodFGM && c.Method != MethodPGD:
		return fmt.Errorf("defense: embedding-space method %q: want advt, iadvt, spgd, fgm or pgd", c.Method)
	case !finite(c.Step) || c.Step < 0:
		return fmt.Errorf("defense: %s step %g must be ≥ 0 (0 = 2.5·ε/steps)", c.Method, c.Step)
	case !finite(c.Eps) || c.Eps <= 0:
		return fmt.Errorf("defense: %s ε %g must be positive", c.Method, c.Eps)
	case c.K < 1 || c.K > 1000:
		return fmt.Errorf("defense: %s k %d must be in [1, 1000]", c.Method, c.K)
	case !finite(c.Sigma) || c.Sigma < 0 || c.Sigma >= 1:
		return fmt.Errorf("defense: spgd σ %g must be in [0, 1)", c.Sigma)
	case c.Steps < 1 || c.Steps > 100:
		return fmt.Errorf("defense: spgd steps %d must be in [1, 100]", c.Steps)
	case c.Refresh < 1:
		return fmt.Errorf("defense: neighbour refresh %d must be at least 1", c.Refresh)
	case !finite(c.Lambda) || c.Lambda < 0:
		return fmt.Errorf("defense: %s λ %g must be ≥ 0", c.Method, c.Lambda)
	}
	return nil
}

// AdvText is the training objective of one embedding-space method.
type AdvText struct {
	AdvTextConfig
	Neighbors *EmbeddingNeighbors // iadvt and spgd
	step      int
}

// NewAdvText returns the objective of c.
func NewAdvText(c AdvTextConfig) (*AdvText, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	a := &AdvText{AdvTextConfig: c}
	if c.Method == MethodIAdvT || c.Method == MethodSPGD {
		var err error
		if a.Neighbors, err = NewEmbeddingNeighbors(c.K, c.Refresh); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// Name implements train.Objective.
func (a *AdvText) Name() string { return a.Method }

// Info implements train.Recorded.
func (a *AdvText) Info() map[string]any {
	info := map[string]any{"eps": a.Eps, "lambda": a.Lambda}
	if a.Method == MethodPGD {
		info["steps"], info["step"] = a.Steps, a.pgdStep()
	}
	if a.Neighbors != nil {
		info["k"], info["refresh"] = a.K, a.Refresh
	}
	if a.Method == MethodSPGD {
		info["sigma"], info["steps"], info["keep_one"] = a.Sigma, a.Steps, a.KeepOne
	}
	if a.Method == MethodIAdvT && a.LiteralIAdvT {
		info["literal"] = true
	}
	return info
}

// AtStep implements train.Scheduled: the neighbour table's refresh
// follows the optimiser steps (Loss takes the snapshot).
func (a *AdvText) AtStep(step int) { a.step = step }

// State and SetState implement train.Stateful (the neighbour snapshot).
func (a *AdvText) State() map[string]*tensor.Tensor {
	if a.Neighbors == nil {
		return nil
	}
	return a.Neighbors.State()
}

// SetState implements train.Stateful.
func (a *AdvText) SetState(s map[string]*tensor.Tensor) error {
	if a.Neighbors == nil {
		return nil
	}
	return a.Neighbors.SetState(s)
}

// Loss implements train.Objective: clean cross-entropy plus λ times the
// cross-entropy of the perturbed input, the perturbation a constant.
func (a *AdvText) Loss(t *ag.Tape, m *nn.Classifier, b *nn.Batch) (train.Output, error) {
	if a.Neighbors != nil && t.Train {
		a.Neighbors.AtStep(a.step, m.Emb.W.Value)
	}
	x := m.EmbedInput(t, b)
	_, sent := m.Encode(t, x, b.Lengths)
	logits := m.Head(t, sent)
	ce := t.CrossEntropy(logits, b.Labels, nil)
	var seed int64
	if t.Train {
		seed = t.Rng.Int63() // the gradient pass's own dropout draws
	}
	p, err := a.Perturb(m, b, x.Value, seed, t.Train)
	if err != nil {
		return train.Output{}, err
	}
	_, advSent := m.Encode(t, t.Add(x, t.Const(p.D)), b.Lengths)
	adv := t.CrossEntropy(m.Head(t, advSent), b.Labels, nil)
	loss := t.Add(ce, t.Scale(adv, float32(a.Lambda)))
	return train.Output{Loss: loss, Logits: logits, Terms: map[string]float32{"ce": ce.Item(), "adv": adv.Item()}}, nil
}

// Perturbation is a batch's perturbation: D [B, L, Dim] to add to the
// encoder's input, and for SPGD the neighbour each perturbed position
// moves towards (Toward[b][t], -1 where d_t = 0).
type Perturbation struct {
	D      *tensor.Tensor
	Toward [][]int32
}

// Perturb computes the perturbation of input x ([B, L, Dim], the
// embedded batch as EmbedInput gives it) against m with the model held
// constant. train and seed set the gradient pass's dropout.
func (a *AdvText) Perturb(m *nn.Classifier, b *nn.Batch, x *tensor.Tensor, seed int64, train bool) (Perturbation, error) {
	dim := x.Shape[2]
	grad := func(r []float32) []float32 {
		tp := &ag.Tape{Train: train, Rng: rand.New(rand.NewSource(seed)), InputGradOnly: true}
		in := x
		if r != nil {
			in = tensor.From(append([]float32(nil), x.Data...), x.Shape...)
			for i, v := range r {
				in.Data[i] += v
			}
		}
		leaf := tp.Leaf(in)
		_, s := m.EncodeInput(tp, leaf, b)
		tp.Backward(tp.CrossEntropy(m.Head(tp, s), b.Labels, nil))
		return leaf.Grad.Data
	}
	var nbs [][]int32
	ids := m.MapIDs(b.IDs)
	if a.Neighbors != nil {
		if a.Neighbors.Version() < 0 {
			a.Neighbors.Snapshot(m.Emb.W.Value, 0) // outside training: the current table
		}
		nbs = a.Neighbors.Of(ids)
	}
	p := Perturbation{D: tensor.New(x.Shape...)}
	emb := m.Emb.W.Value.Data
	var r []float32 // SPGD's raw perturbation over M steps, PGD's iterate
	steps := 1
	if a.Method == MethodSPGD || a.Method == MethodPGD {
		steps, r = a.Steps, make([]float32, len(x.Data))
	}
	var g []float32
	for step := range steps {
		if step == 0 {
			g = grad(nil)
		} else {
			g = grad(r)
		}
		if r == nil {
			break
		}
		size := a.Eps / float64(a.Steps)
		if a.Method == MethodPGD {
			size = a.pgdStep()
		}
		for i := range b.B {
			n := min(b.Lengths[i], b.L) * dim
			gi, ri := g[i*b.L*dim:i*b.L*dim+n], r[i*b.L*dim:i*b.L*dim+n]
			if norm := tensor.Norm(gi); norm > 0 {
				c := float32(size / norm)
				for j, v := range gi {
					ri[j] += c * v
				}
			}
			if rn := tensor.Norm(ri); a.Method == MethodPGD && rn > a.Eps {
				c := float32(a.Eps / rn)
				for j := range ri {
					ri[j] *= c
				}
			}
		}
	}
	if a.Method == MethodSPGD {
		p.Toward = make([][]int32, b.B)
	}
	for i := range b.B {
		n := min(b.Lengths[i], b.L)
		off := i * b.L * dim
		d := p.D.Data[off : off+n*dim]
		rowIDs := ids[i*b.L : i*b.L+n]
		var rowNbs [][]int32
		if nbs != nil {
			rowNbs = nbs[i*b.L : i*b.L+n]
		}
		switch a.Method {
		case MethodAdvT, MethodFGM:
			AdvTStep(d, g[off:off+n*dim], a.Eps)
		case MethodPGD:
			copy(d, r[off:off+n*dim])
		case MethodIAdvT:
			IAdvTStep(d, g[off:off+n*dim], rowIDs, rowNbs, emb, dim, a.Eps, a.LiteralIAdvT)
		case MethodSPGD:
			p.Toward[i] = SPGDProject(d, r[off:off+n*dim], rowIDs, rowNbs, emb, dim, a.Sigma, a.KeepOne)
		}
	}
	return p, nil
}

// AdvTStep writes d = ε·g/‖g‖ (one sequence; the norm over all its
// positions' entries); d stays zero when g is.
func AdvTStep(d, g []float32, eps float64) {
	norm := tensor.Norm(g)
	if norm == 0 {
		return
	}
	c := float32(eps / norm)
	for j, v := range g {
		d[j] = c * v
	}
}

// direction writes the unit direction from word row w to row n of table
// emb into u and reports whether it exists (the rows differ).
func direction(u []float32, emb []float32, w, n int32, dim int) bool {
	ew, en := emb[int(w)*dim:(int(w)+1)*dim], emb[int(n)*dim:(int(n)+1)*dim]
	var ss float64
	for j := range u {
		u[j] = en[j] - ew[j]
		ss += float64(u[j]) * float64(u[j])
	}
	if ss == 0 {
		return false
	}
	inv := float32(1 / math.Sqrt(ss))
	for j := range u {
		u[j] *= inv
	}
	return true
}

// IAdvTStep writes iAdvT-Text's perturbation of one sequence into d: each
// position's gradient g_t is read in its neighbours' unit directions u_k
// (weights g_t·u_k), the weights normalised over the word's K, the
// direction D_t = Σ_k α_k u_k, and the sequence scaled to norm ε. literal
// normalises all weights at once and sums a*·u without rescaling (Sato
// et al.'s Eq. 6 as written). Positions without neighbours stay zero.
func IAdvTStep(d, g []float32, ids []int32, nbs [][]int32, emb []float32, dim int, eps float64, literal bool) {
	u := make([]float32, dim)
	type weighted struct {
		pos  int
		dirs [][]float32
		w    []float64
	}
	var all []weighted
	var total float64 // Σ over every weight², for the literal form
	for t, id := range ids {
		gt := g[t*dim : (t+1)*dim]
		var wt weighted
		wt.pos = t
		for _, n := range nbs[t] {
			if !direction(u, emb, id, n, dim) {
				continue
			}
			var dot float64
			for j, v := range u {
				dot += float64(v) * float64(gt[j])
			}
			wt.dirs = append(wt.dirs, append([]float32(nil), u...))
			wt.w = append(wt.w, dot)
			total += dot * dot
		}
		if len(wt.w) > 0 {
			all = append(all, wt)
		}
	}
	for _, wt := range all {
		scale := 1.0
		if literal {
			if total == 0 {
				return
			}
			scale = eps / math.Sqrt(total)
		} else {
			var ss float64
			for _, w := range wt.w {
				ss += w * w
			}
			if ss == 0 {
				continue
			}
			scale = 1 / math.Sqrt(ss)
		}
		dt := d[wt.pos*dim : (wt.pos+1)*dim]
		for k, dir := range wt.dirs {
			c := float32(wt.w[k] * scale)
			for j, v := range dir {
				dt[j] += c * v
			}
		}
	}
	if !literal {
		if norm := tensor.Norm(d); norm > 0 {
			c := float32(eps / norm)
			for j := range d {
				d[j] *= c
			}
		}
	}
}

// SPGDProject writes SPGD's perturbation of one sequence into d from its
// raw perturbation r (spgd.md §3): each position's r_t projected onto the
// unit direction u towards the neighbour with the largest r_t·u, the
// coefficient clamped at 0 (towards only); then all positions but the
// ⌊(1−σ)T⌋ with the largest ‖r_t‖ (ties: the earlier position) zeroed
// (keepOne: at least one). It returns the neighbour each position moves
// towards, -1 where d_t is zero.
func SPGDProject(d, r []float32, ids []int32, nbs [][]int32, emb []float32, dim int, sigma float64, keepOne bool) []int32 {
	n := len(ids)
	toward := make([]int32, n)
	norms := make([]float64, n)
	order := make([]int, n)
	for t := range n {
		toward[t], order[t] = -1, t
		norms[t] = tensor.Norm(r[t*dim : (t+1)*dim])
	}
	keep := int(math.Floor((1 - sigma) * float64(n)))
	if keepOne && n > 0 {
		keep = max(keep, 1)
	}
	sort.SliceStable(order, func(a, b int) bool { return norms[order[a]] > norms[order[b]] })
	u, best := make([]float32, dim), make([]float32, dim)
	for _, t := range order[:keep] {
		rt := r[t*dim : (t+1)*dim]
		bestC, bestN := math.Inf(-1), int32(-1)
		for _, nb := range nbs[t] {
			if !direction(u, emb, ids[t], nb, dim) {
				continue
			}
			var c float64
			for j, v := range u {
				c += float64(v) * float64(rt[j])
			}
			if c > bestC {
				bestC, bestN = c, nb
				copy(best, u)
			}
		}
		if bestN < 0 || bestC <= 0 {
			continue // moving away from every neighbour: stay (ambiguity 5)
		}
		toward[t] = bestN
		dt := d[t*dim : (t+1)*dim]
		for j, v := range best {
			dt[j] = float32(bestC) * v
		}
	}
	return toward
}

// Discretize reads an SPGD perturbation as text (spgd.md §3.2): ids with
// each perturbed position (toward ≥ 0) replaced by the neighbour it moves
// towards.
func Discretize(ids, toward []int32) []int32 {
	out := slices.Clone(ids)
	for i, nb := range toward {
		if nb >= 0 {
			out[i] = nb
		}
	}
	return out
}

// pgdStep is PGD's step size: Step, or 2.5·ε/Steps.
func (a *AdvText) pgdStep() float64 {
	if a.Step > 0 {
		return a.Step
	}
	return 2.5 * a.Eps / float64(a.Steps)
}
