package defense

import (
	"math"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/attack"
	"github.com/textarmor/textarmor/internal/synth"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/text"
	"github.com/textarmor/textarmor/train"
)

// rarSetup is a small word-piece transformer (with [CLS] and [SEP], which
// RAR reconstructs too) on the generated task, with a reconstruction
// head when head is set.
func rarSetup(t *testing.T, seed int64, head bool) (*model.Model, []train.Example, []train.Example) {
	t.Helper()
	vocab := []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}
	lex := synth.DefaultLexicon()
	for _, g := range append(lex.Positive, lex.Negative...) {
		vocab = append(vocab, g...)
	}
	vocab = append(vocab, lex.Neutral...)
	wp, err := text.NewWordPiece(vocab, text.DefaultWordPieceOptions())
	if err != nil {
		t.Fatal(err)
	}
	cfg := nn.DefaultConfig("transformer")
	tc := *cfg.Transformer
	tc.Layers, tc.Intermediate, tc.MaxPositions = 1, 64, 64
	cfg.Transformer, cfg.EmbedDim, cfg.Reconstructor = &tc, 32, head
	opts := wp.Options()
	ds := synth.SentimentDataset(240, 60, 10, seed)
	m, err := model.NewTransformer(model.Meta{Net: cfg, Tokenizer: "whitespace", MaxLen: 64, Classes: ds.Classes, Pieces: &opts}, wp, rand.New(rand.NewSource(seed)))
	if err != nil {
		t.Fatal(err)
	}
	return m, train.Encode(m, ds.Train), train.Encode(m, ds.Dev)
}

// traced runs obj's Loss on a training tape seeded with seed (dropout
// on), recording each pass's δ and ascent direction.
func traced(t *testing.T, m *nn.Classifier, b *nn.Batch, seed int64, loss func(*ag.Tape) (train.Output, error), trace *func(int, *tensor.Tensor, []float32)) (deltas []*tensor.Tensor, grads [][]float32) {
	t.Helper()
	*trace = func(_ int, d *tensor.Tensor, g []float32) {
		deltas = append(deltas, d.Clone())
		if g != nil {
			grads = append(grads, append([]float32(nil), g...))
		}
	}
	defer func() { *trace = nil }()
	for _, p := range m.Params() {
		p.ZeroGrad()
	}
	if _, err := loss(&ag.Tape{Train: true, Rng: rand.New(rand.NewSource(seed))}); err != nil {
		t.Fatal(err)
	}
	return deltas, grads
}

// Ambiguity 6 and check 2 for RAR: δ moves exactly as FreeLB's (same
// start, same dropout, ascent directions from ∇_δ L_C alone, checked
// against FreeLB's and against L_C/n back-propagated on a tape of its
// own), and the accumulated parameter gradient is the mean over the
// passes of ∇(L_C + w_r·L_R), recomputed pass by pass.
func TestRARGradients(t *testing.T) {
	m, tr, _ := rarSetup(t, 3, true)
	net := m.Net
	b := exBatch(tr[:8], 1)
	fc := FreeLBConfig{N: 3, Alpha: 0.3, Gamma: 0.6, Eps: 0.5}
	f, err := NewFreeLB(fc)
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRAR(RARConfig{FreeLB: fc, Weight: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	fd, fg := traced(t, net, b, 5, func(tp *ag.Tape) (train.Output, error) { return f.Loss(tp, net, b) }, &f.Trace)
	rd, rg := traced(t, net, b, 5, func(tp *ag.Tape) (train.Output, error) { return r.Loss(tp, net, b) }, &r.Trace)
	if len(rd) != 3 || len(rg) != 2 || len(fd) != 3 {
		t.Fatalf("RAR traced %d passes and %d directions, FreeLB %d passes; want 3, 2, 3", len(rd), len(rg), len(fd))
	}
	for k := range rd {
		if d := tensor.MaxAbsDiff(rd[k].Data, fd[k].Data); d > 1e-6 {
			t.Errorf("pass %d: RAR's δ differs from FreeLB's by %g", k+1, d)
		}
		if k < 2 {
			if d := tensor.MaxAbsDiff(rg[k], fg[k]); d > 1e-6 {
				t.Errorf("pass %d: RAR's ascent direction differs from FreeLB's by %g", k+1, d)
			}
		}
	}

	// Without dropout: the parameter gradients, pass by pass.
	const w = 0.1
	var deltas []*tensor.Tensor
	var dirs [][]float32
	r.Trace = func(_ int, d *tensor.Tensor, g []float32) {
		deltas = append(deltas, d.Clone())
		if g != nil {
			dirs = append(dirs, append([]float32(nil), g...))
		}
	}
	for _, p := range net.Params() {
		p.ZeroGrad()
	}
	tp := ag.NewTape()
	out, err := r.Loss(tp, net, b)
	if err != nil {
		t.Fatal(err)
	}
	tp.Backward(out.Loss)
	r.Trace = nil
	got := map[string][]float32{}
	for _, p := range net.Params() {
		got[p.Name] = append([]float32(nil), p.Grad.Data...)
		p.ZeroGrad()
	}
	for k, d := range deltas {
		if k < len(dirs) { // ∇_δ L_C/n on a tape of its own
			tp := ag.NewTape()
			leaf := tp.Leaf(d)
			_, s := net.Encode(tp, tp.Add(net.EmbedInput(tp, b), leaf), b.Lengths)
			tp.Backward(tp.Scale(tp.CrossEntropy(net.Head(tp, s), b.Labels, nil), 1.0/3))
			if diff := tensor.MaxAbsDiff(dirs[k], leaf.Grad.Data); diff > 1e-6 {
				t.Errorf("pass %d: ascent direction differs from ∇_δ L_C/n by %g", k+1, diff)
			}
			for _, p := range net.Params() {
				p.ZeroGrad()
			}
		}
	}
	for _, d := range deltas {
		tp := ag.NewTape()
		tokens, s := net.Encode(tp, tp.Add(net.EmbedInput(tp, b), tp.Const(d)), b.Lengths)
		lr, _, _ := net.ReconstructionLoss(tp, tokens, b)
		ce := tp.CrossEntropy(net.Head(tp, s), b.Labels, nil)
		tp.Backward(tp.Scale(tp.Add(ce, tp.Scale(lr, w)), 1.0/3))
	}
	for _, p := range net.Params() {
		if diff := tensor.MaxAbsDiff(got[p.Name], p.Grad.Data); diff > 1e-5 {
			t.Errorf("%s: accumulated gradient differs by %g from the mean of ∇(L_C + w_r·L_R)", p.Name, diff)
		}
		if strings.HasPrefix(p.Name, "reconstructor.") && tensor.MaxAbsDiff(got[p.Name], make([]float32, len(got[p.Name]))) == 0 {
			t.Errorf("%s: no gradient", p.Name)
		}
		p.ZeroGrad()
	}
	if out.Terms["rec"] <= 0 || out.Terms["rec_acc"] < 0 || out.Terms["rec_acc"] > 1 {
		t.Errorf("terms %v", out.Terms)
	}
}

// RAR trains a small transformer: its token reconstruction accuracy on
// clean inputs (ReconstructIDs, one id per real position) rises from
// chance to nearly every token, and it still classifies; a model without
// a head and a bad perturbation are refused.
func TestRARTrains(t *testing.T) {
	m, tr, dev := rarSetup(t, 7, true)
	// recAcc is the share of dev's tokens decoded right, under k-PGD of
	// radius eps (0: clean), and how many texts decode to another one.
	recAcc := func(eps float64) (float64, int) {
		ok, n, changed := 0, 0, 0
		for lo := 0; lo < len(dev); lo += 32 {
			b := exBatch(dev[lo:min(lo+32, len(dev))], 1)
			var delta *tensor.Tensor
			if eps > 0 {
				var err error
				if delta, err = attack.PGD(eps).Perturb(m.Net, b); err != nil {
					t.Fatal(err)
				}
			}
			ids, err := ReconstructIDs(m.Net, b, delta)
			if err != nil {
				t.Fatal(err)
			}
			for i, row := range ids {
				if len(row) != len(dev[lo+i].IDs) {
					t.Fatalf("example %d: %d ids decoded from %d", lo+i, len(row), len(dev[lo+i].IDs))
				}
				diff := false
				for j, id := range row {
					if id == dev[lo+i].IDs[j] {
						ok++
					} else {
						diff = true
					}
					n++
				}
				if diff {
					changed++
				}
			}
		}
		return float64(ok) / float64(n), changed
	}
	before, _ := recAcc(0)
	r, err := NewRAR(DefaultRAR())
	if err != nil {
		t.Fatal(err)
	}
	opt := train.Options{Epochs: 14, BatchSize: 16, LR: 3e-3, Seed: 3, Out: filepath.Join(t.TempDir(), "m")}
	res, err := train.Run(m, r, tr, dev, opt)
	if err != nil {
		t.Fatal(err)
	}
	after, wrong := recAcc(0)
	t.Logf("clean reconstruction accuracy %.3f before, %.3f after; terms of the last epoch %v", before, after, res.Epochs[len(res.Epochs)-1].Terms)
	if after < 0.93 || before > 0.2 {
		t.Errorf("clean reconstruction accuracy %.3f before training, %.3f after; want chance, then ≥ 0.93", before, after)
	}
	// Check 10's second half and check 11's first, scaled down: under
	// k-PGD the tokens still decode, and a large perturbation decodes
	// some texts to others of the same length.
	small, _ := recAcc(0.1)
	large, changed := recAcc(2)
	t.Logf("k-PGD: reconstruction accuracy %.3f at ε 0.1, %.3f at ε 2 (%d of %d texts decode to others, %d clean)", small, large, changed, len(dev), wrong)
	if small < 0.9 || changed <= wrong {
		t.Errorf("k-PGD: reconstruction accuracy %.3f at ε 0.1 (want ≥ 0.9); at ε 2, %d texts decode to others, %d clean", small, changed, wrong)
	}
	if acc := accuracy(m.Net, dev); acc < 0.75 {
		t.Errorf("dev accuracy %.3f after RAR, want ≥ 0.75", acc)
	}
	// A perturbation of the wrong shape, and models without a head.
	b := exBatch(dev[:4], 1)
	if _, err := ReconstructIDs(m.Net, b, tensor.New(b.B, b.L+1, m.Net.Emb.Dim())); err == nil {
		t.Error("a perturbation of the wrong shape accepted")
	}
	plain, _, _ := rarSetup(t, 7, false)
	if _, err := r.Loss(ag.NewTape(), plain.Net, b); err == nil || !strings.Contains(err.Error(), "reconstruction head") {
		t.Errorf("RAR on a model without a head: %v", err)
	}
	if _, err := ReconstructIDs(plain.Net, b, nil); err == nil {
		t.Error("ReconstructIDs on a model without a head")
	}
}

// RAR's settings: defaults (FreeLB's, w_r 0.1), the recorded settings,
// and out-of-range values refused.
func TestRARConfig(t *testing.T) {
	c := DefaultRAR()
	if c.Weight != 0.1 || c.FreeLB != DefaultFreeLB() {
		t.Errorf("defaults %+v", c)
	}
	r, err := NewRAR(c)
	if err != nil {
		t.Fatal(err)
	}
	if info := r.Info(); info["weight"] != 0.1 || info["n"] != 2 || info["alpha"] != 0.1 || info["gamma"] != 0.6 || info["eps"] != 0.0 {
		t.Errorf("info %v", info)
	}
	for _, bad := range []RARConfig{{FreeLB: DefaultFreeLB(), Weight: -1}, {FreeLB: DefaultFreeLB(), Weight: math.NaN()}, {FreeLB: FreeLBConfig{N: 0, Alpha: 1}, Weight: 0.1}} {
		if _, err := NewRAR(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
