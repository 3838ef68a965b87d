package defense

import (
	"math"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/train"
)

// carlFixture is a prepared CARL over n examples of two labels (even
// indices label 0), m negatives, with banks of unit random rows.
func carlFixture(t *testing.T, contrast string, n, m, dim int) *CARL {
	t.Helper()
	c := DefaultCARL()
	c.Negatives, c.Contrast = m, contrast
	o, err := NewCARL(c)
	if err != nil {
		t.Fatal(err)
	}
	ex := make([]train.Example, n)
	for i := range ex {
		ex[i].Label = i % 2
	}
	if err := o.Prepare(ex, 4); err != nil {
		t.Fatal(err)
	}
	o.allocate(dim)
	r := rand.New(rand.NewSource(1))
	for _, bank := range []*tensor.Tensor{o.bankOrig, o.bankAdv} {
		for i := range n {
			copy(bank.Data[i*dim:], unit(randVec(r, dim)))
		}
	}
	return o
}

func randVec(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

func unit(v []float32) []float32 {
	n := float32(tensor.Norm(v))
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = x / n
	}
	return out
}

// directionLoss is one direction's loss for anchor a, positive p (unit,
// one row) against fixed negatives.
func directionLoss(c *CARL, a, p []float32, neg []int) float64 {
	tp := ag.NewTape()
	dim := len(a)
	av, pv := tp.Const(tensor.From(a, 1, dim)), tp.Const(tensor.From(p, 1, dim))
	return float64(c.direction(tp, 0, av, pv, c.bankOrig, neg, 1).Item())
}

// The NCE value by hand (check 4's setting): with Z frozen, the loss is
// −log P1(a,p) − Σ log(1 − P1(a,nₖ)); the InfoNCE value is the softmax's.
func TestCARLLossByHand(t *testing.T) {
	const n, m, dim = 40, 6, 5
	r := rand.New(rand.NewSource(3))
	a, p := unit(randVec(r, dim)), unit(randVec(r, dim))
	neg := make([]int, m)
	for k := range neg {
		neg[k] = 2*k + 1
	}
	for _, contrast := range []string{CARLNCE, CARLInfoNCE} {
		c := carlFixture(t, contrast, n, m, dim)
		got := directionLoss(c, a, p, neg)
		dot := func(x, y []float32) float64 {
			var s float64
			for i := range x {
				s += float64(x[i]) * float64(y[i])
			}
			return s
		}
		scores := []float64{dot(a, p) / c.Tau}
		for _, j := range neg {
			scores = append(scores, dot(a, c.bankOrig.Data[j*dim:(j+1)*dim])/c.Tau)
		}
		var want float64
		if contrast == CARLInfoNCE {
			var z float64
			for _, s := range scores {
				z += math.Exp(s)
			}
			want = -(scores[0] - math.Log(z))
		} else {
			var mean float64
			for _, s := range scores {
				mean += math.Exp(s)
			}
			Z := float64(float32(n * mean / float64(len(scores))))
			if math.Abs(c.z[0]-Z) > 1e-6*Z {
				t.Fatalf("Z %g, want %g", c.z[0], Z)
			}
			noise := float64(m) / n
			for k, sc := range scores {
				s := math.Exp(sc) / Z
				p1 := s / (s + noise + 1e-7)
				if k == 0 {
					want -= math.Log(p1)
				} else {
					want -= math.Log(noise / (s + noise + 1e-7))
				}
			}
		}
		if math.Abs(got-want) > 1e-4*math.Max(1, math.Abs(want)) {
			t.Errorf("%s: loss %g, by hand %g", contrast, got, want)
		}
	}
}

// Check 4: for unit vectors the loss falls as a·p rises, is least at
// p = a, and rises when a negative moves towards the anchor.
func TestCARLLossShape(t *testing.T) {
	const n, m, dim = 40, 6, 5
	r := rand.New(rand.NewSource(4))
	a := unit(randVec(r, dim))
	q := unit(randVec(r, dim))
	neg := []int{1, 3, 5, 7, 9, 11}
	for _, contrast := range []string{CARLNCE, CARLInfoNCE} {
		c := carlFixture(t, contrast, n, m, dim)
		directionLoss(c, a, q, neg) // freezes Z
		// p(θ) on the great circle from q to a: a·p rises with θ.
		prev := math.Inf(1)
		for k := 0; k <= 10; k++ {
			th := float64(k) / 10
			p := make([]float32, dim)
			for i := range p {
				p[i] = float32((1-th))*q[i] + float32(th)*a[i]
			}
			l := directionLoss(c, a, unit(p), neg)
			if l >= prev {
				t.Fatalf("%s: loss %g at step %d did not fall below %g as a·p rose", contrast, l, k, prev)
			}
			prev = l
		}
		for range 20 {
			if l := directionLoss(c, a, unit(randVec(r, dim)), neg); l < prev {
				t.Fatalf("%s: a random p gives %g, below p = a's %g", contrast, l, prev)
			}
		}
		before := directionLoss(c, a, q, neg)
		row := c.bankOrig.Data[neg[0]*dim : (neg[0]+1)*dim]
		moved := make([]float32, dim)
		for i := range moved {
			moved[i] = row[i] + 0.5*a[i]
		}
		copy(row, unit(moved))
		if after := directionLoss(c, a, q, neg); after <= before {
			t.Errorf("%s: a negative moved towards the anchor: loss %g, was %g", contrast, after, before)
		}
	}
}

// Finite differences of both contrastive losses through the row
// normalisation, for anchors and positives.
func TestCARLGradients(t *testing.T) {
	const n, m, dim, rows = 30, 4, 5, 3
	r := rand.New(rand.NewSource(5))
	for _, contrast := range []string{CARLNCE, CARLInfoNCE} {
		c := carlFixture(t, contrast, n, m, dim)
		neg := make([]int, rows*m)
		for i := range neg {
			neg[i] = r.Intn(n)
		}
		in := []*tensor.Tensor{tensor.From(randVec(r, rows*dim), rows, dim), tensor.From(randVec(r, rows*dim), rows, dim)}
		c.direction(ag.NewTape(), 0, ag.NewTape().Const(in[0]), ag.NewTape().Const(in[1]), c.bankOrig, neg, rows) // freeze Z first
		err := ag.GradCheck(in, 1e-3, 2e-2, func(tp *ag.Tape, v []*ag.Var) *ag.Var {
			return c.direction(tp, 0, unitRows(tp, v[0]), unitRows(tp, v[1]), c.bankOrig, neg, rows)
		})
		if err != nil {
			t.Errorf("%s: %v", contrast, err)
		}
	}
}

// Check 5: one momentum update is normalise(M·old + (1−M)·new); the first
// write sets the row; rows stay unit; the bank is a constant of the
// graph, so a backward pass leaves it alone.
func TestCARLBankUpdate(t *testing.T) {
	const n, dim = 10, 4
	c := carlFixture(t, CARLNCE, n, 4, dim)
	r := rand.New(rand.NewSource(6))
	old := append([]float32(nil), c.bankOrig.Data[2*dim:3*dim]...)
	v1, v2 := unit(randVec(r, dim)), unit(randVec(r, dim))
	c.written[2] = true
	c.pending = &bankUpdate{index: []int{2, 5}, orig: append(append([]float32(nil), v1...), v2...), adv: append(append([]float32(nil), v1...), v2...)}
	c.applyPending()
	mix := make([]float32, dim)
	for i := range mix {
		mix[i] = 0.5*old[i] + 0.5*v1[i]
	}
	if d := tensor.MaxAbsDiff(c.bankOrig.Data[2*dim:3*dim], unit(mix)); d > 1e-6 {
		t.Errorf("momentum update off by %g", d)
	}
	if d := tensor.MaxAbsDiff(c.bankAdv.Data[5*dim:6*dim], v2); d != 0 || !c.written[5] {
		t.Errorf("first write off by %g (written %v)", d, c.written[5])
	}
	for i := range n {
		if nr := tensor.Norm(c.bankOrig.Data[i*dim : (i+1)*dim]); math.Abs(nr-1) > 1e-6 {
			t.Errorf("row %d has norm %g", i, nr)
		}
	}
	bank := c.bankOrig.Clone()
	tp := ag.NewTape()
	a := tp.Leaf(tensor.From(randVec(r, dim), 1, dim))
	tp.Backward(c.direction(tp, 0, unitRows(tp, a), unitRows(tp, tp.Const(tensor.From(v1, 1, dim))), c.bankOrig, []int{1, 3, 5, 7}, 1))
	if d := tensor.MaxAbsDiff(bank.Data, c.bankOrig.Data); d != 0 {
		t.Errorf("the backward pass changed the bank by %g", d)
	}
}

// Check 6: every anchor gets exactly m negatives, none of its label; bad
// sizes are refused.
func TestCARLNegatives(t *testing.T) {
	ex := make([]train.Example, 90)
	for i := range ex {
		ex[i].Label = i % 3
	}
	c, _ := NewCARL(DefaultCARL())
	if err := c.Prepare(ex, 3); err != nil {
		t.Fatal(err)
	}
	if c.NegativesPerExample() != 90 { // max(256, ...) capped at N
		t.Fatalf("m %d, want 90", c.NegativesPerExample())
	}
	b := exBatch(ex[:12], 1)
	b.Index = []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
	neg := c.sample(rand.New(rand.NewSource(1)), b)
	if len(neg) != 12*90 {
		t.Fatalf("%d negatives for 12 anchors, want %d", len(neg), 12*90)
	}
	for i, j := range neg {
		if ex[j].Label == ex[b.Index[i/90]].Label {
			t.Fatalf("anchor %d got negative %d of its own label", i/90, j)
		}
	}
	cfg := DefaultCARL()
	cfg.Negatives = 91
	big, _ := NewCARL(cfg)
	if err := big.Prepare(ex, 3); err == nil {
		t.Error("91 negatives over 90 examples accepted")
	}
	one, _ := NewCARL(DefaultCARL())
	if err := one.Prepare([]train.Example{{Label: 0}, {Label: 0}}, 1); err == nil {
		t.Error("a training set of one label accepted")
	}
	for _, bad := range []func(*CARLConfig){
		func(c *CARLConfig) { c.Tau = 0 }, func(c *CARLConfig) { c.Momentum = 1 }, func(c *CARLConfig) { c.Negatives = -1 },
		func(c *CARLConfig) { c.StartEpoch = 0 }, func(c *CARLConfig) { c.Contrast = "softmax" }, func(c *CARLConfig) { c.Weight = math.NaN() },
		func(c *CARLConfig) { c.FreeLB.N = 0 },
	} {
		cfg := DefaultCARL()
		bad(&cfg)
		if _, err := NewCARL(cfg); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
}

// Checks 7 and 8: before S the loss is FreeLB's (the same gradients), the
// banks fill in the epoch before S and are full at S, L_D then changes
// the gradients, Z is set once; CARL trains no parameters of its own.
func TestCARLSchedule(t *testing.T) {
	m, tr, _ := lstmSetup(t, 21)
	tr = tr[:64]
	cfg := DefaultCARL()
	cfg.FreeLB = FreeLBConfig{N: 2, Alpha: 0.1}
	c, err := NewCARL(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := any(c).(train.ExtraParams); ok {
		t.Fatal("CARL trains parameters of its own")
	}
	const spe = 2
	if err := c.Prepare(tr, spe); err != nil {
		t.Fatal(err)
	}
	if c.Start() != 4 {
		t.Fatalf("S %d, want 2 epochs of %d steps", c.Start(), spe)
	}
	batches := train.Batches(tr, 32, rand.New(rand.NewSource(1)), m.Net.Enc.MinLen())
	grads := func(obj train.Objective, step int, b int) (map[string]float32, []float32) {
		if s, ok := obj.(train.Scheduled); ok {
			s.AtStep(step)
		}
		for _, p := range m.Net.Params() {
			p.ZeroGrad()
		}
		tp := ag.NewTape()
		tp.Train = true
		tp.Rng = rand.New(rand.NewSource(int64(step)))
		out, err := obj.Loss(tp, m.Net, batches[b])
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		tp.Backward(out.Loss)
		var g []float32
		for _, p := range m.Net.Params() {
			g = append(g, p.Grad.Data...)
		}
		return out.Terms, g
	}
	free, _ := NewFreeLB(cfg.FreeLB)
	for step := range 6 {
		terms, g := grads(c, step, step%2)
		_, gf := grads(free, step, step%2)
		on := step >= 4
		if _, has := terms["carl"]; has != on {
			t.Fatalf("step %d: L_D present %v, want %v", step, has, on)
		}
		if d := tensor.MaxAbsDiff(g, gf); (d == 0) == on {
			t.Fatalf("step %d: the gradients differ from FreeLB's by %g", step, d)
		}
		switch {
		case step < 2 && c.pending != nil:
			t.Fatalf("step %d: the banks fill before the epoch ahead of S", step)
		case step == 4 && c.z[0] == 0:
			t.Fatal("Z not set at S")
		}
		if step == 3 {
			c.applyPending()
			if u := c.unwritten(); u != 0 {
				t.Fatalf("%d rows unwritten at S", u)
			}
		}
	}
	z := c.z
	grads(c, 6, 0)
	if c.z != z {
		t.Errorf("Z changed from %v to %v", z, c.z)
	}
	// Without its fill epoch CARL refuses to start.
	late, _ := NewCARL(cfg)
	late.Prepare(tr, spe)
	late.AtStep(4)
	tp := ag.NewTape()
	tp.Train, tp.Rng = true, rand.New(rand.NewSource(1))
	if _, err := late.Loss(tp, m.Net, batches[0]); err == nil {
		t.Error("L_D started over empty banks")
	}
	nb := exBatch(tr[:4], m.Net.Enc.MinLen())
	if _, err := c.Loss(tp, m.Net, nb); err == nil {
		t.Error("a batch without example indices accepted")
	}
}

// CARL trains a generated task, and a resume after an epoch inside the
// bank-filling phase ends with the weights of an uninterrupted run.
func TestCARLTrainsAndResumes(t *testing.T) {
	run := func(dir string, epochs int, resume bool) (*model.Model, []train.Example) {
		m, tr, dev := lstmSetup(t, 23)
		cfg := DefaultCARL()
		cfg.StartEpoch = 2
		c, _ := NewCARL(cfg)
		opt := train.Options{Epochs: epochs, BatchSize: 32, LR: 1e-2, Seed: 5, Out: filepath.Join(dir, "m"), Resume: resume, KeepCheckpoint: true}
		res, err := train.Run(m, c, tr, dev, opt)
		if err != nil {
			t.Fatal(err)
		}
		if e := res.Epochs[len(res.Epochs)-1]; epochs == 6 && e.Terms["carl"] == 0 {
			t.Fatalf("no L_D in the last epoch: %v", e.Terms)
		}
		if res.BestEpoch < 3 {
			t.Fatalf("kept epoch %d, before L_D joined (epoch 3)", res.BestEpoch)
		}
		return m, dev
	}
	whole, dev := run(t.TempDir(), 6, false)
	if acc := accuracy(whole.Net, dev); acc < 0.75 {
		t.Errorf("dev accuracy %.3f after CARL, want >= 0.75", acc)
	}
	m, tr, _ := lstmSetup(t, 23)
	c, _ := NewCARL(DefaultCARL())
	if _, err := train.Run(m, c, tr, nil, train.Options{Epochs: 2, Out: filepath.Join(t.TempDir(), "m")}); err == nil || !strings.Contains(err.Error(), "from 3 on") {
		t.Errorf("2 epochs with L_D from epoch 3: %v", err)
	}
	dir := t.TempDir()
	run(dir, 3, false)
	resumed, _ := run(dir, 6, true)
	for i, p := range whole.Net.Params() {
		if d := tensor.MaxAbsDiff(p.Value.Data, resumed.Net.Params()[i].Value.Data); d != 0 {
			t.Fatalf("%s differs by %g after the resume", p.Name, d)
		}
	}
}
