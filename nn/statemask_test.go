package nn

import (
	"math/rand"
	"testing"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/tensor"
)

// maskedTransformer is a tiny transformer with FLAT's word mask; dropout
// is 0 unless drop, so that training passes differ only by the mask draws.
func maskedTransformer(t *testing.T, drop bool) *Classifier {
	t.Helper()
	cfg := tinyConfig("transformer")
	cfg.VocabSize, cfg.EmbedDim, cfg.NumClasses = 30, 8, 2
	cfg.Mask, cfg.MaskHidden = true, 6
	if !drop {
		tc := *cfg.Transformer
		tc.HiddenDropout, tc.AttnDropout = 0, 0
		cfg.Transformer, cfg.Dropout = &tc, 0
	}
	m, err := New(cfg, rand.New(rand.NewSource(11)))
	if err != nil {
		t.Fatal(err)
	}
	// Spread the mask's logits so that φ is far from 1/2 for some words:
	// samples then differ between words.
	for i := range m.Mask.Out.W.Value.Data {
		m.Mask.Out.W.Value.Data[i] *= 8
	}
	return m
}

// Spec check 2 on a transformer: φ of a word is bit-identical at every
// position of every sentence, in training and inference passes alike, and
// equals the vocabulary table (φ comes from the word-embedding row only, not
// from the position-dependent embedding-layer output).
func TestTransformerMaskGlobal(t *testing.T) {
	m := maskedTransformer(t, true)
	table := m.WordImportance()
	for _, train := range []bool{false, true} {
		for _, seqs := range [][][]int32{{{2, 7, 3, 9}, {9, 3, 20, 3, 5, 3}}, {{3}}, {{5, 5, 5, 9, 20, 7, 2, 3}}} {
			tp := ag.NewTape()
			tp.Train, tp.Rng = train, rand.New(rand.NewSource(1))
			b := MakeBatch(seqs, []int{0, 1}[:len(seqs)], 1)
			_, mo := m.EncodeMasked(tp, b, true)
			for i, id := range b.IDs {
				if got := mo.Phi.Data()[i]; got != table[id] {
					t.Fatalf("train %v, position %d word %d: φ %v, table %v", train, i, id, got, table[id])
				}
			}
			if train != (mo.W != nil) {
				t.Fatalf("train %v: sampled mask %v", train, mo.W != nil)
			}
		}
	}
}

// Spec check 3 on a transformer: in inference the first layer reads φ of
// each position's word times the embedding layer's output (word +
// position + type, LayerNorm) at that position, and two evaluations are
// identical. Scaling the raw word embedding instead (the CNN/LSTM place)
// gives other logits.
func TestTransformerMaskInferencePath(t *testing.T) {
	m := maskedTransformer(t, true) // dropout set, and off in inference
	tr := m.Enc.(*Transformer)
	seqs := [][]int32{{2, 7, 3, 9, 3}, {9, 20, 4}}
	b := MakeBatch(seqs, []int{0, 1}, 1)
	tp := ag.NewTape()
	tp.NoGrad = true
	got := m.Forward(tp, b).Data()

	table := m.WordImportance()
	e := tp.Const(tr.InputStates(tp, m.Embed(tp, b), nil).Value.Clone())
	phi := tensor.New(b.B, b.L, 1)
	for i, id := range b.IDs {
		phi.Data[i] = table[id]
	}
	states := tp.Mul(e, tp.Const(phi))
	for i, v := range states.Data() {
		if v != e.Data()[i]*phi.Data[i/m.Emb.Dim()] {
			t.Fatalf("state %d: %v", i, v)
		}
	}
	h := tr.RunLayers(tp, states, b.Lengths, 0, len(tr.Layers))
	want := m.Head(tp, tr.pool(tp, h, b.Lengths)).Data()
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("logit %d: Forward %v, φ × embedding-layer output %v", i, got[i], want[i])
		}
	}
	// The generic place (φ on the word embedding, before positions and
	// LayerNorm) is another model.
	old := m.Mask.Apply(tp, m.Emb, m.Embed(tp, b), b.IDs).X
	_, s := m.Encode(tp, old, b.Lengths)
	differs := false
	for i, v := range m.Head(tp, s).Data() {
		differs = differs || v != got[i]
	}
	if !differs {
		t.Error("masking the word embedding gives the same logits: the test cannot tell the places apart")
	}
	p1, p2 := m.Predict(seqs), m.Predict(seqs)
	for i := range p1 {
		for c := range p1[i] {
			if p1[i][c] != p2[i][c] {
				t.Fatal("two inference runs differ")
			}
		}
	}
	// The embedding-space path (attacks) gives Forward's logits too:
	// EmbedInput leaves φ out, EncodeInput applies it on the states.
	_, s = m.EncodeInput(tp, m.EmbedInput(tp, b), b)
	for i, v := range m.Head(tp, s).Data() {
		if v != got[i] {
			t.Fatalf("EncodeInput(EmbedInput) logit %d: %v, Forward %v", i, v, got[i])
		}
	}
	if m.InputScale(b.IDs) != nil || len(m.StateScale(b.IDs)) != len(b.IDs) {
		t.Error("a transformer's φ belongs to the states, not the embeddings")
	}
}

// A training pass multiplies each input state by the sampled mask W ∈
// {0, 1} and removes the positions with W = 0 from the attention keys
// (spec §2.2); MaskAttendAll keeps them.
func TestTransformerMaskTrainingPath(t *testing.T) {
	m := maskedTransformer(t, false)
	tr := m.Enc.(*Transformer)
	seqs := [][]int32{{2, 7, 3, 9, 3, 12, 14, 20}, {9, 20, 4, 5, 6}}
	b := MakeBatch(seqs, []int{0, 1}, 1)
	run := func(attendAll bool) (forward, manual, noRemoval []float32, w []float32) {
		m.Cfg.MaskAttendAll = attendAll
		defer func() { m.Cfg.MaskAttendAll = false }()
		tp := &ag.Tape{Train: true, Rng: rand.New(rand.NewSource(4))}
		forward = m.Forward(tp, b).Data()
		tp = &ag.Tape{Train: true, Rng: rand.New(rand.NewSource(4))}
		factor, mo := m.Mask.Factor(tp, m.Emb, b.IDs)
		w = mo.W.Data()
		keep := make([]bool, len(w))
		for i, v := range w {
			keep[i] = v == 1
		}
		states := tr.InputStates(tp, m.Embed(tp, b), nil)
		states = tp.Mul(states, tp.Reshape(factor, b.B, b.L, 1))
		h := tr.RunLayersKeys(tp, states, b.Lengths, keep, 0, len(tr.Layers))
		manual = m.Head(tp, tr.pool(tp, h, b.Lengths)).Data()
		h = tr.RunLayers(tp, states, b.Lengths, 0, len(tr.Layers))
		noRemoval = m.Head(tp, tr.pool(tp, h, b.Lengths)).Data()
		return forward, manual, noRemoval, w
	}
	same := func(a, b []float32) bool {
		for i := range a {
			if a[i] != b[i] {
				return false
			}
		}
		return true
	}
	fw, manual, plain, w := run(false)
	zeros, ones := 0, 0
	for i, v := range w {
		switch {
		case v == 0 && i%b.L < b.Lengths[i/b.L]:
			zeros++
		case v == 1:
			ones++
		case v != 0:
			t.Fatalf("sampled mask %v is not 0/1", v)
		}
	}
	if zeros == 0 || ones == 0 {
		t.Fatalf("the draw kept %d and dropped %d real tokens: the test needs both", ones, zeros)
	}
	if !same(fw, manual) {
		t.Errorf("training logits %v, W × states with the dropped keys removed %v", fw, manual)
	}
	if same(fw, plain) {
		t.Error("removing the dropped tokens from the attention changed nothing")
	}
	fw, _, plain, _ = run(true)
	if !same(fw, plain) {
		t.Errorf("MaskAttendAll: logits %v, W × states with every key %v", fw, plain)
	}
}

// Finite differences: the masked input states (EncodeScaled, with a key
// mask) w.r.t. the word embeddings and the scale, and an inference pass of
// the whole masked transformer w.r.t. the importance network's weights
// (φ reaches the logits through the states).
func TestTransformerMaskGradCheck(t *testing.T) {
	m := maskedTransformer(t, false)
	tr := m.Enc.(*Transformer)
	r := rand.New(rand.NewSource(5))
	lengths := []int{4, 3}
	keep := []bool{true, false, true, false, false, true, true, true}
	x := uniform(r, 1, 2, 4, 8)
	scale := uniform(r, 1, 8, 1)
	if err := ag.GradCheck([]*tensor.Tensor{x, scale}, 1e-2, 3e-2, func(tp *ag.Tape, in []*ag.Var) *ag.Var {
		_, s := tr.EncodeScaled(tp, in[0], lengths, nil, in[1], keep)
		return s
	}); err != nil {
		t.Errorf("EncodeScaled: %v", err)
	}
	b := MakeBatch([][]int32{{2, 7, 3, 9}, {9, 20, 4}}, []int{0, 1}, 1)
	w := m.Mask
	if err := ag.GradCheck([]*tensor.Tensor{w.Hidden.W.Value, w.Hidden.B.Value, w.Out.W.Value, w.Out.B.Value}, 1e-2, 3e-2,
		func(tp *ag.Tape, in []*ag.Var) *ag.Var {
			c := *m
			c.Mask = &WordMask{Hidden: &Linear{W: &ag.Param{Var: in[0]}, B: &ag.Param{Var: in[1]}},
				Out: &Linear{W: &ag.Param{Var: in[2]}, B: &ag.Param{Var: in[3]}}, Tau: 1}
			return c.Forward(tp, b)
		}); err != nil {
		t.Errorf("mask network through the states: %v", err)
	}
}
