package defense

import (
	"math"
	"math/rand"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/train"
)

// randomTable is a [rows, dim] embedding table of N(0, 1) entries with a
// zero <pad> row.
func randomTable(rows, dim int, seed int64) *tensor.Tensor {
	r := rand.New(rand.NewSource(seed))
	w := tensor.New(rows, dim)
	for i := dim; i < len(w.Data); i++ {
		w.Data[i] = float32(r.NormFloat64())
	}
	return w
}

func cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	return ab / math.Sqrt(aa*bb)
}

// Check 6: each word's neighbours are the K others with the highest cosine
// in the snapshot, sorted, never itself, <pad> or <unk>; the snapshot
// changes exactly when a new refresh window starts, and reflects the table
// as it is then.
func TestEmbeddingNeighbors(t *testing.T) {
	const rows, dim, k = 60, 5, 7
	w := randomTable(rows, dim, 1)
	n, err := NewEmbeddingNeighbors(k, 50)
	if err != nil {
		t.Fatal(err)
	}
	n.AtStep(0, w)
	ids := []int32{0, 1, 2, 17, 59, 17}
	got := n.Of(ids)
	if got[0] != nil || got[1] != nil {
		t.Errorf("<pad>/<unk> have neighbours %v %v", got[0], got[1])
	}
	for i, id := range ids[2:] {
		nb := got[i+2]
		row := func(j int32) []float32 { return w.Data[int(j)*dim : (int(j)+1)*dim] }
		var want []int32
		for c := int32(2); c < rows; c++ {
			if c != id {
				want = append(want, c)
			}
		}
		sort.SliceStable(want, func(a, b int) bool { return cosine(row(id), row(want[a])) > cosine(row(id), row(want[b])) })
		if !slices.Equal(nb, want[:k]) {
			t.Errorf("neighbours of %d: %v, brute force %v", id, nb, want[:k])
		}
	}
	// The same window keeps the snapshot though the table moves; the next
	// window takes the table as it is then.
	w.Data[17*dim] += 100
	n.AtStep(49, w)
	if n.Version() != 0 || !slices.Equal(n.Of([]int32{17})[0], got[3]) {
		t.Errorf("the table changed inside a window (version %d)", n.Version())
	}
	n.AtStep(50, w)
	if n.Version() != 1 || slices.Equal(n.Of([]int32{17})[0], got[3]) {
		t.Errorf("a new window kept the old snapshot (version %d)", n.Version())
	}
	// The snapshot survives a checkpoint.
	m, _ := NewEmbeddingNeighbors(k, 50)
	if err := m.SetState(n.State()); err != nil {
		t.Fatal(err)
	}
	m.AtStep(70, randomTable(rows, dim, 9)) // same window: the restored snapshot stays
	if !slices.Equal(m.Of([]int32{17})[0], n.Of([]int32{17})[0]) || m.Version() != 1 {
		t.Error("a restored snapshot gives other neighbours")
	}
}

// Checks 1, 2, 3 and 5: SPGD keeps at most ⌊(1−σ)T⌋ positions, exactly
// those with the largest raw norms; each kept one moves towards the
// neighbour best aligned with its raw step, a positive multiple of the unit
// direction; the norm stays within ε.
func TestSPGDProject(t *testing.T) {
	const rows, dim, T = 80, 6, 23
	w := randomTable(rows, dim, 2)
	nbt, _ := NewEmbeddingNeighbors(15, 50)
	nbt.AtStep(0, w)
	r := rand.New(rand.NewSource(3))
	for trial := range 20 {
		ids := make([]int32, T)
		for i := range ids {
			ids[i] = int32(2 + r.Intn(rows-2))
		}
		nbs := nbt.Of(ids)
		g := make([]float32, T*dim)
		for i := range g {
			g[i] = float32(r.NormFloat64() * (1 + float64(i/dim%5)))
		}
		const eps = 3.0
		raw := make([]float32, len(g))
		AdvTStep(raw, g, eps)
		if n := tensor.Norm(raw); math.Abs(n-eps) > 1e-5*eps {
			t.Fatalf("raw step norm %g, want ε %g", n, eps)
		}
		sigma := []float64{0, 0.5, 0.75, 0.9}[trial%4]
		d := make([]float32, len(g))
		toward := SPGDProject(d, raw, ids, nbs, w.Data, dim, sigma, false)
		keep := int(math.Floor((1 - sigma) * T))
		norms := make([]float64, T)
		order := make([]int, T)
		for i := range T {
			norms[i], order[i] = tensor.Norm(raw[i*dim:(i+1)*dim]), i
		}
		sort.SliceStable(order, func(a, b int) bool { return norms[order[a]] > norms[order[b]] })
		kept := map[int]bool{}
		for _, i := range order[:keep] {
			kept[i] = true
		}
		nonzero := 0
		for i := range T {
			di := d[i*dim : (i+1)*dim]
			if tensor.Norm(di) == 0 {
				if toward[i] != -1 {
					t.Fatalf("position %d: no perturbation but a neighbour %d", i, toward[i])
				}
				continue
			}
			nonzero++
			if !kept[i] {
				t.Fatalf("σ %g: position %d perturbed outside the top %d raw norms", sigma, i, keep)
			}
			nb := toward[i]
			if nb == ids[i] || nb < 2 || !slices.Contains(nbs[i], nb) {
				t.Fatalf("position %d moves towards %d, not one of its neighbours %v", i, nb, nbs[i])
			}
			u := make([]float32, dim)
			best, bestC := int32(-1), math.Inf(-1)
			for _, c := range nbs[i] {
				direction(u, w.Data, ids[i], c, dim)
				var dot float64
				for j := range u {
					dot += float64(u[j]) * float64(raw[i*dim+j])
				}
				if dot > bestC {
					best, bestC = c, dot
				}
			}
			direction(u, w.Data, ids[i], nb, dim)
			if nb != best || cosine(di, u) < 1-1e-6 || bestC <= 0 {
				t.Fatalf("position %d: towards %d (brute force %d), cosine %g", i, nb, best, cosine(di, u))
			}
		}
		if nonzero > keep {
			t.Fatalf("σ %g: %d positions perturbed, at most %d", sigma, nonzero, keep)
		}
		if tensor.Norm(d) > eps+1e-6 {
			t.Fatalf("‖d‖ = %g > ε", tensor.Norm(d))
		}
		// Check 5: the discretised text differs exactly where d does.
		disc := Discretize(ids, toward)
		for i := range T {
			if (disc[i] != ids[i]) != (toward[i] >= 0) || (toward[i] >= 0 && disc[i] != toward[i]) {
				t.Fatalf("position %d: discretised %d from %d towards %d", i, disc[i], ids[i], toward[i])
			}
		}
	}
	// Short texts: ⌊(1−σ)T⌋ = 0 perturbs nothing unless KeepOne.
	ids := []int32{5, 9, 12}
	raw := make([]float32, 3*dim)
	for i := range raw {
		raw[i] = float32(i%4) - 1
	}
	d := make([]float32, len(raw))
	if SPGDProject(d, raw, ids, nbt.Of(ids), w.Data, dim, 0.75, false); tensor.Norm(d) != 0 {
		t.Error("a 3-word text was perturbed at σ 0.75")
	}
	SPGDProject(d, raw, ids, nbt.Of(ids), w.Data, dim, 0.75, true)
	if tensor.Norm(d) == 0 {
		t.Error("KeepOne perturbed nothing")
	}
}

// Check 8: AdvT-Text is dense with norm ε; iAdvT-Text moves each word in
// the span of its K neighbour directions, with norm ε (rescaled form).
func TestAdvTAndIAdvTSteps(t *testing.T) {
	const rows, dim, T, k = 70, 20, 9, 5
	w := randomTable(rows, dim, 4)
	nbt, _ := NewEmbeddingNeighbors(k, 50)
	nbt.AtStep(0, w)
	r := rand.New(rand.NewSource(5))
	ids := make([]int32, T)
	for i := range ids {
		ids[i] = int32(2 + r.Intn(rows-2))
	}
	g := make([]float32, T*dim)
	for i := range g {
		g[i] = float32(r.NormFloat64())
	}
	d := make([]float32, len(g))
	AdvTStep(d, g, 5)
	for i := range T {
		if tensor.Norm(d[i*dim:(i+1)*dim]) == 0 {
			t.Errorf("AdvT left position %d unperturbed", i)
		}
	}
	if math.Abs(tensor.Norm(d)-5) > 1e-4 {
		t.Errorf("AdvT norm %g, want 5", tensor.Norm(d))
	}
	nbs := nbt.Of(ids)
	for _, literal := range []bool{false, true} {
		d := make([]float32, len(g))
		IAdvTStep(d, g, ids, nbs, w.Data, dim, 15, literal)
		if !literal && math.Abs(tensor.Norm(d)-15) > 1e-3 {
			t.Errorf("iAdvT norm %g, want 15", tensor.Norm(d))
		}
		if literal && math.Abs(tensor.Norm(d)) > 15*math.Sqrt(k)+1e-3 {
			t.Errorf("literal iAdvT norm %g", tensor.Norm(d))
		}
		for i := range T {
			// Least-squares residual of d_i in the span of the directions.
			var basis [][]float64
			u := make([]float32, dim)
			for _, c := range nbs[i] {
				direction(u, w.Data, ids[i], c, dim)
				v := make([]float64, dim)
				for j := range u {
					v[j] = float64(u[j])
				}
				basis = append(basis, v)
			}
			if res := residual(d[i*dim:(i+1)*dim], basis); res > 1e-5*math.Max(1, tensor.Norm(d[i*dim:(i+1)*dim])) {
				t.Errorf("literal %v, position %d: residual %g outside the neighbour span", literal, i, res)
			}
		}
	}
}

// residual is the norm of x minus its projection on span(basis)
// (Gram-Schmidt).
func residual(x []float32, basis [][]float64) float64 {
	var ortho [][]float64
	for _, b := range basis {
		v := append([]float64(nil), b...)
		for _, o := range ortho {
			var dot float64
			for j := range v {
				dot += v[j] * o[j]
			}
			for j := range v {
				v[j] -= dot * o[j]
			}
		}
		var n float64
		for _, e := range v {
			n += e * e
		}
		if n = math.Sqrt(n); n > 1e-9 {
			for j := range v {
				v[j] /= n
			}
			ortho = append(ortho, v)
		}
	}
	r := make([]float64, len(x))
	for j := range x {
		r[j] = float64(x[j])
	}
	for _, o := range ortho {
		var dot float64
		for j := range r {
			dot += r[j] * o[j]
		}
		for j := range r {
			r[j] -= dot * o[j]
		}
	}
	var s float64
	for _, e := range r {
		s += e * e
	}
	return math.Sqrt(s)
}

// lstmSetup is a small mean-pooled LSTM (smooth: no max-pool kinks) on the
// generated task.
func lstmSetup(t *testing.T, seed int64) (*model.Model, []train.Example, []train.Example) {
	t.Helper()
	m0, _, tr, dev := setup(t, seed)
	cfg := nn.DefaultConfig("lstm")
	cfg.EmbedDim, cfg.Hidden, cfg.Pool, cfg.HeadHidden = 12, 10, "mean", 6
	m, err := model.New(model.Meta{Net: cfg, Tokenizer: "whitespace", MaxLen: 30, Classes: m0.Classes}, m0.Vocab, rand.New(rand.NewSource(seed)))
	if err != nil {
		t.Fatal(err)
	}
	return m, tr, dev
}

// Checks 4 and 7: the perturbation ascends the loss to first order (Σ g·d
// ≥ 0 for one step), and the objective's parameter gradients are those
// of ℓ_clean + λ·ℓ_adv with d held constant (finite differences).
func TestAdvTextGradients(t *testing.T) {
	m, tr, _ := lstmSetup(t, 11)
	b := exBatch(tr[:6], m.Net.Enc.MinLen())
	for _, method := range []string{MethodAdvT, MethodIAdvT, MethodSPGD} {
		c := DefaultAdvText(method)
		c.Eps, c.Lambda, c.Sigma = 0.5, 0.7, 0.5
		a, err := NewAdvText(c)
		if err != nil {
			t.Fatal(err)
		}
		x := m.Net.EmbedInput(ag.NewTape(), b).Value
		p, err := a.Perturb(m.Net, b, x, 0, false)
		if err != nil {
			t.Fatal(err)
		}
		// The loss gradient at x, as the perturbation saw it.
		tp := &ag.Tape{Rng: rand.New(rand.NewSource(1)), InputGradOnly: true}
		leaf := tp.Leaf(x)
		_, s := m.Net.Encode(tp, leaf, b.Lengths)
		tp.Backward(tp.CrossEntropy(m.Net.Head(tp, s), b.Labels, nil))
		var dot float64
		for i, v := range leaf.Grad.Data {
			dot += float64(v) * float64(p.D.Data[i])
		}
		if dot < 0 || tensor.Norm(p.D.Data) == 0 {
			t.Errorf("%s: Σ g·d = %g (‖d‖ %g): the perturbation does not ascend", method, dot, tensor.Norm(p.D.Data))
		}
		// Gradients of the objective against finite differences of the
		// loss with this d frozen.
		for _, par := range m.Net.Params() {
			par.ZeroGrad()
		}
		tl := ag.NewTape()
		out, err := a.Loss(tl, m.Net, b)
		if err != nil {
			t.Fatal(err)
		}
		tl.Backward(out.Loss)
		frozen := func() float64 {
			tf := ag.NewTape()
			x := m.Net.EmbedInput(tf, b)
			_, s := m.Net.Encode(tf, x, b.Lengths)
			clean := tf.CrossEntropy(m.Net.Head(tf, s), b.Labels, nil)
			_, sa := m.Net.Encode(tf, tf.Add(x, tf.Const(p.D)), b.Lengths)
			adv := tf.CrossEntropy(m.Net.Head(tf, sa), b.Labels, nil)
			return float64(clean.Item()) + c.Lambda*float64(adv.Item())
		}
		checked := 0
		for _, par := range []*ag.Param{m.Net.Emb.W, m.Net.Out.W, m.Net.Hid.W} {
			vals := par.Value.Data
			for i := 0; i < len(vals) && checked < 60; i += 7 {
				if par.Grad == nil || par.Grad.Data[i] == 0 {
					continue
				}
				orig := vals[i]
				const h = 1e-3
				vals[i] = orig + h
				up := frozen()
				vals[i] = orig - h
				down := frozen()
				vals[i] = orig
				fd, g := (up-down)/(2*h), float64(par.Grad.Data[i])
				if math.Abs(fd-g) > 2e-3*math.Max(1, math.Abs(fd)) {
					t.Errorf("%s %s[%d]: gradient %g, finite difference %g", method, par.Name, i, g, fd)
				}
				checked++
			}
		}
		if checked < 20 {
			t.Errorf("%s: only %d gradient entries checked", method, checked)
		}
	}
}

// Each method trains the generated task; the trained classifier's SPGD
// perturbation at a small ε raises the loss of most examples (check 4);
// a resumed run inside a neighbour window ends with the same weights as
// an uninterrupted one (the snapshot is checkpointed).
func TestAdvTextTrains(t *testing.T) {
	for _, method := range []string{MethodAdvT, MethodIAdvT, MethodSPGD, MethodFGM, MethodPGD} {
		m, _, tr, dev := setup(t, 21) // standard training reaches 0.87 here
		m.Net.Cfg.EmbedDropout = 0.2
		c := DefaultAdvText(method)
		c.Eps, c.Refresh = 0.3, 3
		a, err := NewAdvText(c)
		if err != nil {
			t.Fatal(err)
		}
		opt := train.Options{Epochs: 8, BatchSize: 32, LR: 5e-3, Seed: 3, Out: filepath.Join(t.TempDir(), "m")}
		if _, err := train.Run(m, a, tr, dev, opt); err != nil {
			t.Fatal(err)
		}
		if acc := accuracy(m.Net, dev); acc < 0.75 {
			t.Errorf("%s: dev accuracy %.3f, want >= 0.75", method, acc)
		}
		if method != MethodSPGD {
			continue
		}
		b := exBatch(dev, m.Net.Enc.MinLen())
		c.Eps, c.Sigma, c.KeepOne = 0.1, 0.5, true
		small, _ := NewAdvText(c)
		x := m.Net.EmbedInput(ag.NewTape(), b).Value
		p, err := small.Perturb(m.Net, b, x, 0, false)
		if err != nil {
			t.Fatal(err)
		}
		lossOf := func(in *tensor.Tensor) []float64 {
			tp := ag.NewTape()
			tp.NoGrad = true
			_, s := m.Net.Encode(tp, tp.Const(in), b.Lengths)
			logits := m.Net.Head(tp, s).Value
			out := make([]float64, b.B)
			for i := range b.B {
				row := logits.Data[i*2 : i*2+2]
				mx := math.Max(float64(row[0]), float64(row[1]))
				lse := mx + math.Log(math.Exp(float64(row[0])-mx)+math.Exp(float64(row[1])-mx))
				out[i] = lse - float64(row[b.Labels[i]])
			}
			return out
		}
		pert := tensor.From(append([]float32(nil), x.Data...), x.Shape...)
		for i, v := range p.D.Data {
			pert.Data[i] += v
		}
		before, after := lossOf(x), lossOf(pert)
		up, moved := 0, 0
		for i := range before {
			if after[i] != before[i] {
				moved++
			}
			if after[i] > before[i] {
				up++
			}
		}
		t.Logf("SPGD at ε 0.1 raised the loss of %d of %d examples (%d changed)", up, b.B, moved)
		if float64(up) < 0.9*float64(moved) || moved < b.B/2 {
			t.Errorf("SPGD at ε 0.1 raised the loss of %d of the %d of %d examples it changed, want ≥ 90%%", up, moved, b.B)
		}
	}
}

// The checkpointed snapshot makes a resume exact: a run interrupted after
// a checkpoint inside a neighbour window continues to the weights of an
// uninterrupted run.
func TestSPGDResumeIsExact(t *testing.T) {
	run := func(dir string, epochs int, resume bool) *model.Model {
		m, tr, _ := lstmSetup(t, 31)
		c := DefaultAdvText(MethodSPGD)
		c.Eps, c.Refresh, c.Sigma = 1, 4, 0.5
		a, _ := NewAdvText(c)
		opt := train.Options{Epochs: epochs, BatchSize: 32, LR: 1e-2, Seed: 5, Out: filepath.Join(dir, "m"), Resume: resume, KeepCheckpoint: true}
		if _, err := train.Run(m, a, tr[:200], nil, opt); err != nil {
			t.Fatal(err)
		}
		return m
	}
	whole := run(t.TempDir(), 3, false)
	dir := t.TempDir()
	run(dir, 2, false) // 7 batches an epoch: the checkpoint falls inside a window of 4
	resumed := run(dir, 3, true)
	for i, p := range whole.Net.Params() {
		if d := tensor.MaxAbsDiff(p.Value.Data, resumed.Net.Params()[i].Value.Data); d != 0 {
			t.Fatalf("%s differs by %g after the resume", p.Name, d)
		}
	}
}

// FGM's perturbation is AdvT's; PGD's is non-zero, inside each example's
// ε-ball and off the padding; bad PGD settings are refused.
func TestFGMAndPGDPerturbations(t *testing.T) {
	m, tr, _ := lstmSetup(t, 13)
	b := exBatch(tr[:8], m.Net.Enc.MinLen())
	x := m.Net.EmbedInput(ag.NewTape(), b).Value
	perturb := func(method string, eps float64) []float32 {
		c := DefaultAdvText(method)
		c.Eps = eps
		a, err := NewAdvText(c)
		if err != nil {
			t.Fatal(err)
		}
		p, err := a.Perturb(m.Net, b, x, 0, false)
		if err != nil {
			t.Fatal(err)
		}
		return p.D.Data
	}
	if d := tensor.MaxAbsDiff(perturb(MethodFGM, 0.7), perturb(MethodAdvT, 0.7)); d != 0 {
		t.Errorf("FGM differs from AdvT by %g", d)
	}
	dim := m.Net.Emb.Dim()
	d := perturb(MethodPGD, 0.7)
	for i := range b.B {
		n := min(b.Lengths[i], b.L)
		if r := tensor.Norm(d[i*b.L*dim : (i*b.L+n)*dim]); r > 0.7*(1+1e-5) || r == 0 {
			t.Errorf("example %d: ‖δ‖ %g, want in (0, 0.7]", i, r)
		}
		if p := tensor.Norm(d[(i*b.L+n)*dim : (i+1)*b.L*dim]); p != 0 {
			t.Errorf("example %d: padding moved %g", i, p)
		}
	}
	for _, bad := range []AdvTextConfig{{Method: MethodPGD, Eps: 1, Steps: 0, K: 1, Refresh: 1}, {Method: MethodPGD, Eps: 1, Steps: 3, Step: -1, K: 1, Refresh: 1}} {
		if _, err := NewAdvText(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
