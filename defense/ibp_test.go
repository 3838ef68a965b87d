package defense

import (
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/train"
)

// Soundness: the logits of random points of the word boxes (and of the
// boxes' corners) lie inside the propagated bounds, for tiny CNN, LSTM and
// BiLSTM (max and mean pooling, with and without tanh) classifiers, also
// with Jia et al.'s input and hidden head layers.
func TestIBPBoundsAreSound(t *testing.T) {
	_, syn, tr, _ := setup(t, 1)
	for _, arch := range []string{"cnn", "lstm", "bilstm", "bilstm-mean-tanh", "cnn+layers", "bilstm+layers"} {
		t.Run(arch, func(t *testing.T) {
			m := tinyBoundsModel(t, arch, syn.Len())
			b := exBatch(tr[:6], m.Enc.MinLen())
			tp := ag.NewTape()
			tp.NoGrad = true
			wb := WordBoxes(tp, m, syn, b, 8, 1)
			box := wb.Positions(tp)
			z, err := LogitBounds(tp, m, wb, b.Lengths)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewSource(9))
			for trial := 0; trial < 200; trial++ {
				x := tensor.New(box.L.Shape()...)
				for i := range x.Data {
					lo, hi := box.L.Data()[i], box.U.Data()[i]
					u := rng.Float32()
					if trial%4 == 0 { // a corner
						u = float32(rng.Intn(2))
					}
					x.Data[i] = lo + u*(hi-lo)
				}
				_, s := m.Encode(tp, tp.Const(x), b.Lengths)
				logits := m.Head(tp, s).Data()
				for i, v := range logits {
					lo, hi := z.L.Data()[i], z.U.Data()[i]
					if v < lo-1e-4 || v > hi+1e-4 {
						t.Fatalf("trial %d: logit %d = %g outside [%g, %g]", trial, i, v, lo, hi)
					}
				}
			}
			// ε = 0: the bounds collapse onto the clean logits.
			z0, _ := LogitBounds(tp, m, WordBoxes(tp, m, syn, b, 8, 0), b.Lengths)
			clean := m.Forward(tp, b).Data()
			for i, v := range clean {
				if d := z0.U.Data()[i] - z0.L.Data()[i]; d > 1e-4 || v < z0.L.Data()[i]-1e-4 || v > z0.U.Data()[i]+1e-4 {
					t.Fatalf("eps 0: logit %d = %g, bounds [%g, %g]", i, v, z0.L.Data()[i], z0.U.Data()[i])
				}
			}
		})
	}
}

// IBP training ramps κ and ε and raises certified accuracy well above a
// standard model's; the certificate is never more than the clean accuracy.
func TestIBPTrainsAndCertifies(t *testing.T) {
	for _, tc := range []struct {
		arch string
		hull Hull
	}{{"cnn", HullEmbedding}, {"lstm", HullEmbedding}, {"cnn", HullProjected}, {"bilstm+layers", HullProjected}} {
		arch := tc.arch
		t.Run(arch+"/"+string(tc.hull), func(t *testing.T) {
			std, syn, tr, dev := setupArch(t, arch, 6)
			ibpM, _, _, _ := setupArch(t, arch, 6)
			run(t, std, train.Standard{}, tr, dev, 8)
			p := NewIBP(syn)
			p.Hull = tc.hull
			p.RampSteps = 3 * ((len(tr) + 31) / 32)
			if k, e := p.Schedule(0); k != 0 || e != 0 {
				t.Errorf("schedule at 0: %g, %g", k, e)
			}
			if k, e := p.Schedule(p.RampSteps); k != 0.8 || e != 1 {
				t.Errorf("schedule after the ramp: %g, %g", k, e)
			}
			run(t, ibpM, p, tr, dev, 8)
			cs, err := CertifiedAccuracy(std.Net, syn, dev, 8, 1, tc.hull)
			if err != nil {
				t.Fatal(err)
			}
			ci, err := CertifiedAccuracy(ibpM.Net, syn, dev, 8, 1, tc.hull)
			if err != nil {
				t.Fatal(err)
			}
			acc := accuracy(ibpM.Net, dev)
			t.Logf("%s: standard certified %.3f (clean %.3f); IBP certified %.3f (clean %.3f)", arch, cs, accuracy(std.Net, dev), ci, acc)
			if ci > acc+1e-9 {
				t.Errorf("certified %.3f > clean %.3f", ci, acc)
			}
			// The projected hull's tighter bounds certify half of the
			// standard model's texts already, so the gap is smaller.
			margin := 0.3
			if tc.hull == HullProjected {
				margin = 0.2
				ce, err := CertifiedAccuracy(ibpM.Net, syn, dev, 8, 1, HullEmbedding)
				if err != nil {
					t.Fatal(err)
				}
				if ce > ci {
					t.Errorf("embedding-box certificate %.3f above the projected one %.3f: the projected bounds must be nested", ce, ci)
				}
			}
			if ci < cs+margin {
				t.Errorf("IBP certified accuracy %.3f (standard %.3f): want at least %.1f above standard", ci, cs, margin)
			}
		})
	}
}

func setupArch(t *testing.T, arch string, seed int64) (*model.Model, *SynonymTable, []train.Example, []train.Example) {
	t.Helper()
	if arch == "cnn" {
		return setup(t, seed)
	}
	m, syn, tr, dev := setup(t, seed)
	cfg := nn.DefaultConfig(strings.TrimSuffix(arch, "+layers"))
	cfg.EmbedDim, cfg.Hidden = 16, 16
	if strings.HasSuffix(arch, "+layers") { // Jia et al.'s IBP model, scaled down
		cfg.InputLayer, cfg.HeadHidden, cfg.Pool = 16, 16, "mean"
	}
	m2, err := model.New(model.Meta{Net: cfg, Tokenizer: "whitespace", MaxLen: 30, Classes: m.Classes}, m.Vocab, rand.New(rand.NewSource(seed)))
	if err != nil {
		t.Fatal(err)
	}
	return m2, syn, tr, dev
}

// The ramps follow the step the trainer announces (train.Scheduled), so a
// resumed run does not restart them from 0.
func TestIBPRampFollowsAnnouncedStep(t *testing.T) {
	m, syn, tr, _ := setup(t, 6)
	p := NewIBP(syn)
	p.RampSteps = 10
	b := nn.MakeBatch([][]int32{tr[0].IDs, tr[1].IDs}, []int{tr[0].Label, tr[1].Label}, m.Net.Enc.MinLen())
	for _, step := range []int{7, 2, 12} {
		p.AtStep(step)
		out, err := p.Loss(ag.NewTape(), m.Net, b)
		if err != nil {
			t.Fatal(err)
		}
		k, e := p.Schedule(step)
		if out.Terms["kappa"] != float32(k) || out.Terms["eps"] != float32(e) {
			t.Errorf("step %d: κ, ε = %g, %g, want %g, %g", step, out.Terms["kappa"], out.Terms["eps"], k, e)
		}
	}
}

// WordBoxes builds each distinct word's hull once: the boxes equal the
// per-position definition exactly (padding and repeated words included),
// and the embedding gradient of a linear function of the bounds matches
// finite differences.
func TestWordBoxesPerWord(t *testing.T) {
	m, syn, tr, _ := setup(t, 4)
	b := exBatch(tr[:5], m.Net.Enc.MinLen())
	const k, eps = 8, 0.7
	tp := ag.NewTape()
	box := WordBoxes(tp, m.Net, syn, b, k, eps).Positions(tp)
	d := m.Net.Emb.Dim()
	W := m.Net.Emb.W.Value.Data
	L, U := box.L.Data(), box.U.Data()
	for p, id := range b.IDs {
		cands := []int32{id}
		for j, s := range syn.Of(id) {
			if j < k {
				cands = append(cands, s)
			}
		}
		for c := 0; c < d; c++ {
			x := W[int(id)*d+c]
			lo, hi := x, x
			for _, w := range cands {
				lo, hi = min(lo, W[int(w)*d+c]), max(hi, W[int(w)*d+c])
			}
			if wl, wu := x+float32(eps)*(lo-x), x+float32(eps)*(hi-x); L[p*d+c] != wl || U[p*d+c] != wu {
				t.Fatalf("position %d (id %d) dim %d: box [%g, %g], want [%g, %g]", p, id, c, L[p*d+c], U[p*d+c], wl, wu)
			}
		}
	}
	r := rand.New(rand.NewSource(5))
	cl, cu := tensor.New(box.L.Shape()...), tensor.New(box.U.Shape()...)
	for i := range cl.Data {
		cl.Data[i], cu.Data[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
	}
	f := func(tp *ag.Tape) *ag.Var {
		bx := WordBoxes(tp, m.Net, syn, b, k, eps).Positions(tp)
		return tp.Add(tp.Sum(tp.Mul(bx.L, tp.Const(cl))), tp.Sum(tp.Mul(bx.U, tp.Const(cu))))
	}
	m.Net.Emb.W.ZeroGrad()
	tp = ag.NewTape()
	tp.Backward(f(tp))
	G := m.Net.Emb.W.Grad.Data
	checked := 0
	for i := 2 * d; i < len(W) && checked < 40; i += 7 {
		if G[i] == 0 {
			continue
		}
		const h = 1e-2
		orig := W[i]
		W[i] = orig + h
		up := f(ag.NewTape()).Item()
		W[i] = orig - h
		down := f(ag.NewTape()).Item()
		W[i] = orig
		fd := (float64(up) - float64(down)) / (2 * h)
		if diff := fd - float64(G[i]); diff > 1e-2*max(1, abs64(fd)) || -diff > 1e-2*max(1, abs64(fd)) {
			t.Errorf("table entry %d: gradient %g, finite difference %g", i, G[i], fd)
		}
		checked++
	}
	if checked < 10 {
		t.Fatalf("only %d table entries with gradient", checked)
	}
}

func abs64(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// lstmBoundsGeneric is the interval LSTM built from generic taped operations
// (the implementation before ag.IntervalLSTMStep), kept as the reference.
func lstmBoundsGeneric(t *ag.Tape, l *nn.LSTM, x Interval, lengths []int) Interval {
	xs := x.L.Shape()
	b, steps := xs[0], xs[1]
	hd := l.Wh.Value.Shape[0]
	px := affine(t, x, l.Wx.Var, l.B.Var) // [B, T, 4H]
	zero := t.Const(tensor.New(b, hd))
	h, c := Interval{zero, zero}, Interval{zero, zero}
	outL, outU := make([]*ag.Var, steps), make([]*ag.Var, steps)
	sig := func(v *ag.Var) *ag.Var { return t.Sigmoid(v) }
	tanh := func(v *ag.Var) *ag.Var { return t.Tanh(v) }
	for s := 0; s < steps; s++ {
		ti := s
		if l.Reverse {
			ti = steps - 1 - s
		}
		on, off := tensor.New(b, hd), tensor.New(b, hd)
		for i := 0; i < b; i++ {
			v := float32(0)
			if lengths == nil || ti < lengths[i] {
				v = 1
			}
			for j := 0; j < hd; j++ {
				on.Data[i*hd+j], off.Data[i*hd+j] = v, 1-v
			}
		}
		pre := addIv(t, reshapeIv(t, sliceIv(t, px, 1, ti, ti+1), b, 4*hd), affine(t, h, l.Wh.Var, nil))
		ig := monotone(sliceIv(t, pre, 1, 0, hd), sig)
		fg := monotone(sliceIv(t, pre, 1, hd, 2*hd), sig)
		gg := monotone(sliceIv(t, pre, 1, 2*hd, 3*hd), tanh)
		og := monotone(sliceIv(t, pre, 1, 3*hd, 4*hd), sig)
		cn := addIv(t, mulPos(t, fg, c), mulPos(t, ig, gg))
		hn := mulPos(t, og, monotone(cn, tanh))
		onV, offV := t.Const(on), t.Const(off)
		keep := func(nv, ov *ag.Var) *ag.Var { return t.Add(t.Mul(nv, onV), t.Mul(ov, offV)) }
		c = Interval{keep(cn.L, c.L), keep(cn.U, c.U)}
		h = Interval{keep(hn.L, h.L), keep(hn.U, h.U)}
		outL[ti] = t.Reshape(t.Mul(hn.L, onV), b, 1, hd)
		outU[ti] = t.Reshape(t.Mul(hn.U, onV), b, 1, hd)
	}
	if steps == 1 {
		return Interval{outL[0], outU[0]}
	}
	return Interval{t.Concat(1, outL...), t.Concat(1, outU...)}
}

// The fused interval LSTM step gives the generic composition's bounds and
// gradients (parameters and input box), forward and reverse, with rows of
// different lengths.
func TestLSTMBoundsMatchGeneric(t *testing.T) {
	m, syn, tr, _ := setupArch(t, "bilstm", 9)
	b := exBatch(tr[:6], m.Net.Enc.MinLen())
	b.Lengths[1], b.Lengths[4] = 1, max(1, b.Lengths[4]-3)
	r := m.Net.Enc.(*nn.RNN)
	for _, l := range []*nn.LSTM{r.Fwd, r.Bwd} {
		run := func(f func(*ag.Tape, *nn.LSTM, Boxes, []int) Interval) (lo, hi []float32, grads [][]float32) {
			return boundsAndGrads(m.Net, func(tp *ag.Tape) Interval {
				return f(tp, l, WordBoxes(tp, m.Net, syn, b, 8, 1), b.Lengths)
			})
		}
		fl, fu, fg := run(lstmBounds)
		// The reference takes the boxes position by position.
		gl, gu, gg := run(func(t *ag.Tape, l *nn.LSTM, x Boxes, lengths []int) Interval {
			return lstmBoundsGeneric(t, l, x.Positions(t), lengths)
		})
		if d := max(tensor.MaxAbsDiff(fl, gl), tensor.MaxAbsDiff(fu, gu)); d > 1e-5 {
			t.Errorf("reverse=%v: bounds differ by %g", l.Reverse, d)
		}
		for i, p := range m.Net.Params() {
			if (fg[i] == nil) != (gg[i] == nil) {
				t.Fatalf("reverse=%v %s: gradient present %v vs %v", l.Reverse, p.Name, fg[i] != nil, gg[i] != nil)
			}
			if fg[i] != nil {
				if d := tensor.MaxAbsDiff(fg[i], gg[i]); d > 1e-4 {
					t.Errorf("reverse=%v %s: gradients differ by %g", l.Reverse, p.Name, d)
				}
			}
		}
		for i, p := range m.Net.Params() {
			if p == l.Wh || p == l.Wx {
				if slices.Max(fg[i]) == 0 && slices.Min(fg[i]) == 0 {
					t.Errorf("reverse=%v %s: no gradient, the comparison is empty", l.Reverse, p.Name)
				}
			}
		}
	}
}

// cnnBounds (per-word tap bounds, then window sums) gives the bounds and
// gradients of the position-wise convolution of the boxes' centre and
// radius, kept here as the reference.
func TestCNNBoundsMatchPositionwise(t *testing.T) {
	m, syn, tr, _ := setupArch(t, "cnn", 9)
	b := exBatch(tr[:6], m.Net.Enc.MinLen())
	c := m.Net.Enc.(*nn.CNN)
	reference := func(tp *ag.Tape, x Interval) Interval {
		mid, rad := x.midRad(tp)
		var ls, us []*ag.Var
		for _, conv := range c.Convs {
			h := fromMidRad(tp, tp.Conv1D(mid, conv.W.Var, conv.B.Var, conv.Width), tp.Conv1D(rad, tp.Abs(conv.W.Var), nil, conv.Width))
			valid := make([]int, len(b.Lengths))
			for i, n := range b.Lengths {
				valid[i] = n - conv.Width + 1
			}
			p := monotone(h, func(v *ag.Var) *ag.Var { return tp.ReLU(tp.MaxOverTime(v, valid)) })
			ls, us = append(ls, p.L), append(us, p.U)
		}
		return Interval{tp.Concat(-1, ls...), tp.Concat(-1, us...)}
	}
	run := func(positionwise bool) (lo, hi []float32, grads [][]float32) {
		return boundsAndGrads(m.Net, func(tp *ag.Tape) Interval {
			wb := WordBoxes(tp, m.Net, syn, b, 8, 1)
			if positionwise {
				return reference(tp, wb.Positions(tp))
			}
			return cnnBounds(tp, c, wb, b.Lengths)
		})
	}
	fl, fu, fg := run(false)
	gl, gu, gg := run(true)
	if d := max(tensor.MaxAbsDiff(fl, gl), tensor.MaxAbsDiff(fu, gu)); d > 1e-5 {
		t.Errorf("bounds differ by %g", d)
	}
	for i, p := range m.Net.Params() {
		if d := tensor.MaxAbsDiff(fg[i], gg[i]); d > 1e-4 {
			t.Errorf("%s: gradients differ by %g", p.Name, d)
		}
	}
	conv := c.Convs[0].W
	for i, p := range m.Net.Params() {
		if p == conv && (fg[i] == nil || slices.Max(fg[i]) == 0 && slices.Min(fg[i]) == 0) {
			t.Errorf("%s: no gradient, the comparison is empty", p.Name)
		}
	}
}

// boundsAndGrads returns the bounds f builds and every parameter's gradient
// (nil where none) of a fixed random linear function of both bounds.
func boundsAndGrads(m *nn.Classifier, f func(*ag.Tape) Interval) (lo, hi []float32, grads [][]float32) {
	for _, p := range m.Params() {
		p.ZeroGrad()
	}
	tp := ag.NewTape()
	out := f(tp)
	w := rand.New(rand.NewSource(1))
	lw, uw := tensor.New(out.L.Shape()...), tensor.New(out.U.Shape()...)
	for i := range lw.Data {
		lw.Data[i], uw.Data[i] = float32(w.NormFloat64()), float32(w.NormFloat64())
	}
	tp.Backward(tp.Add(tp.Sum(tp.Mul(out.L, tp.Const(lw))), tp.Sum(tp.Mul(out.U, tp.Const(uw)))))
	for _, p := range m.Params() {
		var g []float32
		if p.Grad != nil {
			g = slices.Clone(p.Grad.Data)
		}
		grads = append(grads, g)
	}
	return slices.Clone(out.L.Data()), slices.Clone(out.U.Data()), grads
}
