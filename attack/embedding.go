package attack

import (
	"fmt"
	"math"
	"math/rand"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/tensor"
)

// EmbeddingAttack is projected gradient ascent on the gold label's
// cross-entropy in the input-embedding space (k-PGD, Madry et al. 2018;
// carl-rar.md §6.3): the model in evaluation mode and fixed, δ starting at
// zero (or uniform in the ball), each step δ ← Π_ε(δ + η·g/‖g‖) with the
// norm and the projection per example over its real tokens. FGM (Miyato
// et al. 2017) is one step with η = ε. It measures robustness to
// perturbations that need not be words, the threat model of FreeLB, CARL
// and RobustEmbed.
type EmbeddingAttack struct {
	// Eps is the L2 radius of each example's perturbation (Frobenius norm
	// over its real tokens' embeddings); Step the ascent step η; Steps K.
	Eps   float64 `json:"eps"`
	Step  float64 `json:"step"`
	Steps int     `json:"steps"`
	// RandomInit starts from a random point of the ball (Seed) instead of
	// zero.
	RandomInit bool  `json:"random_init,omitempty"`
	Seed       int64 `json:"seed,omitempty"`
}

// PGD is the spec's k-PGD: K = 3, η = ε (so the ball's radius binds), zero
// start (carl-rar.md ambiguity 12).
func PGD(eps float64) EmbeddingAttack { return EmbeddingAttack{Eps: eps, Step: eps, Steps: 3} }

// FGM is the fast gradient method: one normalised step of size ε.
func FGM(eps float64) EmbeddingAttack { return EmbeddingAttack{Eps: eps, Step: eps, Steps: 1} }

// Validate checks the settings.
func (a EmbeddingAttack) Validate() error {
	bad := func(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) }
	switch {
	case bad(a.Eps) || a.Eps < 0:
		return fmt.Errorf("attack: ε %g must be ≥ 0", a.Eps)
	case bad(a.Step) || a.Step <= 0:
		return fmt.Errorf("attack: step %g must be positive", a.Step)
	case a.Steps < 1 || a.Steps > 1000:
		return fmt.Errorf("attack: steps %d must be in [1, 1000]", a.Steps)
	}
	return nil
}

// Perturb returns δ [B, L, D] for batch b against m: zero at padding.
func (a EmbeddingAttack) Perturb(m *nn.Classifier, b *nn.Batch) (*tensor.Tensor, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	x := m.EmbedInput(ag.NewTape(), b).Value
	dim := x.Shape[2]
	delta := tensor.New(x.Shape...)
	real := func(i int) []float32 { // example i's real tokens in delta
		n := min(b.Lengths[i], b.L)
		return delta.Data[i*b.L*dim : (i*b.L+n)*dim]
	}
	if a.RandomInit {
		r := rand.New(rand.NewSource(a.Seed))
		for i := range b.B {
			d := real(i)
			for j := range d {
				d[j] = float32(r.NormFloat64())
			}
			// A uniform point of the ball: a random direction, radius ε·U^(1/n).
			if n := tensor.Norm(d); n > 0 {
				scale := float32(a.Eps * math.Pow(r.Float64(), 1/float64(len(d))) / n)
				for j := range d {
					d[j] *= scale
				}
			}
		}
	}
	in := tensor.New(x.Shape...)
	for range a.Steps {
		for j, v := range x.Data {
			in.Data[j] = v + delta.Data[j]
		}
		tp := &ag.Tape{Rng: rand.New(rand.NewSource(1)), InputGradOnly: true}
		leaf := tp.Leaf(in)
		_, s := m.EncodeInput(tp, leaf, b)
		tp.Backward(tp.CrossEntropy(m.Head(tp, s), b.Labels, nil))
		for i := range b.B {
			n := min(b.Lengths[i], b.L) * dim
			g := leaf.Grad.Data[i*b.L*dim : i*b.L*dim+n]
			d := real(i)
			gn := tensor.Norm(g)
			if gn == 0 {
				continue
			}
			c := float32(a.Step / gn)
			for j, v := range g {
				d[j] += c * v
			}
			if dn := tensor.Norm(d); dn > a.Eps {
				s := float32(a.Eps / dn)
				for j := range d {
					d[j] *= s
				}
			}
		}
	}
	return delta, nil
}

// Outcome is an embedding attack's result on a batch: each example's
// prediction before and after, and how far its sentence vector (the
// classifier head's input) moved: the cosine and the Euclidean distance
// between the clean and the attacked vectors (carl-rar.md §6.2).
type Outcome struct {
	Clean, Attacked   []int
	Cosine, Euclidean []float64
	// CleanVectors holds the clean sentence vectors, one row per example,
	// for the spread that the distances are read against.
	CleanVectors [][]float32
}

// Run attacks batch b and returns the predictions with and without δ.
func (a EmbeddingAttack) Run(m *nn.Classifier, b *nn.Batch) (Outcome, error) {
	delta, err := a.Perturb(m, b)
	if err != nil {
		return Outcome{}, err
	}
	tp := ag.NewTape()
	tp.NoGrad = true
	x := m.EmbedInput(tp, b)
	predict := func(in *ag.Var) ([]int, []float32) {
		_, s := m.EncodeInput(tp, in, b)
		logits := m.Head(tp, s).Value
		c := logits.Shape[1]
		out := make([]int, b.B)
		for i := range out {
			out[i] = nn.Argmax(logits.Data[i*c : (i+1)*c])
		}
		return out, s.Value.Data
	}
	o := Outcome{Cosine: make([]float64, b.B), Euclidean: make([]float64, b.B), CleanVectors: make([][]float32, b.B)}
	var clean, attacked []float32
	o.Clean, clean = predict(x)
	o.Attacked, attacked = predict(tp.Add(x, tp.Const(delta)))
	h := len(clean) / b.B
	for i := range b.B {
		u, v := clean[i*h:(i+1)*h], attacked[i*h:(i+1)*h]
		o.CleanVectors[i] = u
		o.Cosine[i] = tensor.Cosine(u, v)
		var d float64
		for j := range u {
			d += (float64(u[j]) - float64(v[j])) * (float64(u[j]) - float64(v[j]))
		}
		o.Euclidean[i] = math.Sqrt(d)
	}
	return o, nil
}
