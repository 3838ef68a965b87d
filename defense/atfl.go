package defense

import (
	"errors"
	"fmt"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/train"
)

// ATFL is adversarial training with FGPM examples and logit pairing (Wang
// et al. 2021c, spec §13): for every batch, FGPM adversarial texts are made
// against the current model, and the loss is
// 0.5·CE(x) + 0.5·CE(x_adv) + MSE(logits(x_adv), logits(x)).
type ATFL struct {
	Syn *SynonymTable
	// MaxSteps is N_max, the most substitutions per text (spec: 30/40/50 by
	// dataset length; default 30).
	MaxSteps int
	// K caps the synonyms considered per word (8).
	K int
	// embeddingInputs makes FGPM feed embeddings to a recurrent encoder
	// instead of the words' input projections (a test compares the two).
	embeddingInputs bool
}

// NewATFL returns ATFL with the spec's defaults (N_max 30, k 8).
func NewATFL(syn *SynonymTable) *ATFL { return &ATFL{Syn: syn, MaxSteps: 30, K: 8} }

// Name implements train.Objective.
func (a *ATFL) Name() string { return "atfl" }

// Info describes the settings for the training record.
func (a *ATFL) Info() map[string]any { return map[string]any{"max_steps": a.MaxSteps, "k": a.K} }

func (a *ATFL) validate(m *nn.Classifier) error {
	switch {
	case a.Syn == nil:
		return errors.New("atfl: no synonym table")
	case a.Syn.Len() != m.Cfg.VocabSize:
		return fmt.Errorf("atfl: synonym table has %d ids, the model %d", a.Syn.Len(), m.Cfg.VocabSize)
	case a.MaxSteps < 0 || a.K < 1:
		return fmt.Errorf("atfl: max steps %d and k %d: want >= 0 and >= 1", a.MaxSteps, a.K)
	}
	return nil
}

// freeze marks every parameter of m frozen (so a backward pass computes
// only input gradients) and returns a function restoring the old flags.
func freeze(m *nn.Classifier) func() {
	ps := m.Params()
	old := make([]bool, len(ps))
	for i, p := range ps {
		old[i], p.Frozen = p.Frozen, true
	}
	return func() {
		for i, p := range ps {
			p.Frozen = old[i]
		}
	}
}

// FGPM returns adversarial ids for b (same layout): per text, repeatedly
// apply the single substitution (position i, ŵ ∈ S(w_i)) with the largest
// projected gradient (v(ŵ) − v(w_i))ᵀ ∇_{v(w_i)} CE, each position at most
// once, until the text is misclassified, no candidate is left, or MaxSteps
// substitutions were made. Gradients are taken in inference mode (no
// dropout); the model's parameters receive nothing.
//
// A plain Kim CNN takes an exact shortcut (fgpmCNN) that keeps each text's
// forward pass up to date instead of recomputing it.
func (a *ATFL) FGPM(m *nn.Classifier, b *nn.Batch) []int32 {
	if fc, ok := newFGPMCNN(a, m); ok && a.MaxSteps > 0 {
		ids := append([]int32(nil), b.IDs...)
		// Texts run on parallel workers, each with its own small GEMMs.
		tensor.ParallelGemmFor(b.B, 1<<20, func(s, e int) {
			for r := s; r < e; r++ {
				fc.attack(ids[r*b.L:(r+1)*b.L], b.IDs[r*b.L:(r+1)*b.L], min(b.Lengths[r], b.L), b.Labels[r])
			}
		})
		return ids
	}
	return a.fgpmTaped(m, b)
}

// fgpmTaped is FGPM with a forward and backward pass per step over the
// texts still being attacked; it works for every encoder.
func (a *ATFL) fgpmTaped(m *nn.Classifier, b *nn.Batch) []int32 {
	ids := append([]int32(nil), b.IDs...)
	if a.MaxSteps == 0 {
		return ids
	}
	defer freeze(m)()
	table := m.Emb.W.Value
	d := table.Shape[1]
	row := func(id int32) []float32 {
		id = m.MapID(id)
		return table.Data[int(id)*d : int(id+1)*d]
	}
	done := make([]bool, b.B)
	changed := make([]bool, len(ids))
	c := m.Cfg.NumClasses
	tp := ag.NewTape()
	synOf := func(id int32) []int32 {
		syn := a.Syn.Of(id)
		return syn[:min(len(syn), a.K)]
	}
	proj := a.fgpmProjections(m, b, synOf)
	// Each step runs only the texts still being attacked: most flip after a
	// few substitutions while the rest may take all MaxSteps, and a text's
	// logits and input gradient do not depend on the other rows.
	var rows []int
	for step := 0; step <= a.MaxSteps; step++ {
		rows = rows[:0]
		for r, finished := range done {
			if !finished {
				rows = append(rows, r)
			}
		}
		if len(rows) == 0 {
			break
		}
		sub := &nn.Batch{B: len(rows), L: b.L, IDs: make([]int32, 0, len(rows)*b.L), Lengths: make([]int, len(rows)), Labels: make([]int, len(rows))}
		for k, r := range rows {
			sub.IDs = append(sub.IDs, ids[r*b.L:(r+1)*b.L]...)
			sub.Lengths[k], sub.Labels[k] = b.Lengths[r], b.Labels[r]
		}
		tp.Reset()
		var x *ag.Var
		var gx []*ag.Var
		var s *ag.Var
		if proj != nil {
			gx = proj.inputs(tp, sub)
			s = proj.encode(tp, gx, sub.Lengths)
		} else {
			x = tp.Leaf(m.Embed(tp, sub).Value)
			_, s = m.Encode(tp, x, sub.Lengths)
		}
		logits := m.Head(tp, s)
		left := false
		for k, r := range rows {
			if nn.Argmax(logits.Data()[k*c:(k+1)*c]) != b.Labels[r] {
				done[r] = true
			}
			left = left || !done[r]
		}
		if !left || step == a.MaxSteps {
			break
		}
		tp.Backward(tp.CrossEntropy(logits, sub.Labels, nil))
		// The projected gradient (v(w) − v(cur))ᵀ ∇x at text k's position i
		// is dotAt(k, i, w) − dotAt(k, i, cur): the current word's term is
		// computed once per position. From the input maps' outputs, v(w)ᵀ∇x
		// is Σ over the maps of P(w)ᵀ ∇(x·W), the same by linearity.
		var dotAt func(k, i int, w int32) float32
		if proj != nil {
			dotAt = func(k, i int, w int32) float32 { return proj.dot(gx, k*b.L+i, w) }
		} else {
			g := x.Grad.Data
			dotAt = func(k, i int, w int32) float32 { return tensor.Dot(row(w), g[(k*b.L+i)*d:(k*b.L+i+1)*d]) }
		}
		for k, r := range rows {
			if done[r] {
				continue
			}
			bestPos, bestID, best := -1, int32(0), float32(0)
			for i := 0; i < min(b.Lengths[r], b.L); i++ {
				p := r*b.L + i
				syn := synOf(b.IDs[p])
				if changed[p] || len(syn) == 0 {
					continue
				}
				base := dotAt(k, i, ids[p])
				for _, w := range syn {
					if sc := dotAt(k, i, w) - base; bestPos < 0 || sc > best {
						bestPos, bestID, best = p, w, sc
					}
				}
			}
			if bestPos < 0 {
				done[r] = true
				continue
			}
			ids[bestPos], changed[bestPos] = bestID, true
		}
	}
	return ids
}

// fgpmInputs holds each input map's outputs (inputMaps) for every word
// FGPM can put into the batch (its words and their first K synonyms),
// computed once per FGPM call. A step then gathers them instead of running
// the input GEMM, and the backward pass stops at them instead of running
// the input-gradient GEMM.
type fgpmInputs struct {
	inputMaps
	row  map[int32]int    // id → row of each projection
	proj []*tensor.Tensor // per map [words, columns]
}

// fgpmProjections returns the projections for b, or nil when the encoder
// has no input maps (or a test asks for embeddings).
func (a *ATFL) fgpmProjections(m *nn.Classifier, b *nn.Batch, synOf func(int32) []int32) *fgpmInputs {
	im, ok := inputMapsOf(m)
	if !ok || a.embeddingInputs {
		return nil
	}
	f := &fgpmInputs{inputMaps: im, row: map[int32]int{}}
	var words []int32
	add := func(id int32) {
		if _, ok := f.row[id]; !ok {
			f.row[id] = len(words)
			words = append(words, id)
		}
	}
	for _, id := range b.IDs {
		add(id)
		for _, w := range synOf(id) {
			add(w)
		}
	}
	f.proj = im.project(m, words)
	return f
}

// inputs returns each map's outputs for sub as leaves [B, L, columns].
func (f *fgpmInputs) inputs(tp *ag.Tape, sub *nn.Batch) []*ag.Var {
	out := make([]*ag.Var, len(f.proj))
	for k, p := range f.proj {
		c := p.Shape[1]
		x := tensor.New(sub.B, sub.L, c)
		for i, id := range sub.IDs {
			r := f.row[id]
			copy(x.Data[i*c:(i+1)*c], p.Data[r*c:(r+1)*c])
		}
		out[k] = tp.Leaf(x)
	}
	return out
}

// dot is P(w)ᵀ∇ summed over the maps at flat position pos.
func (f *fgpmInputs) dot(gx []*ag.Var, pos int, w int32) float32 {
	var sc float32
	r := f.row[w]
	for k, p := range f.proj {
		c := p.Shape[1]
		sc += tensor.Dot(p.Data[r*c:(r+1)*c], gx[k].Grad.Data[pos*c:(pos+1)*c])
	}
	return sc
}

// Loss implements train.Objective.
func (a *ATFL) Loss(t *ag.Tape, m *nn.Classifier, b *nn.Batch) (train.Output, error) {
	if err := a.validate(m); err != nil {
		return train.Output{}, err
	}
	adv := *b
	adv.IDs = a.FGPM(m, b)
	logits := m.Forward(t, b)
	advLogits := m.Forward(t, &adv)
	ce := t.CrossEntropy(logits, b.Labels, nil)
	ceAdv := t.CrossEntropy(advLogits, b.Labels, nil)
	mse := t.Mean(t.Square(t.Sub(advLogits, logits)))
	loss := t.Add(t.Scale(t.Add(ce, ceAdv), 0.5), mse)
	changed := 0
	for i, id := range adv.IDs {
		if id != b.IDs[i] {
			changed++
		}
	}
	return train.Output{Loss: loss, Logits: logits, Terms: map[string]float32{"ce": ce.Item(), "ce_adv": ceAdv.Item(),
		"mse": mse.Item(), "subs": float32(changed) / float32(b.B)}}, nil
}
