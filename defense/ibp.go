package defense

import (
	"errors"
	"fmt"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/train"
)

// Interval is an elementwise box [L, U]; both ends are ag values, so
// losses on bounds train the model.
type Interval struct{ L, U *ag.Var }

func (iv Interval) midRad(t *ag.Tape) (mid, rad *ag.Var) {
	return t.Scale(t.Add(iv.L, iv.U), 0.5), t.Scale(t.Sub(iv.U, iv.L), 0.5)
}

func fromMidRad(t *ag.Tape, mid, rad *ag.Var) Interval {
	return Interval{t.Sub(mid, rad), t.Add(mid, rad)}
}

// affine bounds x·W + b: centre μ·W + b, radius r·|W|.
func affine(t *ag.Tape, x Interval, w, b *ag.Var) Interval {
	mid, rad := x.midRad(t)
	return fromMidRad(t, t.Linear(mid, w, b), t.MatMul(rad, t.Abs(w), false))
}

// monotone applies a non-decreasing function to both ends.
func monotone(x Interval, f func(*ag.Var) *ag.Var) Interval { return Interval{f(x.L), f(x.U)} }

func reluIv(t *ag.Tape, x Interval) Interval { return Interval{t.ReLU(x.L), t.ReLU(x.U)} }

func vmin(t *ag.Tape, a, b *ag.Var) *ag.Var { return t.Sub(a, t.ReLU(t.Sub(a, b))) }
func vmax(t *ag.Tape, a, b *ag.Var) *ag.Var { return t.Add(a, t.ReLU(t.Sub(b, a))) }

// mulPos bounds a·b for a ≥ 0 (a sigmoid gate): the extremes lie at a's
// ends for b's ends.
func mulPos(t *ag.Tape, a, b Interval) Interval {
	return Interval{vmin(t, t.Mul(a.L, b.L), t.Mul(a.U, b.L)), vmax(t, t.Mul(a.L, b.U), t.Mul(a.U, b.U))}
}

func addIv(t *ag.Tape, a, b Interval) Interval { return Interval{t.Add(a.L, b.L), t.Add(a.U, b.U)} }

func sliceIv(t *ag.Tape, x Interval, axis, from, to int) Interval {
	return Interval{t.Slice(x.L, axis, from, to), t.Slice(x.U, axis, from, to)}
}

func reshapeIv(t *ag.Tape, x Interval, shape ...int) Interval {
	return Interval{t.Reshape(x.L, shape...), t.Reshape(x.U, shape...)}
}

// Boxes are a batch's input boxes. A word's box depends only on the word,
// so there is one per distinct word of the batch (Word: L, U [U, D]), and
// At maps each of the B·L positions to its word's row. The first linear
// map of an encoder is then applied once per word, not per position.
type Boxes struct {
	Word         Interval
	At           []int
	Texts, Steps int

	// Set by ProjectedBoxes: the distinct candidate words' rows [C, D],
	// and for word u's j-th candidate (j = 0: the word) its row
	// candAt[u·n+j]. The first linear map then takes its hull over the
	// projected candidates instead of projecting the box.
	cand     *ag.Var
	candAt   []int
	centreAt []int
	n        int
	eps      float32
}

// Hull says where a word's synonym box is taken.
type Hull string

const (
	// HullEmbedding takes the box in embedding space and pushes it through
	// the first linear map as an interval (spec §13).
	HullEmbedding Hull = "embedding"
	// HullProjected takes the box after the first linear map, over the
	// projected candidates, as Jia et al.'s reference code does (its
	// DiscreteChoiceTensor passes the input layer before
	// to_interval_bounded). It is sound and never looser.
	HullProjected Hull = "projected"
)

// ParseHull checks a hull name ("" is HullEmbedding).
func ParseHull(s string) (Hull, error) {
	switch Hull(s) {
	case "", HullEmbedding:
		return HullEmbedding, nil
	case HullProjected:
		return HullProjected, nil
	}
	return "", fmt.Errorf("unknown ibp hull %q (embedding or projected)", s)
}

// Positions returns the boxes of every position, [B, L, D] (WordBoxes
// only).
func (bx Boxes) Positions(t *ag.Tape) Interval {
	d := bx.Word.L.Shape()[1]
	return reshapeIv(t, Interval{t.Gather(bx.Word.L, bx.At), t.Gather(bx.Word.U, bx.At)}, bx.Texts, bx.Steps, d)
}

// affine bounds x·W (+ b) at every position, [B, L, F]: computed per word,
// then gathered to the positions.
func (bx Boxes) affine(t *ag.Tape, w, b *ag.Var) Interval {
	iv := bx.wordAffine(t, w, b)
	f := iv.L.Shape()[1]
	return reshapeIv(t, Interval{t.Gather(iv.L, bx.At), t.Gather(iv.U, bx.At)}, bx.Texts, bx.Steps, f)
}

// wordAffine bounds x·W (+ b) per word, [U, F].
func (bx Boxes) wordAffine(t *ag.Tape, w, b *ag.Var) Interval {
	if bx.cand == nil {
		return affine(t, bx.Word, w, b)
	}
	// Each distinct candidate is projected once (words share synonyms).
	iv := bx.candHull(t, t.MatMul(bx.cand, w, false))
	if b != nil {
		iv = Interval{t.AddBias(iv.L, b), t.AddBias(iv.U, b)}
	}
	return iv
}

// candHull is each word's hull [U, F] over its candidates' rows of proj
// [C, F] (one row per distinct candidate), scaled by eps around the word's
// own row.
func (bx Boxes) candHull(t *ag.Tape, proj *ag.Var) Interval {
	c := t.Gather(proj, bx.centreAt) // [U, F]
	u, f := c.Shape()[0], c.Shape()[1]
	p := t.Reshape(t.Gather(proj, bx.candAt), u, bx.n, f)
	hi := t.MaxOverTime(p, nil)
	lo := t.Scale(t.MaxOverTime(t.Scale(p, -1), nil), -1)
	return Interval{t.Add(c, t.Scale(t.Sub(lo, c), bx.eps)), t.Add(c, t.Scale(t.Sub(hi, c), bx.eps))}
}

// throughInput passes the boxes through m's input layer and its ReLU, so
// that the encoder's first map sees boxes of its own inputs. The projected
// hull is taken after the linear map, over the candidates' outputs, and
// before the ReLU, as Jia et al.'s reference code does (at ε = 1 the
// order does not matter: ReLU is monotone); the embedding box is pushed
// through the layer.
func throughInput(t *ag.Tape, m *nn.Classifier, bx Boxes) Boxes {
	if m.In == nil {
		return bx
	}
	if bx.cand == nil {
		bx.Word = reluIv(t, affine(t, bx.Word, m.In.W.Var, m.In.B.Var))
		return bx
	}
	bx.Word = reluIv(t, bx.candHull(t, t.Linear(bx.cand, m.In.W.Var, m.In.B.Var)))
	bx.cand = nil
	return bx
}

// MakeBoxes returns WordBoxes or ProjectedBoxes by hull.
func MakeBoxes(t *ag.Tape, m *nn.Classifier, syn *SynonymTable, b *nn.Batch, k int, eps float64, hull Hull) Boxes {
	if hull == HullProjected {
		return ProjectedBoxes(t, m, syn, b, k, eps)
	}
	return WordBoxes(t, m, syn, b, k, eps)
}

// ProjectedBoxes is WordBoxes with the hull taken after each encoder's
// first linear map (HullProjected). It has no embedding-space boxes
// (Word, Positions).
func ProjectedBoxes(t *ag.Tape, m *nn.Classifier, syn *SynonymTable, b *nn.Batch, k int, eps float64) Boxes {
	uniq, at := nn.UniqueIDs(b.IDs)
	cand, _ := candidates(syn, uniq, k)
	words, candAt := nn.UniqueIDs(cand)
	n := k + 1
	centreAt := make([]int, len(uniq))
	for u := range uniq {
		centreAt[u] = candAt[u*n] // slot 0 is the word itself
	}
	rows := m.Embed(t, &nn.Batch{IDs: words, B: 1, L: len(words), Lengths: []int{len(words)}})
	return Boxes{At: at, Texts: b.B, Steps: b.L, cand: t.Reshape(rows, len(words), m.Emb.Dim()),
		candAt: candAt, centreAt: centreAt, n: n, eps: float32(eps)}
}

// WordBoxes returns, for each word of b, the box spanned by
// {v(w)} ∪ {v(w') : w' ∈ S(w)} (first k synonyms) scaled by eps around
// v(w) (spec §13, Jia et al. 2019).
func WordBoxes(t *ag.Tape, m *nn.Classifier, syn *SynonymTable, b *nn.Batch, k int, eps float64) Boxes {
	n := k + 1
	uniq, at := nn.UniqueIDs(b.IDs)
	cand, _ := candidates(syn, uniq, k) // unused slots repeat the word
	d := m.Emb.Dim()
	lo, hi := t.LookupHull(m.Emb.W.Var, m.MapIDs(cand), n, m.Emb.PadID)
	x := t.Reshape(m.Embed(t, &nn.Batch{IDs: uniq, B: 1, L: len(uniq), Lengths: []int{len(uniq)}}), len(uniq), d)
	e := float32(eps)
	l := t.Add(x, t.Scale(t.Sub(lo, x), e))
	u := t.Add(x, t.Scale(t.Sub(hi, x), e))
	return Boxes{Word: Interval{l, u}, At: at, Texts: b.B, Steps: b.L}
}

// CheckBounds reports whether interval propagation supports m's encoder.
func CheckBounds(m *nn.Classifier) error {
	switch m.Enc.(type) {
	case *nn.CNN, *nn.RNN:
		return nil
	}
	return fmt.Errorf("interval bounds support the cnn, lstm and bilstm encoders, not %q", m.Cfg.Arch)
}

// LogitBounds propagates the input boxes x through m's input layer,
// encoder and head (no dropout) and returns bounds on the logits [B, C].
func LogitBounds(t *ag.Tape, m *nn.Classifier, x Boxes, lengths []int) (Interval, error) {
	x = throughInput(t, m, x)
	var s Interval
	switch enc := m.Enc.(type) {
	case *nn.CNN:
		s = cnnBounds(t, enc, x, lengths)
	case *nn.RNN:
		s = rnnBounds(t, enc, x, lengths)
	default:
		return Interval{}, CheckBounds(m)
	}
	if m.Hid != nil {
		s = reluIv(t, affine(t, s, m.Hid.W.Var, m.Hid.B.Var))
	}
	return affine(t, s, m.Out.W.Var, m.Out.B.Var), nil
}

func cnnBounds(t *ag.Tape, c *nn.CNN, x Boxes, lengths []int) Interval {
	var ls, us []*ag.Var
	for _, conv := range c.Convs {
		// Each tap's bounds per position, then the window sums (a sum of
		// boxes is bounded by the sums of their ends).
		y := x.wordAffine(t, conv.W.Var, nil) // per word, [U, width·F]
		window := func(v *ag.Var) *ag.Var {
			return t.Conv1DProjectedRows(v, x.At, x.Texts, x.Steps, conv.B.Var, conv.Width)
		}
		h := monotone(y, window)
		valid := make([]int, len(lengths))
		for i, n := range lengths {
			valid[i] = n - conv.Width + 1
		}
		p := monotone(h, func(v *ag.Var) *ag.Var { return t.ReLU(t.MaxOverTime(v, valid)) })
		ls, us = append(ls, p.L), append(us, p.U)
	}
	if len(ls) == 1 {
		return Interval{ls[0], us[0]}
	}
	return Interval{t.Concat(-1, ls...), t.Concat(-1, us...)}
}

func rnnBounds(t *ag.Tape, r *nn.RNN, x Boxes, lengths []int) Interval {
	var h Interval
	if r.Bwd == nil {
		h = lstmBounds(t, r.Fwd, x, lengths)
	} else {
		// Both directions at once (ag.IntervalLSTMPair), bit for bit two
		// lstmBounds calls.
		pf := x.affine(t, r.Fwd.Wx.Var, r.Fwd.B.Var)
		pb := x.affine(t, r.Bwd.Wx.Var, r.Bwd.B.Var)
		sf, sb := t.IntervalLSTMPair(pf.L, pf.U, r.Fwd.Wh.Var, pb.L, pb.U, r.Bwd.Wh.Var, lengths)
		f, b := hiddenBox(t, sf), hiddenBox(t, sb)
		h = Interval{t.Concat(-1, f.L, b.L), t.Concat(-1, f.U, b.U)}
	}
	tanh := func(v *ag.Var) *ag.Var { return t.Tanh(v) }
	if r.Tanh {
		h = monotone(h, tanh)
	}
	switch r.Pool {
	case "mean":
		h = monotone(h, func(v *ag.Var) *ag.Var { return t.MeanOverTime(v, lengths) })
	case "last":
		h = monotone(h, func(v *ag.Var) *ag.Var { return t.LastOverTime(v, lengths) })
	default:
		h = monotone(h, func(v *ag.Var) *ag.Var { return t.MaxOverTime(v, lengths) })
	}
	if r.Tanh {
		h = monotone(h, tanh)
	}
	return h
}

// lstmBounds runs one LSTM direction on intervals with the semantics of
// ag.LSTM: row b runs over its first lengths[b] steps (a reverse layer
// starts at its last real token) and outputs zero past them. The input
// projection is one interval affine map per word; the recurrence is the
// fused ag.IntervalLSTM.
func lstmBounds(t *ag.Tape, l *nn.LSTM, x Boxes, lengths []int) Interval {
	px := x.affine(t, l.Wx.Var, l.B.Var) // [B, T, 4H]
	return hiddenBox(t, t.IntervalLSTM(px.L, px.U, l.Wh.Var, lengths, l.Reverse))
}

// hiddenBox splits an IntervalLSTM output [B, T, 2H] into its bounds.
func hiddenBox(t *ag.Tape, st *ag.Var) Interval {
	hd := st.Shape()[2] / 2
	return Interval{t.Slice(st, 2, 0, hd), t.Slice(st, 2, hd, 2*hd)}
}

// worstLogits takes the lower bound for the gold class and upper bounds
// for the others.
func worstLogits(t *ag.Tape, z Interval, labels []int) *ag.Var {
	c := z.L.Shape()[1]
	onehot := tensor.New(len(labels), c)
	for i, y := range labels {
		onehot.Data[i*c+y] = 1
	}
	return t.Add(z.U, t.Mul(t.Sub(z.L, z.U), t.Const(onehot)))
}

// IBP is certified training with interval bound propagation (Jia et al.
// 2019, spec §13): loss (1−κ)·CE(clean) + κ·CE(worst-case logits), with κ
// and ε ramped linearly from 0 over RampSteps optimiser steps, then held.
type IBP struct {
	Syn       *SynonymTable
	K         int     // synonyms per word (8)
	KappaMax  float64 // final κ (0.8)
	EpsMax    float64 // final ε (1)
	RampSteps int     // steps of the linear ramp (0: full values at once)
	Hull      Hull    // where the boxes are taken ("" = HullEmbedding)

	step int
}

// NewIBP returns IBP with the spec's final values; set RampSteps.
func NewIBP(syn *SynonymTable) *IBP { return &IBP{Syn: syn, K: 8, KappaMax: 0.8, EpsMax: 1} }

// Name implements train.Objective.
func (p *IBP) Name() string { return "ibp" }

// Info describes the settings for the training record.
func (p *IBP) Info() map[string]any {
	h, _ := ParseHull(string(p.Hull))
	return map[string]any{"k": p.K, "kappa": p.KappaMax, "eps": p.EpsMax, "ramp_steps": p.RampSteps, "hull": string(h)}
}

// AtStep implements train.Scheduled: the ramps follow the run's optimiser
// step, also across a resume. Without a trainer, each Loss call counts as
// one step.
func (p *IBP) AtStep(step int) { p.step = step }

// Schedule returns κ and ε at optimiser step s (0-based).
func (p *IBP) Schedule(s int) (kappa, eps float64) {
	f := 1.0
	if p.RampSteps > 0 && s < p.RampSteps {
		f = float64(s) / float64(p.RampSteps)
	}
	return f * p.KappaMax, f * p.EpsMax
}

// Loss implements train.Objective.
func (p *IBP) Loss(t *ag.Tape, m *nn.Classifier, b *nn.Batch) (train.Output, error) {
	switch {
	case p.Syn == nil:
		return train.Output{}, errors.New("ibp: no synonym table")
	case p.Syn.Len() != m.Cfg.VocabSize:
		return train.Output{}, fmt.Errorf("ibp: synonym table has %d ids, the model %d", p.Syn.Len(), m.Cfg.VocabSize)
	}
	if err := CheckBounds(m); err != nil {
		return train.Output{}, fmt.Errorf("ibp: %w", err)
	}
	if _, err := ParseHull(string(p.Hull)); err != nil {
		return train.Output{}, err
	}
	kappa, eps := p.Schedule(p.step)
	p.step++
	logits := m.Forward(t, b)
	ce := t.CrossEntropy(logits, b.Labels, nil)
	z, err := LogitBounds(t, m, MakeBoxes(t, m, p.Syn, b, p.K, eps, p.Hull), b.Lengths)
	if err != nil {
		return train.Output{}, err
	}
	worst := t.CrossEntropy(worstLogits(t, z, b.Labels), b.Labels, nil)
	loss := t.Add(t.Scale(ce, float32(1-kappa)), t.Scale(worst, float32(kappa)))
	return train.Output{Loss: loss, Logits: logits, Terms: map[string]float32{"ce": ce.Item(), "ce_worst": worst.Item(),
		"kappa": float32(kappa), "eps": float32(eps)}}, nil
}

// CertifiedAccuracy is the fraction of ex whose gold logit's lower bound
// exceeds every other class's upper bound over the full synonym boxes
// (ε = eps, first k synonyms): a certificate against every combination
// of substitutions from S. The hull decides how tight the bounds are; both
// are sound.
func CertifiedAccuracy(m *nn.Classifier, syn *SynonymTable, ex []train.Example, k int, eps float64, hull Hull) (float64, error) {
	if err := CheckBounds(m); err != nil {
		return 0, err
	}
	if syn.Len() != m.Cfg.VocabSize {
		return 0, fmt.Errorf("synonym table has %d ids, the model %d", syn.Len(), m.Cfg.VocabSize)
	}
	if len(ex) == 0 {
		return 0, nil
	}
	c := m.Cfg.NumClasses
	ok := 0
	tp := ag.NewTape()
	tp.NoGrad = true
	for s := 0; s < len(ex); s += 64 {
		chunk := ex[s:min(s+64, len(ex))]
		var seqs [][]int32
		var labels []int
		for _, e := range chunk {
			seqs, labels = append(seqs, e.IDs), append(labels, e.Label)
		}
		b := nn.MakeBatch(seqs, labels, m.Enc.MinLen())
		tp.Reset()
		z, err := LogitBounds(tp, m, MakeBoxes(tp, m, syn, b, k, eps, hull), b.Lengths)
		if err != nil {
			return 0, err
		}
		for i, y := range labels {
			lo, hi := z.L.Data()[i*c:(i+1)*c], z.U.Data()[i*c:(i+1)*c]
			cert := true
			for j := 0; j < c; j++ {
				if j != y && hi[j] >= lo[y] {
					cert = false
				}
			}
			if cert {
				ok++
			}
		}
	}
	return float64(ok) / float64(len(ex)), nil
}

// Prepare checks that net's encoder has interval bounds and sets the ramp
// of κ and ε for a run of epochs over trainSize examples in batches of
// batch: rampEpochs epochs, or, when negative, the first two thirds of
// them (the reference's 40 of 60).
func (p *IBP) Prepare(net *nn.Classifier, trainSize, epochs, batch, rampEpochs int) error {
	if err := CheckBounds(net); err != nil {
		return err
	}
	if rampEpochs < 0 {
		rampEpochs = epochs * 2 / 3
	}
	bs := max(batch, 1)
	p.RampSteps = rampEpochs * ((trainSize + bs - 1) / bs)
	return nil
}
