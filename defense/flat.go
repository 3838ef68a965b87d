package defense

import (
	"errors"
	"fmt"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/train"
)

// FLAT is the training objective of FLAT (feature-level adversarial
// training, spec flat.md §3.4) for a classifier with a word mask:
//
//	L = CE(f(W ⊙ x^a), y) + β·L_ent + γ·L_imp
//
// with W a hard straight-through Gumbel sample of the mask at the batch
// text x^a, L_ent the mean over real tokens of φ log φ + (1−φ) log(1−φ)
// (minus the mean entropy), and L_imp = (1/B) Σ_b Σ_i |φ(x^o_{b,i}) −
// φ(x^a_{b,i})| over the positions where the batch text differs from its
// original. Originals are registered with SetPairs; a batch row without a
// registered original is its own original (a clean pair, L_imp = 0).
// A model without a word mask has φ ≡ 1, the -adv baseline (spec §3.3);
// it is accepted only with β = γ = 0.
type FLAT struct {
	Beta, Gamma float64
	// Entropy is L_ent's reduction (spec F4); "" is the default, the mean
	// over real tokens.
	Entropy nn.EntropyReduction
	// ProbInputs: the reference code's double softmax (train.ClassLoss).
	ProbInputs bool
	orig       map[string][]int32
}

// DefaultFLATBeta and DefaultFLATGamma are spec §5's β and γ.
const (
	DefaultFLATBeta  = 0.1
	DefaultFLATGamma = 0.001
)

// NewFLAT checks the weights.
func NewFLAT(beta, gamma float64) (*FLAT, error) {
	if beta < 0 || gamma < 0 {
		return nil, fmt.Errorf("flat: beta %g and gamma %g must not be negative", beta, gamma)
	}
	return &FLAT{Beta: beta, Gamma: gamma, orig: map[string][]int32{}}, nil
}

// Name implements train.Objective.
func (*FLAT) Name() string { return "flat" }

// Info is recorded with the trained model and checked on resume, so it
// holds settings only (the rounds' pair counts are in RoundsResult).
func (f *FLAT) Info() map[string]any {
	red, _ := nn.ParseEntropyReduction(string(f.Entropy))
	return train.ProbInputsInfo(f.ProbInputs, map[string]any{"beta": f.Beta, "gamma": f.Gamma, "entropy_reduction": red})
}

// Pair is an original text and its adversarial version, as token ids.
type Pair struct{ Orig, Adv []int32 }

func idsKey(ids []int32) string {
	b := make([]byte, 4*len(ids))
	for i, id := range ids {
		b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(id), byte(id>>8), byte(id>>16), byte(id>>24)
	}
	return string(b)
}

// SetPairs replaces the registered (original, adversarial) pairs (D' is
// replaced every round, spec §4.1). Pairs whose texts are equal are
// skipped.
func (f *FLAT) SetPairs(ps []Pair) {
	f.orig = map[string][]int32{}
	for _, p := range ps {
		k := idsKey(p.Adv)
		if _, dup := f.orig[k]; !dup && idsKey(p.Orig) != k {
			f.orig[k] = p.Orig
		}
	}
}

// Loss implements train.Objective.
func (f *FLAT) Loss(t *ag.Tape, m *nn.Classifier, b *nn.Batch) (train.Output, error) {
	var phi, s *ag.Var
	if m.Mask != nil {
		// As Forward: the word mask, then a group mask if any.
		var mo nn.MaskOut
		s, mo = m.EncodeMasked(t, b, true)
		phi = mo.Phi
	} else {
		// Masks disabled, φ ≡ 1: both regularisers are constants, and FLAT
		// reduces to the -adv objective (spec §3.3, check 6): the same
		// encoding as Forward. Nonzero weights then mean a model built
		// without its mask by mistake.
		if f.Beta != 0 || f.Gamma != 0 {
			return train.Output{}, errors.New("flat: the model has no word mask (build it with Config.Mask); without one (φ ≡ 1) beta and gamma must be 0")
		}
		phi = ones(t, b.B*b.L)
		s = m.EncodeBatch(t, b, true)
	}
	logits := m.Head(t, s)
	ce := train.ClassLoss(t, logits, b.Labels, f.ProbInputs)
	red, err := nn.ParseEntropyReduction(string(f.Entropy))
	if err != nil {
		return train.Output{}, fmt.Errorf("flat: %w", err)
	}
	ent := nn.NegEntropy(t, phi, b.B, b.L, b.Lengths, red)
	imp := f.importanceGap(t, m, b, phi)
	loss := t.Add(ce, t.Scale(ent, float32(f.Beta)))
	terms := map[string]float32{"ce": ce.Item(), "neg_entropy": ent.Item()}
	if imp != nil {
		loss = t.Add(loss, t.Scale(imp, float32(f.Gamma)))
		terms["imp"] = imp.Item()
	} else {
		terms["imp"] = 0
	}
	return train.Output{Loss: loss, Logits: logits, Terms: terms}, nil
}

// importanceGap is L_imp of a batch given φ at its positions ([B·L, 1]);
// nil when no row differs from its original.
func (f *FLAT) importanceGap(t *ag.Tape, m *nn.Classifier, b *nn.Batch, phi *ag.Var) *ag.Var {
	var pos []int
	var origIDs []int32
	for r := 0; r < b.B; r++ {
		row := b.IDs[r*b.L : r*b.L+b.Lengths[r]]
		o, ok := f.orig[idsKey(row)]
		if !ok {
			continue
		}
		for i := 0; i < min(len(o), len(row)); i++ {
			if o[i] != row[i] {
				pos = append(pos, r*b.L+i)
				origIDs = append(origIDs, o[i])
			}
		}
	}
	if len(pos) == 0 {
		return nil
	}
	var po *ag.Var
	if m.Mask != nil {
		po = m.Mask.PositionPhi(t, m.Emb, m.MapIDs(origIDs))
	} else {
		po = ones(t, len(pos))
	}
	gap := t.Sum(t.Abs(t.Sub(po, t.Gather(phi, pos))))
	return t.Scale(gap, 1/float32(b.B))
}

// ones is a constant [n, 1] column of ones: φ of a disabled mask.
func ones(t *ag.Tape, n int) *ag.Var {
	o := tensor.New(n, 1)
	for i := range o.Data {
		o.Data[i] = 1
	}
	return t.Const(o)
}

// ImportanceGap is the mean |φ_w − φ_w'| over the substituted positions of
// the pairs (inference-mode φ): FLAT's consistency diagnostic (spec §13.9).
// It returns the mean and the number of word pairs.
func ImportanceGap(m *nn.Classifier, ps []Pair) (float64, int) {
	phi := m.WordImportance()
	if phi == nil {
		return 0, 0
	}
	var sum float64
	n := 0
	for _, p := range ps {
		for i := 0; i < min(len(p.Orig), len(p.Adv)); i++ {
			a, b := m.MapID(p.Orig[i]), m.MapID(p.Adv[i])
			if a != b {
				d := float64(phi[a] - phi[b])
				if d < 0 {
					d = -d
				}
				sum += d
				n++
			}
		}
	}
	if n == 0 {
		return 0, 0
	}
	return sum / float64(n), n
}
