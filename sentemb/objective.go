package sentemb

import (
	"errors"
	"fmt"
	"math"
	"math/rand"
	"sort"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/internal/seeded"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/train"
)

// DefaultTau is SimCSE's temperature, which RobustEmbed's spec adopts
// (§10.3).
const DefaultTau = 0.05

// sentence pools b's sentence vectors [B, H] from the word embeddings,
// plus delta [B, L, H] when given (the spec adds δ to the token-embedding
// lookup, before the position embeddings and the LayerNorm: §10.6).
func sentence(t *ag.Tape, net *nn.Classifier, b *nn.Batch, delta *tensor.Tensor) *ag.Var {
	x := net.Embed(t, b)
	if delta != nil {
		x = t.Add(x, t.Const(delta))
	}
	_, s := net.Encode(t, x, b.Lengths)
	return s
}

// diagonal is each anchor's one positive: candidate i.
func diagonal(n int) [][]int {
	pos := make([][]int, n)
	for i := range pos {
		pos[i] = []int{i}
	}
	return pos
}

// SimCSE is unsupervised SimCSE (Gao et al. 2021): each sentence is
// encoded twice with independent dropout masks, and the two vectors are
// each other's positive against the batch's other sentences.
type SimCSE struct {
	Tau float64
}

// Name implements train.Objective.
func (*SimCSE) Name() string { return "simcse" }

// Info implements train.Recorded.
func (s *SimCSE) Info() map[string]any { return map[string]any{"tau": s.Tau} }

// Loss implements train.Objective: InfoNCE of the first view against the
// second (dropout must be on: a training tape and a model with dropout).
func (s *SimCSE) Loss(t *ag.Tape, net *nn.Classifier, b *nn.Batch) (train.Output, error) {
	z1 := sentence(t, net, b, nil)
	z2 := sentence(t, net, b, nil)
	l, err := InfoNCE(t, z1, z2, diagonal(b.B), s.Tau)
	if err != nil {
		return train.Output{}, err
	}
	return train.Output{Loss: l, Terms: map[string]float32{"simcse": l.Item()}}, nil
}

// Norm is a perturbation norm: "inf", "2" or "1".
type Norm string

// Config holds RobustEmbed's hyper-parameters (spec §3, §10).
type Config struct {
	Tau float64
	// Eps is the ball's radius ε under Norm (per sentence over its real
	// tokens' entries; for ∞ per coordinate).
	Eps  float64
	Norm Norm
	// Alpha and K: the PGD branch's step and steps; Beta and T the FGSM
	// branch's; Lambda the PGD branch's weight in δ_f.
	Alpha, Beta float64
	K, T        int
	Lambda      float64
	// Gamma weighs L_reg; Sigma is the random start's standard deviation.
	Gamma, Sigma float64
	// MeanOfTwo replaces Eq. 7's two positives in one log by the mean of two
	// single-positive InfoNCE terms (§10.9's variant).
	MeanOfTwo bool
	Seed      int64
}

// DefaultConfig is the spec's: τ 0.05, ℓ∞ ball ε = T·β = 5e-3, α 1e-5,
// β 1e-3, K = T = 5, λ 0.5, γ 1/128, σ 1e-5.
func DefaultConfig() Config {
	return Config{Tau: DefaultTau, Eps: 5e-3, Norm: "inf", Alpha: 1e-5, Beta: 1e-3, K: 5, T: 5, Lambda: 0.5, Gamma: 1.0 / 128, Sigma: 1e-5, Seed: 1}
}

// Validate checks the ranges.
func (c Config) Validate() error {
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	switch {
	case !finite(c.Tau) || c.Tau <= 0:
		return fmt.Errorf("robustembed: temperature %g must be positive", c.Tau)
	case !finite(c.Eps) || c.Eps < 0, !finite(c.Alpha) || c.Alpha < 0, !finite(c.Beta) || c.Beta < 0:
		return fmt.Errorf("robustembed: ε %g, α %g and β %g must be ≥ 0", c.Eps, c.Alpha, c.Beta)
	case c.K < 0 || c.T < 0 || c.K+c.T == 0:
		return fmt.Errorf("robustembed: K %d and T %d must be ≥ 0, not both 0", c.K, c.T)
	case !finite(c.Lambda) || c.Lambda < 0 || c.Lambda > 1:
		return fmt.Errorf("robustembed: λ %g must be in [0, 1]", c.Lambda)
	case !finite(c.Gamma) || c.Gamma < 0, !finite(c.Sigma) || c.Sigma < 0:
		return fmt.Errorf("robustembed: γ %g and σ %g must be ≥ 0", c.Gamma, c.Sigma)
	case c.Norm != "inf" && c.Norm != "2" && c.Norm != "1":
		return fmt.Errorf("robustembed: norm %q: want inf, 2 or 1", c.Norm)
	}
	return nil
}

// RobustEmbed is the objective of spec §2.2 and Algorithm 1: L_main =
// InfoNCE(z; {z⁺, z^adv}, Z⁺ ∪ Z^adv) + γ·InfoNCE(z^adv; {z⁺}, Z⁺), the
// adversarial view encoded from the token embeddings plus δ_f
// (Search).
type RobustEmbed struct {
	Config
	src *seeded.Source
	rng *rand.Rand
}

// New returns RobustEmbed with c, checked.
func New(c Config) (*RobustEmbed, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &RobustEmbed{Config: c}, nil
}

// Name implements train.Objective.
func (*RobustEmbed) Name() string { return "robustembed" }

// Info implements train.Recorded.
func (r *RobustEmbed) Info() map[string]any {
	return map[string]any{"tau": r.Tau, "eps": r.Eps, "norm": string(r.Norm), "alpha": r.Alpha, "beta": r.Beta, "k": r.K, "t": r.T,
		"lambda": r.Lambda, "gamma": r.Gamma, "sigma": r.Sigma, "mean_of_two": r.MeanOfTwo, "seed": r.Seed}
}

func (r *RobustEmbed) random() *rand.Rand {
	if r.rng == nil {
		r.rng, r.src = seeded.New(r.Seed)
	}
	return r.rng
}

// RandomDraws implements train.Random: the random starts' position.
func (r *RobustEmbed) RandomDraws() uint64 {
	if r.src == nil {
		return 0
	}
	return r.src.Draws()
}

// SkipRandom implements train.Random.
func (r *RobustEmbed) SkipRandom(n uint64) {
	r.random()
	r.src.Skip(n)
}

// Loss implements train.Objective.
func (r *RobustEmbed) Loss(t *ag.Tape, net *nn.Classifier, b *nn.Batch) (train.Output, error) {
	z1 := sentence(t, net, b, nil)
	z2 := sentence(t, net, b, nil)
	delta, err := r.Search(net, b, z2.Value)
	if err != nil {
		return train.Output{}, err
	}
	z3 := sentence(t, net, b, delta)
	n := b.B
	var main *ag.Var
	if r.MeanOfTwo {
		a, err := InfoNCE(t, z1, z2, diagonal(n), r.Tau)
		if err != nil {
			return train.Output{}, err
		}
		c, _ := InfoNCE(t, z1, z3, diagonal(n), r.Tau)
		main = t.Scale(t.Add(a, c), 0.5)
	} else {
		pos := make([][]int, n)
		for i := range pos {
			pos[i] = []int{i, n + i}
		}
		if main, err = InfoNCE(t, z1, t.Concat(0, z2, z3), pos, r.Tau); err != nil {
			return train.Output{}, err
		}
	}
	reg, err := InfoNCE(t, z3, z2, diagonal(n), r.Tau)
	if err != nil {
		return train.Output{}, err
	}
	loss := t.Add(main, t.Scale(reg, float32(r.Gamma)))
	return train.Output{Loss: loss, Terms: map[string]float32{"main": main.Item(), "reg": reg.Item()}}, nil
}

// Search is the perturbation search of spec §3 (one chain): from a random
// start δ¹ ~ N(0, σ²) on the real tokens, max(K, T) steps each take one
// gradient g of InfoNCE(f(E + δ); {z⁺}, Z⁺) with dropout off and the
// parameters untouched, and update the PGD branch (δ + α·g/‖g‖_P,
// projected) for the first K and the FGSM branch (δ + β·sign g, projected)
// for the first T; the chain continues from their λ-mix. It returns δ_f =
// λ·δ_pgd + (1−λ)·δ_fgsm, zero on padding. zPos [B, H] is the dropout
// positive, held constant.
func (r *RobustEmbed) Search(net *nn.Classifier, b *nn.Batch, zPos *tensor.Tensor) (*tensor.Tensor, error) {
	x := net.Embed(ag.NewTape(), b).Value
	d := x.Shape[2]
	delta := tensor.New(x.Shape...)
	rng := r.random()
	realOf := func(v *tensor.Tensor, i int) []float32 {
		return v.Data[i*b.L*d : (i*b.L+min(b.Lengths[i], b.L))*d]
	}
	if r.Sigma > 0 {
		for i := range b.B {
			row := realOf(delta, i)
			for j := range row {
				row[j] = float32(rng.NormFloat64() * r.Sigma)
			}
			r.project(row)
		}
	}
	var pgd, fgsm *tensor.Tensor
	in := tensor.New(x.Shape...)
	for step := 1; step <= max(r.K, r.T); step++ {
		for j, v := range x.Data {
			in.Data[j] = v + delta.Data[j]
		}
		tp := &ag.Tape{Rng: rand.New(rand.NewSource(1)), InputGradOnly: true}
		leaf := tp.Leaf(in)
		_, s := net.Encode(tp, leaf, b.Lengths)
		l, err := InfoNCE(tp, s, tp.Const(zPos), diagonal(b.B), r.Tau)
		if err != nil {
			return nil, err
		}
		tp.Backward(l)
		if leaf.Grad == nil {
			return nil, errors.New("robustembed: no gradient reached the token embeddings")
		}
		var p, s2 *tensor.Tensor
		if step <= r.K {
			p = delta.Clone()
		}
		if step <= r.T {
			s2 = delta.Clone()
		}
		for i := range b.B {
			g := realOf(leaf.Grad, i)
			if p != nil {
				row := realOf(p, i)
				if gn := r.gradNorm(g); gn > 0 {
					c := float32(r.Alpha / gn)
					for j, v := range g {
						row[j] += c * v
					}
				}
				r.project(row)
			}
			if s2 != nil {
				row := realOf(s2, i)
				for j, v := range g {
					switch {
					case v > 0:
						row[j] += float32(r.Beta)
					case v < 0:
						row[j] -= float32(r.Beta)
					}
				}
				r.project(row)
			}
		}
		switch {
		case p != nil && s2 != nil:
			mix(delta, p, s2, r.Lambda)
		case p != nil:
			copy(delta.Data, p.Data)
		default:
			copy(delta.Data, s2.Data)
		}
		if p != nil {
			pgd = p
		}
		if s2 != nil {
			fgsm = s2
		}
	}
	switch {
	case pgd == nil:
		return fgsm, nil
	case fgsm == nil:
		return pgd, nil
	}
	out := tensor.New(x.Shape...)
	mix(out, pgd, fgsm, r.Lambda)
	return out, nil
}

// mix sets dst = λ·a + (1−λ)·b.
func mix(dst, a, b *tensor.Tensor, lambda float64) {
	l := float32(lambda)
	for j := range dst.Data {
		dst.Data[j] = l*a.Data[j] + (1-l)*b.Data[j]
	}
}

// gradNorm is ‖g‖ under the configured norm.
func (r *RobustEmbed) gradNorm(g []float32) float64 {
	var s float64
	for _, v := range g {
		a := math.Abs(float64(v))
		switch r.Norm {
		case "inf":
			s = math.Max(s, a)
		case "1":
			s += a
		default:
			s += a * a
		}
	}
	if r.Norm == "2" {
		s = math.Sqrt(s)
	}
	return s
}

// project puts one sentence's perturbation back into the ε-ball.
func (r *RobustEmbed) project(d []float32) {
	eps := float32(r.Eps)
	switch r.Norm {
	case "inf":
		for j, v := range d {
			d[j] = min(max(v, -eps), eps)
		}
	case "2":
		if n := float32(tensor.Norm(d)); n > eps {
			s := eps / n
			for j := range d {
				d[j] *= s
			}
		}
	case "1":
		projectL1(d, r.Eps)
	}
}

// projectL1 is the Euclidean projection onto the ℓ1 ball of radius eps
// (Duchi et al. 2008, the sort-based algorithm).
func projectL1(d []float32, eps float64) {
	var norm float64
	for _, v := range d {
		norm += math.Abs(float64(v))
	}
	if norm <= eps {
		return
	}
	u := make([]float64, len(d))
	for j, v := range d {
		u[j] = math.Abs(float64(v))
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(u)))
	var cum, theta float64
	for j, v := range u {
		cum += v
		if t := (cum - eps) / float64(j+1); v > t {
			theta = t
		}
	}
	for j, v := range d {
		a := math.Max(math.Abs(float64(v))-theta, 0)
		d[j] = float32(math.Copysign(a, float64(v)))
	}
}
