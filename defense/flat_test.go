package defense

import (
	"math"
	"math/rand"
	"testing"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/nn"
)

func flatModel(t *testing.T) *nn.Classifier {
	cfg := nn.DefaultConfig("cnn")
	cfg.VocabSize, cfg.EmbedDim, cfg.Filters, cfg.Mask, cfg.MaskHidden = 30, 6, 4, true, 8
	m, err := nn.New(cfg, rand.New(rand.NewSource(1)))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestFLATImportanceTerm(t *testing.T) {
	m := flatModel(t)
	f, err := NewFLAT(0.1, 1)
	if err != nil {
		t.Fatal(err)
	}
	orig := []int32{3, 4, 5, 6, 7}
	adv := []int32{3, 14, 5, 16, 7} // differs at 1 and 3
	f.SetPairs([]Pair{{orig, adv}, {orig, orig}})
	b := nn.MakeBatch([][]int32{adv, orig}, []int{0, 1}, 5)
	tp := ag.NewTape()
	tp.Train = true
	out, err := f.Loss(tp, m, b)
	if err != nil {
		t.Fatal(err)
	}
	phi := m.WordImportance()
	want := (math.Abs(float64(phi[4]-phi[14])) + math.Abs(float64(phi[6]-phi[16]))) / 2
	if got := float64(out.Terms["imp"]); math.Abs(got-want) > 1e-6 {
		t.Errorf("L_imp = %g, want %g", got, want)
	}
	// A clean batch has L_imp = 0.
	tp = ag.NewTape()
	tp.Train = true
	out, _ = f.Loss(tp, m, nn.MakeBatch([][]int32{orig}, []int{1}, 5))
	if out.Terms["imp"] != 0 {
		t.Errorf("clean L_imp = %g", out.Terms["imp"])
	}
	// Only the substituted words' φ get gradient from L_imp: with β = 0 and
	// the CE removed, embedding rows of unchanged words get none.
	g, _ := NewFLAT(0, 1)
	g.SetPairs([]Pair{{orig, adv}})
	tp = ag.NewTape()
	gap := g.importanceGap(tp, m, b, m.Mask.Apply(tp, m.Emb, m.Embed(tp, b), b.IDs).Phi)
	for _, p := range m.Params() {
		p.ZeroGrad()
	}
	tp.Backward(gap)
	d := m.Cfg.EmbedDim
	for _, id := range []int32{3, 5, 7} {
		for _, v := range m.Emb.W.Grad.Data[int(id)*d : int(id+1)*d] {
			if v != 0 {
				t.Fatalf("unchanged word %d got gradient from L_imp", id)
			}
		}
	}
	var sum float64
	for _, v := range m.Mask.Hidden.W.Grad.Data {
		sum += math.Abs(float64(v))
	}
	if sum == 0 {
		t.Error("no gradient reaches the mask network from L_imp")
	}
}

func TestFLATNeedsMask(t *testing.T) {
	cfg := nn.DefaultConfig("cnn")
	cfg.VocabSize, cfg.EmbedDim, cfg.Filters = 30, 6, 4
	m, _ := nn.New(cfg, rand.New(rand.NewSource(1)))
	f, _ := NewFLAT(0.1, 0.001)
	if _, err := f.Loss(ag.NewTape(), m, nn.MakeBatch([][]int32{{3, 4, 5, 6, 7}}, []int{0}, 5)); err == nil {
		t.Error("unmasked model accepted")
	}
	if _, err := NewFLAT(-1, 0); err == nil {
		t.Error("negative beta accepted")
	}
}
