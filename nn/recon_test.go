package nn

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/tensor"
)

func countParams(m *Classifier) int {
	n := 0
	for _, p := range m.Params() {
		n += len(p.Value.Data)
	}
	return n
}

func maxAbs(x []float32) float64 {
	var m float64
	for _, v := range x {
		m = math.Max(m, math.Abs(float64(v)))
	}
	return m
}

// headWidth is H, the width of the token states the head reads.
func headWidth(cfg Config) int {
	if cfg.Arch == "bilstm" {
		return 2 * cfg.Hidden
	}
	if cfg.Arch == "lstm" {
		return cfg.Hidden
	}
	return cfg.EmbedDim
}

// carl-rar.md §11 check 9: the head adds exactly H·e + e + 2e + V
// weights, after the others, which keep their order; New with the flag
// and AddReconstructor agree; an encoder without token states is
// refused.
func TestReconstructorParams(t *testing.T) {
	for _, arch := range []string{"transformer", "bilstm", "lstm"} {
		cfg := tinyConfig(arch)
		m0, err := New(cfg, rand.New(rand.NewSource(1)))
		if err != nil {
			t.Fatal(err)
		}
		rc := cfg
		rc.Reconstructor = true
		m1, err := New(rc, rand.New(rand.NewSource(1)))
		if err != nil {
			t.Fatal(err)
		}
		h, e, v := headWidth(cfg), cfg.EmbedDim, cfg.VocabSize
		want := h*e + e + 2*e + v
		if d := countParams(m1) - countParams(m0); d != want {
			t.Errorf("%s: the head adds %d weights, want H·e + e + 2e + V = %d", arch, d, want)
		}
		if got := rc.ParamCount(); got != float64(countParams(m1)) {
			t.Errorf("%s: ParamCount %g, the model has %d", arch, got, countParams(m1))
		}
		for i, p := range m0.Params() {
			if q := m1.Params()[i]; q.Name != p.Name || !tensor.SameShape(q.Value.Shape, p.Value.Shape) {
				t.Fatalf("%s: parameter %d is %s with the head, %s without", arch, i, q.Name, p.Name)
			}
		}
		for _, p := range m1.Params()[len(m0.Params()):] {
			if !strings.HasPrefix(p.Name, "reconstructor.") {
				t.Errorf("%s: head parameter %q", arch, p.Name)
			}
			if tensor.SameShape(p.Value.Shape, m1.Emb.W.Value.Shape) {
				t.Errorf("%s: the head has a table %q of its own", arch, p.Name)
			}
		}
		// Ambiguity 13: zero biases, LayerNorm (1, 0), small N(0, 0.02) W_d.
		r := m1.Rec
		for _, p := range []*ag.Param{r.Dense.B, r.Norm.Beta, r.Bias} {
			if maxAbs(p.Value.Data) != 0 {
				t.Errorf("%s: %s does not start at 0", arch, p.Name)
			}
		}
		for _, g := range r.Norm.Gamma.Value.Data {
			if g != 1 {
				t.Fatalf("%s: LayerNorm scale starts at %g", arch, g)
			}
		}
		if a := maxAbs(r.Dense.W.Value.Data); a == 0 || a > 0.1 {
			t.Errorf("%s: W_d's largest entry %g, want N(0, 0.02)", arch, a)
		}
		if err := m0.AddReconstructor(rand.New(rand.NewSource(2))); err != nil {
			t.Fatal(err)
		}
		if !m0.Cfg.Reconstructor || countParams(m0) != countParams(m1) {
			t.Errorf("%s: AddReconstructor gives %d weights (flag %v), New %d", arch, countParams(m0), m0.Cfg.Reconstructor, countParams(m1))
		}
		if err := m0.AddReconstructor(rand.New(rand.NewSource(2))); err == nil || !strings.Contains(err.Error(), "already") {
			t.Errorf("%s: a second head: %v", arch, err)
		}
	}
	cfg := tinyConfig("cnn")
	m, _ := New(cfg, rand.New(rand.NewSource(1)))
	if err := m.AddReconstructor(rand.New(rand.NewSource(1))); err == nil || m.Rec != nil || m.Cfg.Reconstructor {
		t.Errorf("a head on a CNN: %v", err)
	}
	cfg.Reconstructor = true
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "cnn") {
		t.Errorf("a CNN config with a head: %v", err)
	}
}

// Check 9, tying: the decoder reads the embedding table itself (a change
// to a row moves that word's logit by exactly the change times the
// normalised state, nothing else), and its gradient lands in Emb.W's Grad
// beside the lookup's: the full gradient is the decoder's alone (input
// held constant) plus the lookup's (the input gradient added into the
// rows of the words read).
func TestReconstructorTied(t *testing.T) {
	cfg := tinyConfig("transformer")
	cfg.Reconstructor, cfg.Dropout = true, 0
	m, err := New(cfg, rand.New(rand.NewSource(4)))
	if err != nil {
		t.Fatal(err)
	}
	b := MakeBatch([][]int32{{2, 5, 7, 9, 3}, {2, 8, 3}}, []int{0, 1}, 1)
	tp := ag.NewTape()
	tokens, _ := m.Encode(tp, m.Embed(tp, b), b.Lengths)
	tok := tp.Const(tokens.Value)
	before, pos := m.Reconstruct(tp, tok, b.Lengths)
	if len(pos) != 8 || before.Shape()[0] != 8 || before.Shape()[1] != cfg.VocabSize {
		t.Fatalf("logits %v at %d positions, want [8, %d]", before.Shape(), len(pos), cfg.VocabSize)
	}
	const word = 13 // not in the batch
	e := cfg.EmbedDim
	row := m.Emb.W.Value.Data[word*e : (word+1)*e]
	delta := []float32{0.3, -0.2, 0.1, 0.5, -0.4, 0.2}
	for j := range row {
		row[j] += delta[j]
	}
	after, _ := m.Reconstruct(tp, tok, b.Lengths)
	// The normalised states z3: the head's LayerNorm output.
	z := m.Rec.Norm.Forward(tp, tp.GELU(m.Rec.Dense.Forward(tp, tp.Gather(tp.Reshape(tok, b.B*b.L, e), pos)))).Data()
	v := cfg.VocabSize
	for r := range pos {
		var want float64
		for j := range e {
			want += float64(z[r*e+j]) * float64(delta[j])
		}
		for c := range v {
			d := float64(after.Data()[r*v+c] - before.Data()[r*v+c])
			if c != word && d != 0 || c == word && math.Abs(d-want) > 1e-5 {
				t.Fatalf("position %d, word %d: logit moved %g (want %g for word %d, else 0)", r, c, d, want, word)
			}
		}
	}
	for j := range row {
		row[j] -= delta[j]
	}

	tableGrad := func(f func(tp *ag.Tape) *ag.Var) []float32 {
		for _, p := range m.Params() {
			p.ZeroGrad()
		}
		tp := ag.NewTape()
		tp.Backward(f(tp))
		return append([]float32(nil), m.Emb.W.Grad.Data...)
	}
	lr := func(tp *ag.Tape, x *ag.Var) *ag.Var {
		tokens, _ := m.Encode(tp, x, b.Lengths)
		loss, _, _ := m.ReconstructionLoss(tp, tokens, b)
		return loss
	}
	full := tableGrad(func(tp *ag.Tape) *ag.Var { return lr(tp, m.Embed(tp, b)) })
	dec := tableGrad(func(tp *ag.Tape) *ag.Var { return lr(tp, tp.Const(m.Embed(ag.NewTape(), b).Value)) })
	xtp := ag.NewTape()
	x := xtp.Leaf(m.Embed(ag.NewTape(), b).Value)
	xtp.Backward(lr(xtp, x))
	xg := x.Grad.Data
	want := append([]float32(nil), dec...)
	for p, id := range b.IDs {
		if id == PadID {
			continue
		}
		for j := range e {
			want[int(id)*e+j] += xg[p*e+j]
		}
	}
	if d := tensor.MaxAbsDiff(full, want); d > 1e-6 {
		t.Errorf("the table's gradient differs from the decoder's plus the lookup's by %g", d)
	}
	if maxAbs(dec) == 0 || maxAbs(xg) == 0 {
		t.Error("a use of the table has no gradient")
	}
	if tensor.MaxAbsDiff(full, dec) < 1e-4 {
		t.Error("the lookup's gradient is missing")
	}
}

// withLeaves runs f with the parameters ps replaced by the leaves vs (for
// ag.GradCheck), putting them back afterwards.
func withLeaves(ps []*ag.Param, vs []*ag.Var, f func() *ag.Var) *ag.Var {
	saved := make([]*ag.Var, len(ps))
	for i, p := range ps {
		saved[i], p.Var = p.Var, vs[i]
	}
	defer func() {
		for i, p := range ps {
			p.Var = saved[i]
		}
	}()
	return f()
}

// Finite differences: the head's logits with respect to the token states,
// the head's weights and the tied table; L_R of a whole model with
// respect to the perturbed input, the table (both uses) and every weight.
func TestReconstructorGradCheck(t *testing.T) {
	for _, arch := range []string{"transformer", "bilstm"} {
		cfg := tinyConfig(arch)
		cfg.Reconstructor, cfg.Dropout = true, 0
		r := rand.New(rand.NewSource(5))
		m, err := New(cfg, r)
		if err != nil {
			t.Fatal(err)
		}
		// Biases and LayerNorm away from their initial 0 and 1.
		for _, p := range m.Rec.Params() {
			for i := range p.Value.Data {
				p.Value.Data[i] += float32(0.1 * r.NormFloat64())
			}
		}
		b := MakeBatch(randomSeqs(r, 3, 5, cfg.VocabSize), []int{0, 1, 2}, 1)
		h := headWidth(cfg)
		tokens := tensor.New(b.B, b.L, h)
		for i := range tokens.Data {
			tokens.Data[i] = float32(r.NormFloat64())
		}
		head := append([]*ag.Param{m.Emb.W}, m.Rec.Params()...)
		in := []*tensor.Tensor{tokens}
		for _, p := range head {
			in = append(in, p.Value)
		}
		err = ag.GradCheck(in, 1e-2, 2e-2, func(tp *ag.Tape, v []*ag.Var) *ag.Var {
			return withLeaves(head, v[1:], func() *ag.Var {
				logits, _ := m.Reconstruct(tp, v[0], b.Lengths)
				return logits
			})
		})
		if err != nil {
			t.Errorf("%s head: %v", arch, err)
		}
		ps := m.Params()
		delta := tensor.New(b.B, b.L, cfg.EmbedDim)
		for i := range delta.Data {
			delta.Data[i] = float32(0.1 * r.NormFloat64())
		}
		in = []*tensor.Tensor{delta}
		for _, p := range ps {
			in = append(in, p.Value)
		}
		err = ag.GradCheck(in, 3e-3, 3e-2, func(tp *ag.Tape, v []*ag.Var) *ag.Var {
			return withLeaves(ps, v[1:], func() *ag.Var {
				tokens, _ := m.Encode(tp, tp.Add(m.Embed(tp, b), v[0]), b.Lengths)
				loss, _, _ := m.ReconstructionLoss(tp, tokens, b)
				return loss
			})
		})
		if err != nil {
			t.Errorf("%s L_R: %v", arch, err)
		}
	}
}

// Check 10, first half: L_R at initialisation is within 1 nat of ln V (a
// near-uniform prediction), on a vocabulary large enough for it to mean
// something; the arg-max accuracy counts every real position.
func TestReconstructionLossAtInit(t *testing.T) {
	cfg := DefaultConfig("transformer")
	cfg.VocabSize, cfg.EmbedDim, cfg.Reconstructor = 3000, 32, true
	cfg.Transformer.Intermediate, cfg.Transformer.MaxPositions = 64, 32
	r := rand.New(rand.NewSource(6))
	m, err := New(cfg, r)
	if err != nil {
		t.Fatal(err)
	}
	b := MakeBatch(randomSeqs(r, 8, 20, cfg.VocabSize), make([]int, 8), 1)
	tp := ag.NewTape()
	tokens, _ := m.Encode(tp, m.Embed(tp, b), b.Lengths)
	loss, correct, n := m.ReconstructionLoss(tp, tokens, b)
	real := 0
	for _, l := range b.Lengths {
		real += l
	}
	if n != real || correct < 0 || correct > n {
		t.Errorf("%d of %d positions counted, %d real", correct, n, real)
	}
	if lv := math.Log(float64(cfg.VocabSize)); math.Abs(float64(loss.Item())-lv) > 1 {
		t.Errorf("L_R at initialisation %.3f, ln V %.3f", loss.Item(), lv)
	}
}
