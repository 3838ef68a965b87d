package defense

import (
	"errors"
	"fmt"
	"math"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/train"
)

// ASCC is adversarial training in the convex hull of each word's synonym
// embeddings (Dong et al. 2021, spec §13). Position i's virtual adversarial
// vector is v̂_i = Σ_j softmax(a_i)_j·v(c_ij) over c_i = {w_i} ∪ S(w_i); an
// inner loop of Steps Adam steps (learning rate LR) on a maximises
// KL(f(x) ‖ f(v̂)) − EntropyWeight·H(softmax(a)), and the loss is
// CE(f(x), y) + Beta·KL(f(x) ‖ f(v̂)).
type ASCC struct {
	Syn           *SynonymTable
	K             int     // synonyms per word (8)
	Steps         int     // inner steps (10)
	LR            float64 // inner Adam learning rate (10)
	EntropyWeight float64 // sparsity penalty weight (15)
	Beta          float64 // weight of the KL term in the outer loss (4)
	Seed          int64

	starts stream
	// hullInputs makes the inner steps feed the convex combinations of
	// embeddings to the encoder instead of combining the candidates'
	// projections (a test compares the two).
	hullInputs bool
	// mixAllRows mixes the candidates' projections at padding too (a test
	// checks that skipping them changes nothing).
	mixAllRows bool
}

// RandomDraws implements train.Random: the starting points' stream position.
func (a *ASCC) RandomDraws() uint64 { return a.starts.draws() }

// SkipRandom implements train.Random.
func (a *ASCC) SkipRandom(n uint64) { a.starts.skip(a.Seed, n) }

// NewASCC returns ASCC with the spec's defaults.
func NewASCC(syn *SynonymTable) *ASCC {
	return &ASCC{Syn: syn, K: 8, Steps: 10, LR: 10, EntropyWeight: 15, Beta: 4, Seed: 42}
}

// Name implements train.Objective.
func (a *ASCC) Name() string { return "ascc" }

// Info describes the settings for the training record.
func (a *ASCC) Info() map[string]any {
	return map[string]any{"k": a.K, "steps": a.Steps, "lr": a.LR, "entropy_weight": a.EntropyWeight, "beta": a.Beta, "seed": a.Seed}
}

func (a *ASCC) validate(m *nn.Classifier) error {
	switch {
	case a.Syn == nil:
		return errors.New("ascc: no synonym table")
	case a.Syn.Len() != m.Cfg.VocabSize:
		return fmt.Errorf("ascc: synonym table has %d ids, the model %d", a.Syn.Len(), m.Cfg.VocabSize)
	case a.K < 1 || a.Steps < 0 || a.LR <= 0 || a.EntropyWeight < 0 || a.Beta < 0:
		return fmt.Errorf("ascc: k %d, steps %d, lr %g, entropy weight %g, beta %g out of range", a.K, a.Steps, a.LR, a.EntropyWeight, a.Beta)
	}
	return nil
}

// candidates lays out {w} ∪ S(w) in K+1 slots per position (the word
// first; unused slots repeat it), with a softmax bias of 0 for real slots
// and −1e4 for unused ones. Padding has only itself.
func candidates(syn *SynonymTable, ids []int32, k int) (cand []int32, bias []float32) {
	n := k + 1
	cand = make([]int32, len(ids)*n)
	bias = make([]float32, len(ids)*n)
	for p, id := range ids {
		s := syn.Of(id)
		if len(s) > k {
			s = s[:k]
		}
		for j := 0; j < n; j++ {
			cand[p*n+j] = id
			if j > 0 && j-1 < len(s) {
				cand[p*n+j] = s[j-1]
			} else if j > 0 {
				bias[p*n+j] = -1e4
			}
		}
	}
	return cand, bias
}

// hull returns Σ_j w_j·v(c_j) as [B, L, D] for weights w [B·L, K+1] and
// candidate ids cand (row-major [B·L, K+1]) looked up in m's table.
func hull(t *ag.Tape, m *nn.Classifier, b *nn.Batch, w *ag.Var, cand []int32, n int) *ag.Var {
	return hullOf(t, b, w, t.Lookup(m.Emb.W.Var, m.MapIDs(cand), m.Emb.PadID), n)
}

// hullOf is hull for candidate vectors already looked up ([B·L·(K+1), D]).
func hullOf(t *ag.Tape, b *nn.Batch, w, vecs *ag.Var, n int) *ag.Var {
	d := vecs.Shape()[len(vecs.Shape())-1]
	v := t.Reshape(vecs, b.B*b.L, n, d)
	h := t.BatchMatMul(t.Reshape(w, b.B*b.L, 1, n), false, v, false)
	return t.Reshape(h, b.B, b.L, d)
}

// kl is the batch mean of KL(p ‖ softmax(logits)) for p given as
// probabilities and log-probabilities.
func kl(t *ag.Tape, p, logp, logits *ag.Var, rows int) *ag.Var {
	return t.Scale(t.Sum(t.Mul(p, t.Sub(logp, t.LogSoftmax(logits)))), 1/float32(rows))
}

// Adversary runs the inner maximisation and returns the convex weights
// softmax(a) [B·L, K+1] (constant) with the candidate ids.
func (a *ASCC) Adversary(m *nn.Classifier, b *nn.Batch) (w *tensor.Tensor, cand []int32) {
	rng := a.starts.rand(a.Seed)
	n := a.K + 1
	cand, bias := candidates(a.Syn, b.IDs, a.K)
	defer freeze(m)()
	tp := ag.NewTape()
	// Clean predictions, constant.
	clean := m.Forward(tp, b).Value
	c := m.Cfg.NumClasses
	logp := tensor.From(append([]float32(nil), clean.Data...), b.B, c)
	for r := 0; r < b.B; r++ {
		logSoftmaxInPlace(logp.Data[r*c : (r+1)*c])
	}
	p := tensor.New(b.B, c)
	for i, v := range logp.Data {
		p.Data[i] = float32(math.Exp(float64(v)))
	}
	real := 0
	for r := 0; r < b.B; r++ {
		real += min(b.Lengths[r], b.L)
	}
	params := tensor.New(b.B*b.L, n)
	for i := range params.Data {
		params.Data[i] = float32(rng.NormFloat64() * 0.01)
	}
	m1, m2 := make([]float32, len(params.Data)), make([]float32, len(params.Data))
	const b1, b2, eps = 0.9, 0.999, 1e-8
	biasT := tensor.From(bias, b.B*b.L, n)
	weights := func(tp *ag.Tape, av *ag.Var) *ag.Var { return tp.Softmax(tp.Add(av, tp.Const(biasT))) }
	// The table and the encoder are frozen here. So the encoder's first,
	// linear, map of each distinct candidate is computed once, and an inner
	// step combines those projections instead of the embeddings: it skips
	// the input GEMM and the input-gradient GEMM, most of a CNN's step.
	encode := a.hullEncoder(tp, m, b, cand, n)
	for step := 1; step <= a.Steps; step++ {
		tp.Reset()
		av := tp.Leaf(params)
		s := weights(tp, av)
		sent := encode(tp, s)
		div := kl(tp, tp.Const(p), tp.Const(logp), m.Head(tp, sent), b.B)
		ent := tp.Scale(tp.Sum(tp.Mul(s, tp.Log(tp.AddConst(s, 1e-12)))), -1/float32(real))
		// Minimise −(KL − λ·H).
		obj := tp.Sub(tp.Scale(ent, float32(a.EntropyWeight)), div)
		tp.Backward(obj)
		g := av.Grad.Data
		c1, c2 := 1-math.Pow(b1, float64(step)), 1-math.Pow(b2, float64(step))
		for i := range params.Data {
			m1[i] = b1*m1[i] + (1-b1)*g[i]
			m2[i] = b2*m2[i] + (1-b2)*g[i]*g[i]
			mh, vh := float64(m1[i])/c1, float64(m2[i])/c2
			params.Data[i] -= float32(a.LR * mh / (math.Sqrt(vh) + eps))
		}
	}
	tp.Reset()
	tp.NoGrad = true
	return weights(tp, tp.Const(params)).Value, cand
}

// hullEncoder returns the inner steps' encoder of the convex combinations
// with weights s [B·L, K+1] of the candidates cand: each candidate's input
// projections are computed once and combined (inputMaps).
func (a *ASCC) hullEncoder(tp *ag.Tape, m *nn.Classifier, b *nn.Batch, cand []int32, n int) func(*ag.Tape, *ag.Var) *ag.Var {
	im, ok := inputMapsOf(m)
	if !ok || a.hullInputs {
		vecs := tp.Lookup(m.Emb.W.Var, m.MapIDs(cand), m.Emb.PadID).Value
		return func(tp *ag.Tape, s *ag.Var) *ag.Var {
			_, sent := m.Encode(tp, hullOf(tp, b, s, tp.Const(vecs), n), b.Lengths)
			return sent
		}
	}
	uniq, at := nn.UniqueIDs(cand)
	idx := make([]int32, len(at))
	for i, u := range at {
		idx[i] = int32(u)
	}
	proj := im.project(m, uniq)
	// Positions the encoder never reads (padding) are not mixed.
	var live []bool
	if !a.mixAllRows {
		live = make([]bool, b.B*b.L)
		for r := 0; r < b.B; r++ {
			for i := 0; i < min(im.reads(b.Lengths[r]), b.L); i++ {
				live[r*b.L+i] = true
			}
		}
	}
	return func(tp *ag.Tape, s *ag.Var) *ag.Var {
		in := make([]*ag.Var, len(proj))
		for i, p := range proj {
			in[i] = tp.Reshape(tp.MixLiveRows(s, p, idx, live), b.B, b.L, p.Shape[1])
		}
		return im.encode(tp, in, b.Lengths)
	}
}

func logSoftmaxInPlace(x []float32) {
	mx := x[0]
	for _, v := range x {
		mx = max(mx, v)
	}
	var s float64
	for _, v := range x {
		s += math.Exp(float64(v - mx))
	}
	l := float32(math.Log(s)) + mx
	for i := range x {
		x[i] -= l
	}
}

// Loss implements train.Objective.
func (a *ASCC) Loss(t *ag.Tape, m *nn.Classifier, b *nn.Batch) (train.Output, error) {
	if err := a.validate(m); err != nil {
		return train.Output{}, err
	}
	w, cand := a.Adversary(m, b)
	logits := m.Forward(t, b)
	ce := t.CrossEntropy(logits, b.Labels, nil)
	_, sent := m.Encode(t, hull(t, m, b, t.Const(w), cand, a.K+1), b.Lengths)
	advLogits := m.Head(t, sent)
	logp := t.LogSoftmax(logits)
	div := kl(t, t.Exp(logp), logp, advLogits, b.B)
	loss := t.Add(ce, t.Scale(div, float32(a.Beta)))
	return train.Output{Loss: loss, Logits: logits, Terms: map[string]float32{"ce": ce.Item(), "kl": div.Item()}}, nil
}
