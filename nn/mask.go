package nn

import (
	"fmt"
	"math"
	"math/rand"
	"sort"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/tensor"
)

// DefaultMaskHidden is the hidden width of the importance network (FLAT's
// reference implementation uses 400).
const DefaultMaskHidden = 400

// WordMask is FLAT's variational word mask (Chen & Ji 2020, VMASK): a
// global importance network φ(e) = σ(ℓ_keep − ℓ_drop), ℓ = B·tanh(A·e + a) + b,
// applied to each word's embedding row. φ depends only on the word (its row
// of the embedding table), never on context or position.
//
// In training mode (tape.Train) every token position draws a hard
// straight-through Gumbel-softmax sample W ∈ {0,1} with E[W] = φ (τ = Tau);
// in inference mode each embedding is scaled by φ deterministically.
type WordMask struct {
	Hidden *Linear // D → H, tanh
	Out    *Linear // H → 2 (drop, keep)
	// Tau is the Gumbel-softmax temperature (1).
	Tau float64
}

// maskWidth is the hidden width a word mask of configured width h gets.
func maskWidth(h int) int {
	if h <= 0 {
		return DefaultMaskHidden
	}
	return h
}

// NewWordMask builds the importance network for dim-wide embeddings.
func NewWordMask(dim, hidden int, rng *rand.Rand) *WordMask {
	hidden = maskWidth(hidden)
	return &WordMask{Hidden: NewLinear("mask.hidden", dim, hidden, rng), Out: NewLinear("mask.out", hidden, 2, rng), Tau: 1}
}

// Params lists the importance network's weights.
func (w *WordMask) Params() []*ag.Param { return append(w.Hidden.Params(), w.Out.Params()...) }

// KeepLogit maps embedding rows e [N, D] to ℓ_keep − ℓ_drop [N, 1]; φ is its
// sigmoid.
func (w *WordMask) KeepLogit(t *ag.Tape, e *ag.Var) *ag.Var {
	l := w.Out.Forward(t, t.Tanh(w.Hidden.Forward(t, e)))
	return t.Sub(t.Slice(l, 1, 1, 2), t.Slice(l, 1, 0, 1))
}

// Phi returns φ for embedding rows e [N, D] as [N, 1].
func (w *WordMask) Phi(t *ag.Tape, e *ag.Var) *ag.Var { return t.Sigmoid(w.KeepLogit(t, e)) }

// UniqueIDs returns the distinct ids of ids in ascending order and, for
// every position, the index of its id in that list: for work that depends
// only on the word, done once per distinct word and gathered back.
func UniqueIDs(ids []int32) (uniq []int32, at []int) {
	seen := map[int32]int{}
	for _, id := range ids {
		if _, ok := seen[id]; !ok {
			seen[id] = 0
			uniq = append(uniq, id)
		}
	}
	sort.Slice(uniq, func(a, b int) bool { return uniq[a] < uniq[b] })
	for i, id := range uniq {
		seen[id] = i
	}
	at = make([]int, len(ids))
	for i, id := range ids {
		at[i] = seen[id]
	}
	return uniq, at
}

// MaskOut is the result of applying the mask to a batch.
type MaskOut struct {
	// X is the masked embedding batch [B, L, D].
	X *ag.Var
	// Phi is φ of the word at every position, [B·L, 1] (row-major over
	// [B, L]); padding positions hold φ of the padding id.
	Phi *ag.Var
	// W is the sampled hard mask [B·L, 1] in training mode, nil otherwise.
	W *ag.Var
}

// PositionPhi computes φ for every id of ids as [len(ids), 1]. The network
// runs once per distinct word on its row of the embedding table, so a word
// gets a bit-identical φ wherever it occurs.
func (w *WordMask) PositionPhi(t *ag.Tape, emb *Embedding, ids []int32) *ag.Var {
	uniq, at := UniqueIDs(ids)
	phi := w.Phi(t, t.Lookup(emb.W.Var, uniq, emb.PadID))
	return t.Gather(phi, at)
}

// Apply masks embedded tokens x [B, L, D] whose ids are ids (row-major
// [B, L]). Training tapes sample hard straight-through masks; inference
// tapes scale by φ.
func (w *WordMask) Apply(t *ag.Tape, emb *Embedding, x *ag.Var, ids []int32) MaskOut {
	sh := x.Shape()
	factor, mo := w.Factor(t, emb, ids)
	mo.X = t.Mul(x, t.Reshape(factor, sh[0], sh[1], 1))
	return mo
}

// Factor returns what Apply multiplies each position's embedding by, [N, 1]
// for the N = len(ids) positions: the sampled mask W on training tapes, φ
// otherwise; MaskOut holds φ and W (X is left nil).
func (w *WordMask) Factor(t *ag.Tape, emb *Embedding, ids []int32) (*ag.Var, MaskOut) {
	uniq, at := UniqueIDs(ids)
	logit := t.Gather(w.KeepLogit(t, t.Lookup(emb.W.Var, uniq, emb.PadID)), at) // [N, 1]
	phi := t.Sigmoid(logit)
	if !t.Train {
		return phi, MaskOut{Phi: phi}
	}
	m := w.Sample(t, logit)
	return m, MaskOut{Phi: phi, W: m}
}

// Sample draws a hard straight-through Gumbel-softmax keep mask from
// keep-minus-drop logits [N, 1]: the forward value is exactly 0 or 1
// (argmax of softmax((ℓ + g)/τ)), the backward pass is that of the soft
// sample s_keep = σ((ℓ_keep − ℓ_drop + g_keep − g_drop)/τ).
func (w *WordMask) Sample(t *ag.Tape, logit *ag.Var) *ag.Var {
	n := len(logit.Data())
	noise := tensor.New(logit.Shape()...)
	for i := range noise.Data {
		// g_keep − g_drop of two independent Gumbel(0,1) draws is Logistic(0,1).
		noise.Data[i] = float32(gumbel(t.Rng) - gumbel(t.Rng))
	}
	tau := w.Tau
	if tau <= 0 {
		tau = 1
	}
	soft := t.Sigmoid(t.Scale(t.Add(logit, t.Const(noise)), float32(1/tau)))
	hard := make([]float32, n)
	diff := tensor.New(logit.Shape()...)
	for i, s := range soft.Data() {
		if s > 0.5 {
			hard[i] = 1
		}
		diff.Data[i] = hard[i] - s
	}
	// soft + stop_gradient(hard − soft): Add's backward passes the gradient
	// to soft unchanged; the forward value is then set to exactly hard
	// (float rounding of (hard − s) + s could miss 1 by an ulp).
	m := t.Add(soft, t.Const(diff))
	copy(m.Value.Data, hard)
	return m
}

func gumbel(rng *rand.Rand) float64 {
	u := rng.Float64()
	for u == 0 {
		u = rng.Float64()
	}
	return -math.Log(-math.Log(u))
}

// EntropyReduction says how FLAT's L_ent combines the per-token terms
// (spec flat.md F4). β is tuned for the default; retune it with another.
type EntropyReduction string

const (
	// EntropyMean averages over the batch's real tokens (the spec's default).
	EntropyMean EntropyReduction = "mean"
	// EntropyMeanPadded averages over all B·L positions, padding included
	// (the reference code).
	EntropyMeanPadded EntropyReduction = "mean-padded"
	// EntropySum sums over each text's tokens and averages over the batch
	// (the paper's H_q(W|x) = Σ_i h(φ_{x_i})).
	EntropySum EntropyReduction = "sum"
)

// ParseEntropyReduction accepts "" (the default, mean), mean, mean-padded
// and sum.
func ParseEntropyReduction(s string) (EntropyReduction, error) {
	switch r := EntropyReduction(s); r {
	case "":
		return EntropyMean, nil
	case EntropyMean, EntropyMeanPadded, EntropySum:
		return r, nil
	}
	return "", fmt.Errorf("entropy reduction %q: valid are mean, mean-padded, sum", s)
}

// NegEntropy is FLAT's L_ent: φ·log φ + (1−φ)·log(1−φ) (minus the mask
// entropy) combined over the batch as red says. phi is [B·L, 1] as in
// MaskOut; lengths give each row's real tokens.
func NegEntropy(t *ag.Tape, phi *ag.Var, b, l int, lengths []int, red EntropyReduction) *ag.Var {
	const eps = 1e-8
	w := tensor.New(b*l, 1)
	valid := 0
	for i := 0; i < b; i++ {
		n := min(lengths[i], l)
		if red == EntropyMeanPadded {
			n = l
		}
		for j := 0; j < n; j++ {
			w.Data[i*l+j] = 1
			valid++
		}
	}
	denom := max(valid, 1)
	if red == EntropySum {
		denom = max(b, 1)
	}
	one := t.Const(tensor.From([]float32{1}, 1, 1))
	q := t.Sub(one, phi)
	h := t.Add(t.Mul(phi, t.Log(t.AddConst(phi, eps))), t.Mul(q, t.Log(t.AddConst(q, eps))))
	return t.Scale(t.Sum(t.Mul(h, t.Const(w))), 1/float32(denom))
}

// WordImportance tabulates φ for every vocabulary id (inference only).
func (m *Classifier) WordImportance() []float32 {
	if m.Mask == nil {
		return nil
	}
	t := ag.NewTape()
	t.NoGrad = true
	v := m.Cfg.VocabSize
	out := make([]float32, v)
	const chunk = 4096
	for s := 0; s < v; s += chunk {
		ids := make([]int32, 0, chunk)
		for id := s; id < min(s+chunk, v); id++ {
			ids = append(ids, int32(id))
		}
		copy(out[s:], m.Mask.Phi(t, t.Lookup(m.Emb.W.Var, ids)).Data())
	}
	return out
}
