package optim

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/tensor"
)

// model is a dense matrix and a row-sparse embedding, the two kinds of
// parameter an optimizer meets.
func model() []*ag.Param {
	w := ag.NewParam("enc.w", tensor.From([]float32{0.5, -1, 2, 0.25, -0.75, 1.5}, 3, 2))
	emb := ag.NewParam("emb", tensor.New(6, 2))
	for i := range emb.Value.Data {
		emb.Value.Data[i] = float32(i%5) - 2
	}
	emb.SetRowSparse()
	return []*ag.Param{w, emb}
}

// fakeGrads fills gradients that depend on the step, so runs can be
// replayed; the embedding gets a real row-sparse gradient via Lookup.
func fakeGrads(params []*ag.Param, step int) {
	ZeroGrad(params)
	r := rand.New(rand.NewSource(int64(step)))
	w, emb := params[0], params[1]
	if w.Grad == nil {
		w.Grad = tensor.New(w.Value.Shape...)
	}
	for i := range w.Grad.Data {
		w.Grad.Data[i] = float32(r.NormFloat64())
	}
	tp := ag.NewTape()
	ids := []int32{int32(step % 6), int32((step + 3) % 6)}
	c := tensor.From([]float32{float32(r.NormFloat64()), 1, -2, float32(r.NormFloat64())}, 2, 2)
	tp.Backward(tp.Sum(tp.Mul(tp.Lookup(emb.Var, ids), tp.Const(c))))
}

func cloneParams(ps []*ag.Param) []*ag.Param {
	out := make([]*ag.Param, len(ps))
	for i, p := range ps {
		out[i] = ag.NewParam(p.Name, p.Value.Clone())
		if p.RowSparse() {
			out[i].SetRowSparse()
		}
	}
	return out
}

func sameBits(a, b []*ag.Param) bool {
	for i := range a {
		for j, v := range a[i].Value.Data {
			if math.Float32bits(v) != math.Float32bits(b[i].Value.Data[j]) {
				return false
			}
		}
	}
	return true
}

// TestStateRoundTrip interrupts training after 3 steps, restores the state
// into a fresh optimizer and checks the next 3 steps are bit-identical to
// an uninterrupted run, and that skipping the restore would have shown.
func TestStateRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		make func() Optimizer
	}{
		{"adam", func() Optimizer { return NewAdam(AdamConfig{LR: 0.01, WeightDecay: 0.01}) }},
		{"bertadam", func() Optimizer {
			return NewAdam(AdamConfig{LR: 0.01, WeightDecay: 0.01, Decoupled: true, NoBiasCorrection: true})
		}},
		{"sgd-momentum", func() Optimizer { return NewSGD(0.1, 0.9, 0.01) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := c.make()
			pa := model()
			for s := range 3 {
				fakeGrads(pa, s)
				a.Step(pa)
			}
			saved := a.State()
			pb, pc := cloneParams(pa), cloneParams(pa)
			b, fresh := c.make(), c.make()
			if err := b.LoadState(saved); err != nil {
				t.Fatal(err)
			}
			// LoadState must copy: scribbling on the map afterwards
			// cannot change b.
			for _, v := range saved {
				v.Data[0] = 1e9
			}
			for s := 3; s < 6; s++ {
				fakeGrads(pa, s)
				fakeGrads(pb, s)
				fakeGrads(pc, s)
				a.Step(pa)
				b.Step(pb)
				fresh.Step(pc)
			}
			if !sameBits(pa, pb) {
				t.Fatal("resumed run differs from the uninterrupted one")
			}
			if sameBits(pa, pc) {
				t.Fatal("a run without the restored state matches too: the test proves nothing")
			}
			// State is a copy too: changing it must not move a.
			for _, v := range a.State() {
				v.Data[0] = -1e9
			}
			if st := a.State(); len(st) > 0 {
				for _, v := range st {
					if v.Data[0] == -1e9 {
						t.Fatal("State returned the optimizer's own buffers")
					}
				}
			}
		})
	}
}

func TestAdamStepCountEncoding(t *testing.T) {
	for _, step := range []int64{0, 1, 1<<24 - 1, 1 << 24, 1<<40 + 3} {
		a := NewAdam(AdamConfig{LR: 1})
		a.state["w"] = &adamState{shape: []int{1}, m: []float32{0}, v: []float32{0}, step: step}
		b := NewAdam(AdamConfig{LR: 1})
		if err := b.LoadState(a.State()); err != nil {
			t.Fatal(err)
		}
		if got := b.state["w"].step; got != step {
			t.Errorf("step %d came back as %d", step, got)
		}
	}
}

func TestLoadStateRejects(t *testing.T) {
	m := func(shape ...int) *tensor.Tensor { return tensor.New(shape...) }
	step := func(v ...float32) *tensor.Tensor { return tensor.From(v, len(v)) }
	good := func() map[string]*tensor.Tensor {
		return map[string]*tensor.Tensor{"w.exp_avg": m(3, 2), "w.exp_avg_sq": m(3, 2), "w.step": step(0, 4)}
	}
	edit := func(f func(s map[string]*tensor.Tensor)) map[string]*tensor.Tensor { s := good(); f(s); return s }
	adam := func() Optimizer { return NewAdam(AdamConfig{LR: 1}) }
	sgd := func() Optimizer { return NewSGD(1, 0.9, 0) }
	cases := []struct {
		name  string
		opt   func() Optimizer
		state map[string]*tensor.Tensor
		want  string
	}{
		{"adam-unknown-field", adam, edit(func(s map[string]*tensor.Tensor) { s["w.momentum_buffer"] = m(3, 2) }), "unknown field"},
		{"adam-missing-v", adam, edit(func(s map[string]*tensor.Tensor) { delete(s, "w.exp_avg_sq") }), "needs exp_avg, exp_avg_sq and step"},
		{"adam-missing-step", adam, edit(func(s map[string]*tensor.Tensor) { delete(s, "w.step") }), "needs exp_avg"},
		{"adam-moment-shapes-differ", adam, edit(func(s map[string]*tensor.Tensor) { s["w.exp_avg_sq"] = m(2, 3) }), "exp_avg has shape [3 2], exp_avg_sq [2 3]"},
		{"adam-negative-step", adam, edit(func(s map[string]*tensor.Tensor) { s["w.step"] = step(0, -1) }), "not a step count"},
		{"adam-fractional-step", adam, edit(func(s map[string]*tensor.Tensor) { s["w.step"] = step(0, 2.5) }), "not a step count"},
		{"adam-scalar-step", adam, edit(func(s map[string]*tensor.Tensor) { s["w.step"] = tensor.Scalar(3) }), "want [2]"},
		{"adam-nil", adam, edit(func(s map[string]*tensor.Tensor) { s["w.exp_avg"] = nil }), "is nil"},
		{"adam-size-mismatch", adam, edit(func(s map[string]*tensor.Tensor) {
			s["w.exp_avg"] = &tensor.Tensor{Shape: []int{3, 2}, Data: make([]float32, 5)}
		}), "5 values"},
		{"adam-no-dot", adam, edit(func(s map[string]*tensor.Tensor) { s["step"] = step(0, 1) }), "not <param>.<field>"},
		{"sgd-adam-state", sgd, good(), "not <param>.momentum_buffer"},
		{"sgd-no-momentum", func() Optimizer { return NewSGD(1, 0, 0) }, map[string]*tensor.Tensor{"w.momentum_buffer": m(2)}, "without momentum"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opt := c.opt()
			err := opt.LoadState(c.state)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one saying %q", err, c.want)
			}
			if len(opt.State()) != 0 {
				t.Fatal("a rejected LoadState changed the state")
			}
		})
	}
	// Against a param already stepped, a different shape is refused and
	// the existing state kept.
	for _, c := range []struct {
		name  string
		opt   Optimizer
		state map[string]*tensor.Tensor
	}{
		{"adam", NewAdam(AdamConfig{LR: 1}), good()},
		{"sgd", NewSGD(1, 0.9, 0), map[string]*tensor.Tensor{"w.momentum_buffer": m(3, 2)}},
	} {
		t.Run(c.name+"-shape-vs-param", func(t *testing.T) {
			p := ag.NewParam("w", tensor.New(2, 3))
			p.Grad = tensor.From([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
			c.opt.Step([]*ag.Param{p})
			before := c.opt.State()
			if err := c.opt.LoadState(c.state); err == nil || !strings.Contains(err.Error(), "[3 2]") {
				t.Fatalf("error %v, want a shape complaint", err)
			}
			after := c.opt.State()
			for k, v := range before {
				if tensor.MaxAbsDiff(v.Data, after[k].Data) != 0 {
					t.Fatalf("state %q changed by a rejected LoadState", k)
				}
			}
		})
	}
}

func TestMatchState(t *testing.T) {
	trained := model()
	opt := NewAdam(AdamConfig{LR: 0.1})
	fakeGrads(trained, 0)
	opt.Step(trained)
	state := opt.State()

	other := model()
	other[0] = ag.NewParam("enc.w", tensor.New(2, 3))
	renamed := model()
	renamed[1].Name = "embedding"
	cases := []struct {
		name   string
		params []*ag.Param
		want   string // "" for no error
	}{
		{"same-model", model(), ""},
		{"superset-of-params", append(model(), ag.NewParam("new", tensor.New(1))), ""},
		{"shape-differs", other, `has shape [3 2], param "enc.w" has [2 3]`},
		{"unknown-param", renamed, `unknown param "emb"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := MatchState(state, c.params)
			if (err == nil) != (c.want == "") || (err != nil && !strings.Contains(err.Error(), c.want)) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
		})
	}
}

func TestClipGradNorm(t *testing.T) {
	dense := func(name string, g ...float32) *ag.Param {
		p := ag.NewParam(name, tensor.New(len(g)))
		p.Grad = tensor.From(append([]float32(nil), g...), len(g))
		return p
	}
	// sparse returns a 5×2 embedding whose gradient from Lookup(1,3,1) is
	// row1 = (1,2)+(2,0) = (3,2) and row3 = (0,-4), plus a stale value
	// planted in untouched row 0: were it read, the norm would be off;
	// were it scaled, it would change.
	sparse := func() *ag.Param {
		p := ag.NewParam("emb", tensor.New(5, 2))
		p.SetRowSparse()
		tp := ag.NewTape()
		c := tensor.From([]float32{1, 2, 0, -4, 2, 0}, 3, 2)
		tp.Backward(tp.Sum(tp.Mul(tp.Lookup(p.Var, []int32{1, 3, 1}), tp.Const(c))))
		p.Grad.Data[0] = 100
		return p
	}
	frozen := dense("frozen", 1000)
	frozen.Frozen = true
	cases := []struct {
		name     string
		params   []*ag.Param
		maxNorm  float64
		wantNorm float64
		scaled   bool
	}{
		{"dense-below", []*ag.Param{dense("a", 3, 4), dense("b", 12)}, 26, 13, false},
		{"dense-above", []*ag.Param{dense("a", 3, 4), dense("b", 12)}, 6.5, 13, true},
		{"measure-only", []*ag.Param{dense("a", 3, 4)}, 0, 5, false},
		// rows (3,2) and (0,-4): √(9+4+16) = √29
		{"row-sparse-above", []*ag.Param{sparse()}, 1, math.Sqrt(29), true},
		{"row-sparse-below", []*ag.Param{sparse()}, 10, math.Sqrt(29), false},
		{"frozen-and-nil-ignored", []*ag.Param{dense("a", 3, 4), frozen, ag.NewParam("nil", tensor.New(2))}, 1, 5, true},
		{"inf-left-alone", []*ag.Param{dense("a", 3, float32(math.Inf(1)))}, 1, math.Inf(1), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := make([][]float32, len(c.params))
			for i, p := range c.params {
				if p.Grad != nil {
					before[i] = append([]float32(nil), p.Grad.Data...)
				}
			}
			norm := ClipGradNorm(c.params, c.maxNorm)
			if math.Abs(norm-c.wantNorm) > 1e-5 && !(math.IsInf(norm, 1) && math.IsInf(c.wantNorm, 1)) {
				t.Fatalf("norm %v, want %v", norm, c.wantNorm)
			}
			scale := float32(1)
			if c.scaled {
				scale = float32(c.maxNorm / c.wantNorm)
			}
			for i, p := range c.params {
				if p.Grad == nil {
					continue
				}
				rows, all := p.TouchedRows()
				for j, g := range p.Grad.Data {
					want := before[i][j]
					touched := all
					for _, r := range rows {
						touched = touched || j/2 == int(r)
					}
					if touched && !p.Frozen {
						want *= scale
					}
					if math.Abs(float64(g-want)) > 1e-5*math.Max(1, math.Abs(float64(want))) {
						t.Fatalf("%s grad[%d] = %v, want %v", p.Name, j, g, want)
					}
				}
			}
		})
	}
	// After clipping, the norm is maxNorm (up to the 1e-6 guard).
	ps := []*ag.Param{dense("a", 3, 4), sparse()}
	ClipGradNorm(ps, 2)
	if n := ClipGradNorm(ps, 0); math.Abs(n-2) > 1e-5 {
		t.Fatalf("norm after clipping to 2 is %v", n)
	}
}

// TestSkippedParamsUntouched: frozen params (even holding a gradient) and
// params without a gradient neither move nor get state.
func TestSkippedParamsUntouched(t *testing.T) {
	for _, opt := range []Optimizer{
		NewAdam(AdamConfig{LR: 0.1, WeightDecay: 0.1}),
		NewAdam(AdamConfig{LR: 0.1, WeightDecay: 0.1, Decoupled: true}),
		NewSGD(0.1, 0.9, 0.1),
		NewSGD(0.1, 0, 0.1),
	} {
		frozen := ag.NewParam("frozen", tensor.From([]float32{1, 2}, 2))
		frozen.Frozen = true
		frozen.Grad = tensor.From([]float32{5, 5}, 2)
		noGrad := ag.NewParam("nograd", tensor.From([]float32{3, 4}, 2))
		live := ag.NewParam("live", tensor.From([]float32{3, 4}, 2))
		live.Grad = tensor.From([]float32{1, 1}, 2)
		for range 3 {
			opt.Step([]*ag.Param{frozen, noGrad, live})
		}
		if frozen.Value.Data[0] != 1 || frozen.Value.Data[1] != 2 || noGrad.Value.Data[0] != 3 || noGrad.Value.Data[1] != 4 {
			t.Errorf("%T: skipped params moved: %v %v", opt, frozen.Value.Data, noGrad.Value.Data)
		}
		if live.Value.Data[0] == 3 {
			t.Errorf("%T: the live param did not move", opt)
		}
		for k := range opt.State() {
			if !strings.HasPrefix(k, "live.") {
				t.Errorf("%T: state %q for a skipped param", opt, k)
			}
		}
	}
}

func TestLRAccessors(t *testing.T) {
	for _, opt := range []Optimizer{NewAdam(AdamConfig{LR: 0.1}), NewSGD(0.1, 0, 0)} {
		if opt.LR() != 0.1 {
			t.Errorf("%T: LR %v", opt, opt.LR())
		}
		opt.SetLR(0.5)
		if opt.LR() != 0.5 {
			t.Errorf("%T: SetLR(0.5) then LR %v", opt, opt.LR())
		}
	}
	// A changed rate is used: SGD moves by exactly lr·g.
	p := ag.NewParam("w", tensor.From([]float32{1}, 1))
	p.Grad = tensor.From([]float32{2}, 1)
	s := NewSGD(0.1, 0, 0)
	s.SetLR(0.25)
	s.Step([]*ag.Param{p})
	if p.Value.Data[0] != 0.5 {
		t.Errorf("after SetLR(0.25) one step gave %v, want 0.5", p.Value.Data[0])
	}
}

func TestSchedules(t *testing.T) {
	cases := []struct {
		name        string
		s           Schedule
		step, epoch int
		want        float64
	}{
		{"constant", Constant(0.1), 1000, 7, 0.1},
		{"steplr-before", StepLR(1, 0.1, 10, 20), 0, 9, 1},
		{"steplr-at-first", StepLR(1, 0.1, 10, 20), 0, 10, 0.1},
		{"steplr-after-second", StepLR(1, 0.1, 10, 20), 0, 25, 0.01},
		{"steplr-unsorted", StepLR(1, 0.5, 20, 10), 0, 15, 0.5},
		{"steplr-repeated", StepLR(1, 0.5, 3, 3), 0, 3, 0.25},
		{"warmup-first", LinearWarmupDecay(1, 4, 12), 0, 0, 0.25},
		{"warmup-mid", LinearWarmupDecay(1, 4, 12), 1, 0, 0.5},
		{"warmup-peak", LinearWarmupDecay(1, 4, 12), 3, 0, 1},
		{"decay-start", LinearWarmupDecay(1, 4, 12), 4, 0, 1},
		{"decay-mid", LinearWarmupDecay(1, 4, 12), 8, 0, 0.5},
		{"decay-last", LinearWarmupDecay(1, 4, 12), 11, 0, 0.125},
		{"decay-end", LinearWarmupDecay(1, 4, 12), 12, 0, 0},
		{"decay-beyond", LinearWarmupDecay(1, 4, 12), 50, 0, 0},
		{"no-warmup", LinearWarmupDecay(2, 0, 10), 0, 0, 2},
		{"func", ScheduleFunc(func(s, e int) float64 { return float64(s + e) }), 2, 3, 5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.s.LR(c.step, c.epoch); math.Abs(got-c.want) > 1e-12 {
				t.Fatalf("LR(%d, %d) = %v, want %v", c.step, c.epoch, got, c.want)
			}
		})
	}
}
