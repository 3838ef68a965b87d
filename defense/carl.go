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

// CARL's contrastive losses (carl-rar.md §3.2 and ambiguity 3).
const (
	CARLNCE     = "nce"     // CMC-style NCE with a frozen normaliser Z (the default)
	CARLInfoNCE = "infonce" // the softmax NCE approximates, positive in the denominator
)

// CARLConfig are CARL's settings: FreeLB's, and the contrastive term's.
type CARLConfig struct {
	FreeLB FreeLBConfig
	// Tau is the temperature of exp(a·x/τ), Momentum the memory banks'
	// M, Weight the weight of L_D (the paper's 1).
	Tau, Momentum, Weight float64
	// Negatives is m, the negatives per anchor (0: the spec's §9 scaling,
	// max(256, min(16000, ⌊0.27·N⌋)), at most N).
	Negatives int
	// StartEpoch is S in epochs: L_D joins the loss from the first step
	// after StartEpoch epochs and the banks fill during the epoch before.
	// StartStep, when positive, gives S in optimiser steps instead (the
	// paper's Table 3).
	StartEpoch, StartStep int
	// Contrast is the contrastive loss: CARLNCE or CARLInfoNCE.
	Contrast string
}

// DefaultCARL is the spec's: FreeLB's SST-2 row, τ 0.07, M 0.5, weight 1,
// m scaled with N, S after 2 epochs, NCE.
func DefaultCARL() CARLConfig {
	return CARLConfig{FreeLB: DefaultFreeLB(), Tau: 0.07, Momentum: 0.5, Weight: 1, StartEpoch: 2, Contrast: CARLNCE}
}

// Validate checks the ranges.
func (c CARLConfig) Validate() error {
	if err := c.FreeLB.Validate(); err != nil {
		return err
	}
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	switch {
	case !finite(c.Tau) || c.Tau <= 0:
		return fmt.Errorf("defense: carl τ %g must be positive", c.Tau)
	case !finite(c.Momentum) || c.Momentum < 0 || c.Momentum >= 1:
		return fmt.Errorf("defense: carl momentum %g must be in [0, 1)", c.Momentum)
	case !finite(c.Weight) || c.Weight < 0:
		return fmt.Errorf("defense: carl weight %g must be ≥ 0", c.Weight)
	case c.Negatives < 0:
		return fmt.Errorf("defense: carl negatives %d must be ≥ 0 (0 = scaled with the training set)", c.Negatives)
	case c.StartEpoch < 1 && c.StartStep <= 0:
		return fmt.Errorf("defense: carl start epoch %d must be ≥ 1 (the banks fill during the epoch before it)", c.StartEpoch)
	case c.StartStep < 0:
		return fmt.Errorf("defense: carl start step %d must be ≥ 0 (0 = from the start epoch)", c.StartStep)
	case c.Contrast != CARLNCE && c.Contrast != CARLInfoNCE:
		return fmt.Errorf("defense: carl loss %q (valid: %s, %s)", c.Contrast, CARLNCE, CARLInfoNCE)
	}
	return nil
}

// CARL is FreeLB plus L_D = L_D^o + L_D^a: each example's clean and
// adversarial sentence vectors pull together and away from the other
// view's memory-bank vectors of differently labelled examples.
type CARL struct {
	CARLConfig
	free *FreeLB

	n, m, spe int
	labels    []int
	others    [][]int // per label, the training indices of the other labels
	dim       int
	bankOrig  *tensor.Tensor // [N, H], unit rows
	bankAdv   *tensor.Tensor
	written   []bool
	z         [2]float64 // NCE normalisers of the adversarial- and clean-anchored directions (0: not yet estimated)
	step      int
	pending   *bankUpdate
	negatives []int // the last batch's, for tests
}

type bankUpdate struct {
	index     []int
	orig, adv []float32 // unit rows, [len(index)·H]
}

// NewCARL returns the objective of c; Prepare (train.Run calls it) gives
// it the training set.
func NewCARL(c CARLConfig) (*CARL, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &CARL{CARLConfig: c, free: &FreeLB{FreeLBConfig: c.FreeLB}}, nil
}

// Name implements train.Objective.
func (c *CARL) Name() string { return "carl" }

// Info implements train.Recorded.
func (c *CARL) Info() map[string]any {
	return map[string]any{"n": c.FreeLB.N, "alpha": c.FreeLB.Alpha, "gamma": c.FreeLB.Gamma, "eps": c.FreeLB.Eps,
		"tau": c.Tau, "momentum": c.Momentum, "weight": c.Weight, "negatives": c.Negatives,
		"start_epoch": c.StartEpoch, "start_step": c.StartStep, "loss": c.Contrast}
}

// AtStep implements train.Scheduled.
func (c *CARL) AtStep(step int) { c.step = step }

// Prepare implements train.Prepared: the labels, m, and S in steps.
func (c *CARL) Prepare(trainSet []train.Example, stepsPerEpoch int) error {
	n := len(trainSet)
	c.n, c.spe = n, stepsPerEpoch
	c.labels = make([]int, n)
	classes := 0
	for i, e := range trainSet {
		if e.Label < 0 {
			return fmt.Errorf("carl: training example %d has no label", i)
		}
		c.labels[i] = e.Label
		classes = max(classes, e.Label+1)
	}
	c.others = make([][]int, classes)
	for y := range classes {
		for i, l := range c.labels {
			if l != y {
				c.others[y] = append(c.others[y], i)
			}
		}
	}
	for i, l := range c.labels {
		if len(c.others[l]) == 0 {
			return fmt.Errorf("carl: training example %d's label %d is the only one in the training set: there are no negatives", i, l)
		}
	}
	c.m = c.Negatives
	if c.m == 0 {
		c.m = min(max(256, min(16000, int(0.27*float64(n)))), n)
	}
	if c.m > n {
		return fmt.Errorf("carl: %d negatives per example, more than the %d training examples the memory bank holds", c.m, n)
	}
	c.written = make([]bool, n)
	return nil
}

// NegativesPerExample is m after Prepare.
func (c *CARL) NegativesPerExample() int { return c.m }

// Start is S, the first optimiser step (0-based) whose loss has L_D.
func (c *CARL) Start() int {
	if c.StartStep > 0 {
		return c.StartStep
	}
	return c.StartEpoch * c.spe
}

// FirstSelectableEpoch implements train.Selective: the first epoch that
// ends with L_D on.
func (c *CARL) FirstSelectableEpoch() int {
	if c.spe == 0 {
		return 1
	}
	return c.Start()/c.spe + 1
}

// filling reports whether the banks take this step's vectors: from the
// epoch before S on.
func (c *CARL) filling() bool { return c.step >= c.Start()-c.spe }

// Loss implements train.Objective.
func (c *CARL) Loss(t *ag.Tape, m *nn.Classifier, b *nn.Batch) (train.Output, error) {
	if c.labels == nil {
		return train.Output{}, errors.New("carl: no training set (train.Run prepares the objective)")
	}
	c.applyPending()
	active := t.Train && c.step >= c.Start()
	fill := t.Train && c.filling()
	if (active || fill) && len(b.Index) != b.B {
		return train.Output{}, errors.New("carl: the batch has no example indices (train.Batches sets them)")
	}
	if active {
		if missing := c.unwritten(); missing > 0 {
			return train.Output{}, fmt.Errorf("carl: at step %d (S) %d of %d bank rows were never written: the banks fill during the epoch before S", c.step, missing, c.n)
		}
	}
	var firstClean *tensor.Tensor
	delta := c.free.Ascend(t, m, b, func(s *tensor.Tensor) {
		if c.FreeLB.Gamma == 0 {
			firstClean = s
		}
	})
	_, sAdv := m.Encode(t, t.Add(m.EmbedInput(t, b), t.Const(delta)), b.Lengths)
	logits := m.Head(t, sAdv)
	ce := t.CrossEntropy(logits, b.Labels, nil)
	loss := t.Scale(ce, float32(1/float64(c.FreeLB.N)))
	terms := map[string]float32{"ce_last": ce.Item()}
	if !active && !fill {
		return train.Output{Loss: loss, Logits: logits, Terms: terms}, nil
	}
	// The clean view: a pass of its own on t when L_D needs its gradient;
	// otherwise the first FreeLB pass (clean when γ is 0) or a pass
	// without a graph.
	var sClean *ag.Var
	switch {
	case active:
		_, sClean = m.Encode(t, m.EmbedInput(t, b), b.Lengths)
	case firstClean != nil:
		sClean = t.Const(firstClean)
	default:
		tp := &ag.Tape{Train: true, NoGrad: true, Rng: rand.New(rand.NewSource(t.Rng.Int63()))}
		_, sClean = m.Encode(tp, m.EmbedInput(tp, b), b.Lengths)
	}
	if c.dim == 0 {
		c.allocate(sAdv.Shape()[1])
	}
	unitAdv, unitClean := unitRows(t, sAdv), unitRows(t, sClean)
	if active {
		neg := c.sample(t.Rng, b)
		la := c.direction(t, 0, unitAdv, unitClean, c.bankOrig, neg, b.B)
		lo := c.direction(t, 1, unitClean, unitAdv, c.bankAdv, neg, b.B)
		ld := t.Add(la, lo)
		terms["carl"] = ld.Item()
		loss = t.Add(loss, t.Scale(ld, float32(c.Weight)))
	}
	c.pending = &bankUpdate{index: append([]int(nil), b.Index...), orig: append([]float32(nil), unitClean.Data()...), adv: append([]float32(nil), unitAdv.Data()...)}
	terms["carl_cos"] = meanRowDot(unitAdv.Data(), unitClean.Data(), c.dim)
	return train.Output{Loss: loss, Logits: logits, Terms: terms}, nil
}

func (c *CARL) allocate(dim int) {
	c.dim = dim
	c.bankOrig, c.bankAdv = tensor.New(c.n, dim), tensor.New(c.n, dim)
}

// unitRows is x [B, H] with each row scaled to unit L2 norm.
func unitRows(t *ag.Tape, x *ag.Var) *ag.Var {
	sh := x.Shape()
	return t.Div(x, t.Reshape(t.Norm(x, 1, 1e-12), sh[0], 1))
}

func meanRowDot(a, b []float32, dim int) float32 {
	var s float64
	for i := 0; i < len(a); i += dim {
		for j := range dim {
			s += float64(a[i+j]) * float64(b[i+j])
		}
	}
	return float32(s / float64(len(a)/dim))
}

// sample draws m negatives per row of b, uniformly with replacement among
// the training examples of other labels; both directions share them.
func (c *CARL) sample(rng *rand.Rand, b *nn.Batch) []int {
	r := rand.New(rand.NewSource(rng.Int63()))
	neg := make([]int, b.B*c.m)
	for i := range b.B {
		pool := c.others[c.labels[b.Index[i]]]
		for k := range c.m {
			neg[i*c.m+k] = pool[r.Intn(len(pool))]
		}
	}
	c.negatives = neg
	return neg
}

// direction is one direction's loss: anchors a [B, H] against positives p
// (same row) and the bank rows neg (m per anchor), all unit vectors.
func (c *CARL) direction(t *ag.Tape, which int, a, p *ag.Var, bank *tensor.Tensor, neg []int, rows int) *ag.Var {
	pos := t.Reshape(t.SumLast(t.Mul(a, p)), rows, 1)
	// One product with the whole bank, then the sampled columns: a GEMM
	// of B·N·H beats gathering B·m rows of H when m is a sizeable share
	// of N (the spec's m ≈ 0.27·N).
	all := t.Reshape(t.MatMul(a, t.Const(bank), true), rows*c.n, 1)
	at := make([]int, len(neg))
	for i := range rows {
		for k := range c.m {
			at[i*c.m+k] = i*c.n + neg[i*c.m+k]
		}
	}
	dots := t.Concat(1, pos, t.Reshape(t.Gather(all, at), rows, c.m))
	scaled := t.Scale(dots, float32(1/c.Tau))
	if c.Contrast == CARLInfoNCE {
		return t.CrossEntropy(scaled, make([]int, rows), nil)
	}
	if c.z[which] == 0 {
		var s float64
		for _, v := range scaled.Data() {
			s += math.Exp(float64(v))
		}
		// Rounded to float32, as checkpoints keep it, so a resumed run
		// computes what an uninterrupted one does.
		c.z[which] = float64(float32(float64(c.n) * s / float64(len(scaled.Data()))))
	}
	return nceLoss(t, scaled, c.z[which], c.m, c.n)
}

// nceLoss is the CMC-style NCE loss of scaled scores [B, 1+m] (column 0
// the positive), averaged over rows: with s = exp(score)/Z and the noise
// mass m·Pn = m/N,
//
//	−log(s₀/(s₀ + m/N)) − Σₖ log((m/N)/(sₖ + m/N)).
//
// It is Σ log(s + m/N) over the row minus the positive's score, plus
// constants (1e-7 sits in the denominators).
func nceLoss(t *ag.Tape, scaled *ag.Var, z float64, m, n int) *ag.Var {
	rows := scaled.Shape()[0]
	noise := float64(m) / float64(n)
	s := t.Scale(t.Exp(scaled), float32(1/z))
	logDen := t.Sum(t.Log(t.AddConst(s, float32(noise+1e-7))))
	pos := t.Sum(t.Slice(scaled, 1, 0, 1))
	konst := float32(math.Log(z) - float64(m)*math.Log(noise))
	return t.AddConst(t.Scale(t.Sub(logDen, pos), 1/float32(rows)), konst)
}

// applyPending writes the previous batch's vectors into the banks. The
// write waits until the next step so that the step's backward pass reads
// the bank it computed its scores with.
func (c *CARL) applyPending() {
	u := c.pending
	if u == nil {
		return
	}
	c.pending = nil
	mom := float32(c.Momentum)
	for k, i := range u.index {
		for _, pair := range []struct {
			bank *tensor.Tensor
			v    []float32
		}{{c.bankOrig, u.orig}, {c.bankAdv, u.adv}} {
			row := pair.bank.Data[i*c.dim : (i+1)*c.dim]
			v := pair.v[k*c.dim : (k+1)*c.dim]
			if !c.written[i] {
				copy(row, v)
				continue
			}
			var ss float64
			for j := range row {
				row[j] = mom*row[j] + (1-mom)*v[j]
				ss += float64(row[j]) * float64(row[j])
			}
			if ss > 0 {
				inv := float32(1 / math.Sqrt(ss))
				for j := range row {
					row[j] *= inv
				}
			}
		}
		c.written[i] = true
	}
}

func (c *CARL) unwritten() int {
	n := 0
	for _, w := range c.written {
		if !w {
			n++
		}
	}
	return n
}

// State implements train.Stateful: the banks, which rows are written, and
// the normalisers (with the last batch's pending write applied).
func (c *CARL) State() map[string]*tensor.Tensor {
	c.applyPending()
	if c.dim == 0 {
		return nil
	}
	w := tensor.New(c.n)
	for i, ok := range c.written {
		if ok {
			w.Data[i] = 1
		}
	}
	z := tensor.New(2)
	z.Data[0], z.Data[1] = float32(c.z[0]), float32(c.z[1])
	return map[string]*tensor.Tensor{"carl.bank_orig": c.bankOrig, "carl.bank_adv": c.bankAdv, "carl.written": w, "carl.z": z}
}

// SetState implements train.Stateful.
func (c *CARL) SetState(st map[string]*tensor.Tensor) error {
	if st == nil {
		return nil
	}
	o, a, w, z := st["carl.bank_orig"], st["carl.bank_adv"], st["carl.written"], st["carl.z"]
	if o == nil || a == nil || w == nil || z == nil || len(o.Shape) != 2 || !tensor.SameShape(o.Shape, a.Shape) ||
		len(w.Data) != o.Shape[0] || len(z.Data) != 2 {
		return errors.New("carl: the checkpoint's memory banks are incomplete")
	}
	if o.Shape[0] != c.n {
		return fmt.Errorf("carl: the checkpoint's memory banks hold %d examples, the training set has %d", o.Shape[0], c.n)
	}
	c.allocate(o.Shape[1])
	copy(c.bankOrig.Data, o.Data)
	copy(c.bankAdv.Data, a.Data)
	for i, v := range w.Data {
		c.written[i] = v != 0
	}
	c.z = [2]float64{float64(z.Data[0]), float64(z.Data[1])}
	return nil
}
