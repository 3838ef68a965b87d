package defense

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/tensor"
)

// tinyBoundsModel is one of the small classifiers the bounds tests use:
// cnn, lstm, bilstm, bilstm-mean-tanh (mean pooling, tanh), or cnn+layers
// and bilstm+layers (Jia et al.'s input and hidden head layers; the
// BiLSTM with mean pooling, as theirs).
func tinyBoundsModel(t *testing.T, arch string, vocab int) *nn.Classifier {
	t.Helper()
	cfg := nn.DefaultConfig("cnn")
	layers := strings.HasSuffix(arch, "+layers")
	arch = strings.TrimSuffix(arch, "+layers")
	switch arch {
	case "cnn":
		cfg.Filters, cfg.Widths = 5, []int{2, 3}
	default:
		cfg = nn.DefaultConfig("bilstm")
		if arch == "lstm" {
			cfg.Arch = "lstm"
		}
		cfg.Hidden = 6
		if arch == "bilstm-mean-tanh" {
			cfg.Pool, cfg.Tanh = "mean", true
		}
	}
	if layers {
		cfg.InputLayer, cfg.HeadHidden = 6, 8
		if arch == "bilstm" {
			cfg.Pool = "mean"
		}
	}
	cfg.EmbedDim, cfg.VocabSize, cfg.NumClasses = 8, vocab, 2
	m, err := nn.New(cfg, rand.New(rand.NewSource(3)))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The projected hull is sound for the substitutions it stands for: every
// text made by picking, at each position, a point v(w) + ε·(v(s) − v(w))
// with s the word or one of its first k synonyms has logits inside its
// bounds. Its bounds lie inside the embedding-space box's, are strictly
// tighter somewhere, and collapse onto the clean logits at ε = 0.
func TestProjectedHullSoundAndTighter(t *testing.T) {
	_, syn, tr, _ := setup(t, 1)
	const k = 8
	for _, arch := range []string{"cnn", "lstm", "bilstm", "bilstm-mean-tanh", "cnn+layers", "bilstm+layers"} {
		for _, eps := range []float64{1, 0.6} {
			m := tinyBoundsModel(t, arch, syn.Len())
			b := exBatch(tr[:6], m.Enc.MinLen())
			tp := ag.NewTape()
			tp.NoGrad = true
			zE, err := LogitBounds(tp, m, WordBoxes(tp, m, syn, b, k, eps), b.Lengths)
			if err != nil {
				t.Fatal(err)
			}
			zP, err := LogitBounds(tp, m, ProjectedBoxes(tp, m, syn, b, k, eps), b.Lengths)
			if err != nil {
				t.Fatal(err)
			}
			var widthE, widthP float64
			for i := range zP.L.Data() {
				le, ue, lp, up := zE.L.Data()[i], zE.U.Data()[i], zP.L.Data()[i], zP.U.Data()[i]
				if lp < le-1e-4 || up > ue+1e-4 || lp > up+1e-5 {
					t.Fatalf("%s ε=%g: logit %d: projected [%g, %g] not inside embedding box [%g, %g]", arch, eps, i, lp, up, le, ue)
				}
				widthE += float64(ue - le)
				widthP += float64(up - lp)
			}
			if widthP > 0.95*widthE {
				t.Errorf("%s ε=%g: projected bounds width %g, embedding box %g: want tighter", arch, eps, widthP, widthE)
			}
			d := m.Emb.Dim()
			W := m.Emb.W.Value.Data
			rng := rand.New(rand.NewSource(9))
			for trial := 0; trial < 200; trial++ {
				x := tensor.New(b.B, b.L, d)
				for p, id := range b.IDs {
					s := id
					if syns := syn.Of(id); len(syns) > 0 {
						if j := rng.Intn(min(len(syns), k) + 1); j > 0 {
							s = syns[j-1]
						}
					}
					for c := 0; c < d; c++ {
						v := W[int(id)*d+c]
						x.Data[p*d+c] = v + float32(eps)*(W[int(s)*d+c]-v)
					}
				}
				_, st := m.Encode(tp, tp.Const(x), b.Lengths)
				for i, v := range m.Head(tp, st).Data() {
					if lo, hi := zP.L.Data()[i], zP.U.Data()[i]; v < lo-1e-4 || v > hi+1e-4 {
						t.Fatalf("%s ε=%g trial %d: logit %d = %g outside [%g, %g]", arch, eps, trial, i, v, lo, hi)
					}
				}
			}
			z0, _ := LogitBounds(tp, m, ProjectedBoxes(tp, m, syn, b, k, 0), b.Lengths)
			for i, v := range m.Forward(tp, b).Data() {
				if lo, hi := z0.L.Data()[i], z0.U.Data()[i]; hi-lo > 1e-4 || v < lo-1e-4 || v > hi+1e-4 {
					t.Fatalf("%s ε=0: logit %d = %g, bounds [%g, %g]", arch, i, v, lo, hi)
				}
			}
		}
	}
}

// The gradient of a linear function of the projected bounds matches finite
// differences, for the embedding table, the first linear map's weights and
// the hidden head layer's.
func TestProjectedHullGradients(t *testing.T) {
	_, syn, tr, _ := setup(t, 2)
	for _, arch := range []string{"cnn", "bilstm-mean-tanh", "cnn+layers", "bilstm+layers"} {
		m := tinyBoundsModel(t, arch, syn.Len())
		b := exBatch(tr[:4], m.Enc.MinLen())
		f := func(tp *ag.Tape) *ag.Var {
			z, err := LogitBounds(tp, m, ProjectedBoxes(tp, m, syn, b, 8, 0.7), b.Lengths)
			if err != nil {
				t.Fatal(err)
			}
			return tp.Add(tp.Sum(z.L), tp.Scale(tp.Sum(z.U), 2))
		}
		first := m.Params()[1] // the first encoder weight after the table
		for _, p := range m.Params() {
			p.ZeroGrad()
		}
		tp := ag.NewTape()
		tp.Backward(f(tp))
		check := []*ag.Param{m.Emb.W, first} // with layers, first is the input layer
		if m.Hid != nil {
			check = append(check, m.Hid.W)
		}
		for _, par := range check {
			vals, grads := par.Value.Data, par.Grad.Data
			checked, kinks := 0, 0
			for i := 0; i < len(vals) && checked < 30; i += 3 {
				if grads[i] == 0 {
					continue
				}
				orig := vals[i]
				at := func(h float32) float64 {
					vals[i] = orig + h
					defer func() { vals[i] = orig }()
					return float64(f(ag.NewTape()).Item())
				}
				const h = 1e-3
				f0 := at(0)
				fwd, bwd := (at(h)-f0)/h, (f0-at(-h))/h
				g, tol := float64(grads[i]), 2e-2*max(1, abs64(fwd), abs64(bwd))
				if abs64(fwd-bwd) > tol {
					// A kink (a max or ReLU switching) at or next to the
					// point: the gradient must be a one-sided slope or lie
					// between them.
					kinks++
					if g < min(fwd, bwd)-tol || g > max(fwd, bwd)+tol {
						t.Errorf("%s %s[%d]: gradient %g outside the one-sided slopes %g, %g", arch, par.Name, i, g, bwd, fwd)
					}
				} else if fd := (fwd + bwd) / 2; abs64(fd-g) > tol {
					t.Errorf("%s %s[%d]: gradient %g, finite difference %g", arch, par.Name, i, g, fd)
				}
				checked++
			}
			if checked < 10 || kinks > checked/2 {
				t.Errorf("%s %s: %d entries checked, %d skipped at kinks", arch, par.Name, checked, kinks)
			}
		}
	}
}

// An unknown hull is an error, not a silent embedding box.
func TestIBPRejectsUnknownHull(t *testing.T) {
	m, syn, tr, _ := setup(t, 1)
	p := NewIBP(syn)
	p.Hull = "box"
	b := exBatch(tr[:2], m.Net.Enc.MinLen())
	if _, err := p.Loss(ag.NewTape(), m.Net, b); err == nil {
		t.Error("Loss accepted hull \"box\"")
	}
	if _, err := ParseHull("box"); err == nil {
		t.Error("ParseHull accepted \"box\"")
	}
}
