package mlm

import (
	"context"
	"errors"
	"math"
	"math/rand"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/tensor"
)

// Ids of the generated vocabulary: 0 [PAD], 1 [UNK], 2 [CLS], 3 [SEP],
// 4 [MASK], words from 5.
var testPieces = Pieces{Vocab: 20, MaskID: 4, Special: map[int32]bool{0: true, 2: true, 3: true}}

func tinyNet(t *testing.T, layers int, seed int64) *nn.Classifier {
	t.Helper()
	cfg := nn.DefaultConfig("transformer")
	tc := *cfg.Transformer
	tc.Layers, tc.Intermediate, tc.MaxPositions, tc.HiddenDropout, tc.AttnDropout = layers, 32, 32, 0, 0
	cfg.Transformer, cfg.EmbedDim, cfg.VocabSize, cfg.NumClasses, cfg.Reconstructor, cfg.Dropout = &tc, 16, 20, 2, true, 0
	r := rand.New(rand.NewSource(seed))
	m, err := nn.New(cfg, r)
	if err != nil {
		t.Fatal(err)
	}
	// Tables of a trained model's scale: the tied decoder's logits can
	// only be as far apart as its rows, and attention finds a neighbour by
	// its position's row.
	for _, w := range [][]float32{m.Emb.W.Value.Data, m.Enc.(*nn.Transformer).Positions.Value.Data} {
		for i := range w {
			w[i] = float32(0.5 * r.NormFloat64())
		}
	}
	return m
}

// counting draws [CLS] x x+1 x+2 … [SEP] over the 15 words (wrapping):
// every masked word follows from its neighbours.
func counting(r *rand.Rand, n int) [][]int32 {
	seqs := make([][]int32, n)
	for i := range seqs {
		s := []int32{2}
		x, l := r.Intn(15), 5+r.Intn(6)
		for j := range l {
			s = append(s, int32(5+(x+j)%15))
		}
		seqs[i] = append(s, 3)
	}
	return seqs
}

// The corruption's rates on many draws; specials are never chosen; the
// same seed gives the same masks.
func TestMaskingRates(t *testing.T) {
	mk := DefaultMasking()
	r := rand.New(rand.NewSource(1))
	seqs := counting(r, 4000)
	var words, chosen, masked, kept int
	for _, s := range seqs {
		in, pos, orig := mk.Apply(r, s, testPieces)
		words += len(s) - 2
		chosen += len(pos)
		for k, j := range pos {
			if testPieces.Special[s[j]] || orig[k] != s[j] {
				t.Fatalf("position %d of %v chosen (orig %d)", j, s, orig[k])
			}
			switch in[j] {
			case 4:
				masked++
			case s[j]:
				kept++
			}
		}
		for j := range s {
			if !slices.Contains(pos, j) && in[j] != s[j] {
				t.Fatalf("unchosen position %d changed: %v → %v", j, s, in)
			}
		}
	}
	rate, fm, fk := float64(chosen)/float64(words), float64(masked)/float64(chosen), float64(kept)/float64(chosen)
	// kept includes the random draws that hit the original (1/20 of 10 %).
	if math.Abs(rate-0.15) > 0.01 || math.Abs(fm-0.8) > 0.02 || math.Abs(fk-0.105) > 0.02 {
		t.Errorf("chosen %.4f of the words, masked %.4f, kept %.4f of those", rate, fm, fk)
	}
	a1, p1, _ := mk.Apply(rand.New(rand.NewSource(9)), seqs[0], testPieces)
	a2, p2, _ := mk.Apply(rand.New(rand.NewSource(9)), seqs[0], testPieces)
	if !slices.Equal(a1, a2) || !slices.Equal(p1, p2) {
		t.Error("the same seed drew different masks")
	}
	for _, bad := range []Masking{{Rate: 0}, {Rate: 1.5}, {Rate: 0.15, Mask: 0.8, Random: 0.3}, {Rate: math.NaN()}} {
		if bad.Validate() == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

func TestTopK(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	x := make([]float32, 300)
	for i := range x {
		x[i] = float32(r.Intn(50)) // ties
	}
	got := topK(x, 10)
	idx := make([]int32, len(x))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortStableFunc(idx, func(a, b int32) int {
		switch {
		case x[a] > x[b]:
			return -1
		case x[a] < x[b]:
			return 1
		}
		return 0
	})
	if !slices.Equal(got, idx[:10]) {
		t.Errorf("topK %v, sorted %v", got, idx[:10])
	}
}

// Finite differences of the masked-LM loss with respect to every weight
// that trains (the head and the unfrozen top layer); the fixed layers and
// the word embeddings get no gradient.
func TestHeadGradCheck(t *testing.T) {
	net := tinyNet(t, 2, 3)
	r := rand.New(rand.NewSource(4))
	for _, p := range net.Rec.Params() {
		for i := range p.Value.Data {
			p.Value.Data[i] += float32(0.1 * r.NormFloat64())
		}
	}
	h, err := NewHead(net, 1)
	if err != nil {
		t.Fatal(err)
	}
	m := h.Corrupt(r, counting(r, 3), Masking{Rate: 0.5, Mask: 0.8, Random: 0.1}, testPieces)
	ps := h.Params()
	var in []*tensor.Tensor
	for _, p := range ps {
		in = append(in, p.Value)
	}
	err = ag.GradCheck(in, 3e-3, 3e-2, func(tp *ag.Tape, v []*ag.Var) *ag.Var {
		saved := make([]*ag.Var, len(ps))
		for i, p := range ps {
			saved[i], p.Var = p.Var, v[i]
		}
		defer func() {
			for i, p := range ps {
				p.Var = saved[i]
			}
		}()
		return tp.CrossEntropy(h.Logits(tp, m.Batch, m.Pos), m.Targets, nil)
	})
	if err != nil {
		t.Error(err)
	}
	tp := ag.NewTape()
	tp.Backward(tp.CrossEntropy(h.Logits(tp, m.Batch, m.Pos), m.Targets, nil))
	trains := map[*ag.Param]bool{}
	for _, p := range ps {
		trains[p] = true
	}
	for _, p := range net.Params() {
		if !trains[p] && p.Grad != nil && slices.ContainsFunc(p.Grad.Data, func(g float32) bool { return g != 0 }) {
			t.Errorf("%s is fixed but got a gradient", p.Name)
		}
	}
	if len(ps) != len(net.Rec.Params())+len(net.Enc.(*nn.Transformer).Layers[1].Params()) {
		t.Errorf("%d trainable tensors", len(ps))
	}
	if _, err := NewHead(net, 3); err == nil {
		t.Error("unfreezing 3 of 2 layers accepted")
	}
}

// On the counting task the head learns to name a masked word from its
// neighbours: held-out top-1 far above chance (1/15) after training the
// layers with it, and training with the encoder fixed changes nothing but
// the head.
func TestTrainLearnsCounting(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	trainSeqs, test := counting(r, 1500), counting(r, 200)
	net := tinyNet(t, 2, 6)
	h, _ := NewHead(net, 2)
	before := Evaluate(h, test, testPieces, DefaultMasking(), 1, 64)
	o := DefaultOptions()
	o.Epochs, o.LR, o.Seed = 15, 1e-2, 7
	epochs, err := Train(context.Background(), h, trainSeqs, testPieces, o)
	if err != nil {
		t.Fatal(err)
	}
	after := Evaluate(h, test, testPieces, DefaultMasking(), 1, 64)
	if after.Top1 < 0.85 || after.Top10 < after.Top1 || after.N < 100 || epochs[len(epochs)-1].Loss >= epochs[0].Loss {
		t.Errorf("top-1 %.3f (top-10 %.3f, %d pieces; before %.3f); losses %+v", after.Top1, after.Top10, after.N, before.Top1, epochs)
	}

	fixed := tinyNet(t, 2, 6)
	emb := slices.Clone(fixed.Emb.W.Value.Data)
	layer := slices.Clone(fixed.Enc.(*nn.Transformer).Layers[1].Query.W.Value.Data)
	hf, _ := NewHead(fixed, 0)
	dense := slices.Clone(fixed.Rec.Dense.W.Value.Data)
	o.Epochs = 1
	if _, err := Train(context.Background(), hf, trainSeqs, testPieces, o); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(emb, fixed.Emb.W.Value.Data) || !slices.Equal(layer, fixed.Enc.(*nn.Transformer).Layers[1].Query.W.Value.Data) || slices.Equal(dense, fixed.Rec.Dense.W.Value.Data) {
		t.Error("a fixed encoder changed, or the head did not")
	}
	o.Epochs = 0
	if _, err := Train(context.Background(), hf, trainSeqs, testPieces, o); err == nil {
		t.Error("0 epochs accepted")
	}
}

// A run stopped inside an epoch (as a kill right after a checkpoint would
// leave it) and resumed ends with the weights and losses of a run never
// stopped, dropout included; a checkpoint of another run is refused.
func TestTrainResumesExactly(t *testing.T) {
	r := rand.New(rand.NewSource(8))
	seqs := counting(r, 300)
	run := func(stopAfter int, dir string, id string) (*nn.Classifier, []Epoch, error) {
		net := tinyNet(t, 2, 9)
		net.Enc.(*nn.Transformer).Cfg.HiddenDropout = 0.1
		h, _ := NewHead(net, 1)
		o := DefaultOptions()
		o.Epochs, o.LR, o.Seed, o.Checkpoint, o.Resume, o.Identity = 2, 3e-3, 4, dir, true, []byte(id)
		o.stopAfter = stopAfter
		ep, err := Train(context.Background(), h, seqs, testPieces, o)
		return net, ep, err
	}
	whole, wantEp, err := run(0, "", `{"run":1}`)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "ckpt")
	if _, _, err := run(13, dir, `{"run":1}`); !errors.Is(err, errStopped) { // inside epoch 2 (10 batches an epoch)
		t.Fatal(err)
	}
	if _, _, err := run(0, dir, `{"run":2}`); err == nil || !strings.Contains(err.Error(), "another run") {
		t.Errorf("a checkpoint of another run: %v", err)
	}
	resumed, gotEp, err := run(0, dir, `{"run":1}`)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range whole.Params() {
		if !slices.Equal(p.Value.Data, resumed.Params()[i].Value.Data) {
			t.Fatalf("%s differs after the resume", p.Name)
		}
	}
	if len(gotEp) != 2 || gotEp[0].Loss != wantEp[0].Loss || gotEp[1].Loss != wantEp[1].Loss || gotEp[1].Pieces != wantEp[1].Pieces {
		t.Errorf("epochs %+v, uninterrupted %+v", gotEp, wantEp)
	}
}
