package attack

import (
	"math"
	"math/rand"
	"path/filepath"
	"testing"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/internal/synth"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/text"
	"github.com/textarmor/textarmor/train"
)

// embeddingFixture is a small LSTM trained on the generated task, and a
// batch of its test examples of different lengths.
func embeddingFixture(t *testing.T) (*model.Model, *nn.Batch) {
	t.Helper()
	ds := synth.SentimentDataset(300, 60, 60, 3)
	vocab := train.BuildVocab(text.NewWhitespace(), ds.Train, 1, 0)
	cfg := nn.DefaultConfig("lstm")
	cfg.EmbedDim, cfg.Hidden, cfg.Pool = 12, 10, "mean"
	m, err := model.New(model.Meta{Net: cfg, Tokenizer: "whitespace", MaxLen: 30, Classes: ds.Classes}, vocab, rand.New(rand.NewSource(1)))
	if err != nil {
		t.Fatal(err)
	}
	opt := train.Options{Epochs: 8, BatchSize: 32, LR: 1e-2, Seed: 2, Out: filepath.Join(t.TempDir(), "m")}
	if _, err := train.Run(m, train.Standard{}, train.Encode(m, ds.Train), train.Encode(m, ds.Dev), opt); err != nil {
		t.Fatal(err)
	}
	var seqs [][]int32
	var labels []int
	for _, e := range train.Encode(m, ds.Test) {
		seqs, labels = append(seqs, e.IDs), append(labels, e.Label)
	}
	return m, nn.MakeBatch(seqs, labels, m.Net.Enc.MinLen())
}

// k-PGD stays in each example's ε-ball and off the padding; FGM is one
// step ε·g/‖g‖; accuracy under attack falls as ε grows and is the clean
// accuracy at ε 0; the attack raises the loss.
func TestEmbeddingAttack(t *testing.T) {
	m, b := embeddingFixture(t)
	dim := m.Net.Emb.Dim()
	for _, a := range []EmbeddingAttack{PGD(0.5), FGM(0.5), {Eps: 0.5, Step: 0.2, Steps: 5, RandomInit: true, Seed: 3}} {
		d, err := a.Perturb(m.Net, b)
		if err != nil {
			t.Fatal(err)
		}
		for i := range b.B {
			n := min(b.Lengths[i], b.L)
			if r := tensor.Norm(d.Data[i*b.L*dim : (i*b.L+n)*dim]); r > a.Eps*(1+1e-5) {
				t.Fatalf("%+v: example %d moved %g > ε", a, i, r)
			}
			if p := tensor.Norm(d.Data[(i*b.L+n)*dim : (i+1)*b.L*dim]); p != 0 {
				t.Fatalf("%+v: example %d's padding moved %g", a, i, p)
			}
		}
	}
	// FGM is the normalised gradient itself.
	x := m.Net.EmbedInput(ag.NewTape(), b).Value
	tp := &ag.Tape{Rng: rand.New(rand.NewSource(1)), InputGradOnly: true}
	leaf := tp.Leaf(x)
	_, s := m.Net.Encode(tp, leaf, b.Lengths)
	tp.Backward(tp.CrossEntropy(m.Net.Head(tp, s), b.Labels, nil))
	d, _ := FGM(0.5).Perturb(m.Net, b)
	n0 := min(b.Lengths[0], b.L) * dim
	g := leaf.Grad.Data[:n0]
	for j, v := range g {
		if want := 0.5 * float64(v) / tensor.Norm(g); math.Abs(float64(d.Data[j])-want) > 1e-6 {
			t.Fatalf("FGM entry %d: %g, want %g", j, d.Data[j], want)
		}
	}
	acc := func(o Outcome, pred func(Outcome) []int) float64 {
		ok := 0
		for i, p := range pred(o) {
			if p == b.Labels[i] {
				ok++
			}
		}
		return float64(ok) / float64(b.B)
	}
	clean := func(o Outcome) []int { return o.Clean }
	attacked := func(o Outcome) []int { return o.Attacked }
	prev, prevEuc := 2.0, -1.0
	for _, eps := range []float64{0, 0.3, 1, 3} {
		a := PGD(eps)
		if eps == 0 {
			a.Step = 1
		}
		o, err := a.Run(m.Net, b)
		if err != nil {
			t.Fatal(err)
		}
		c, u := acc(o, clean), acc(o, attacked)
		if eps == 0 && u != c || u > prev+1e-9 || c < 0.75 {
			t.Errorf("ε %g: clean %.3f, under attack %.3f (the previous ε: %.3f)", eps, c, u, prev)
		}
		prev = u
		// Table 4's distances: zero at ε 0, and the vectors move further
		// (on average) as ε grows; each is the head input's.
		var cos, euc float64
		for i := range b.B {
			cos, euc = cos+o.Cosine[i]/float64(b.B), euc+o.Euclidean[i]/float64(b.B)
		}
		if eps == 0 && (math.Abs(cos-1) > 1e-6 || euc != 0) || eps > 0 && (euc <= prevEuc || cos >= 1) {
			t.Errorf("ε %g: cosine %g, Euclidean %g (the previous ε: %g)", eps, cos, euc, prevEuc)
		}
		prevEuc = euc
	}
	tp0 := ag.NewTape()
	tp0.NoGrad = true
	o, _ := PGD(1).Run(m.Net, b)
	delta, _ := PGD(1).Perturb(m.Net, b)
	x0 := m.Net.EmbedInput(tp0, b)
	_, s0 := m.Net.Encode(tp0, x0, b.Lengths)
	_, s1 := m.Net.Encode(tp0, tp0.Add(x0, tp0.Const(delta)), b.Lengths)
	h := s0.Shape()[1]
	if want := tensor.Cosine(s0.Value.Data[:h], s1.Value.Data[:h]); math.Abs(o.Cosine[0]-want) > 1e-9 {
		t.Errorf("cosine %g, by hand %g", o.Cosine[0], want)
	}
	if prev > 0.5 {
		t.Errorf("k-PGD at ε 3 leaves %.3f accuracy on a small LSTM", prev)
	}
	for _, bad := range []EmbeddingAttack{{Eps: -1, Step: 1, Steps: 1}, {Eps: 1, Step: 0, Steps: 1}, {Eps: 1, Step: 1, Steps: 0}} {
		if _, err := bad.Perturb(m.Net, b); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
