package defense

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/train"
)

// The inner maximisation gives convex weights on {w} ∪ S(w) only, sparse
// under the entropy penalty, with a KL no smaller than at the clean point;
// the outer loss sends gradients to the embedding and the encoder, and ASCC
// trains.
func TestASCC(t *testing.T) {
	m, syn, tr, dev := setup(t, 5)
	b := exBatch(tr[:16], m.Net.Enc.MinLen())
	a := NewASCC(syn)
	w, cand := a.Adversary(m.Net, b)
	n := a.K + 1
	var maxW float64
	var multi int
	for p := 0; p < b.B*b.L; p++ {
		var sum float64
		best := 0.0
		for j := 0; j < n; j++ {
			v := float64(w.Data[p*n+j])
			sum += v
			if j > 0 && cand[p*n+j] == b.IDs[p] && v > 1e-6 {
				t.Fatalf("position %d: weight %g on an unused slot", p, v)
			}
			best = math.Max(best, v)
		}
		if math.Abs(sum-1) > 1e-4 {
			t.Fatalf("position %d: weights sum to %g", p, sum)
		}
		if len(syn.Of(b.IDs[p])) > 0 {
			maxW += best
			multi++
		}
	}
	if multi == 0 {
		t.Fatal("no position has synonyms")
	}
	if avg := maxW / float64(multi); avg < 0.8 {
		t.Errorf("mean largest weight %.3f: the entropy penalty should make weights sparse", avg)
	}
	tp := ag.NewTape()
	out, err := a.Loss(tp, m.Net, b)
	if err != nil {
		t.Fatal(err)
	}
	if out.Terms["kl"] <= 0 {
		t.Errorf("KL term %g, want > 0", out.Terms["kl"])
	}
	tp.Backward(out.Loss)
	for _, p := range m.Net.Params() {
		if p.Grad == nil {
			t.Fatalf("%s got no gradient", p.Name)
		}
	}
	for _, p := range m.Net.Params() {
		p.ZeroGrad()
	}
	a.Steps = 3
	opt := train.Options{Epochs: 12, BatchSize: 32, LR: 5e-3, Seed: 7, Out: filepath.Join(t.TempDir(), "m")}
	if _, err := train.Run(m, a, tr, dev, opt); err != nil {
		t.Fatal(err)
	}
	if acc := accuracy(m.Net, dev); acc < 0.85 {
		t.Errorf("dev accuracy %.3f after ASCC, want >= 0.85", acc)
	}
}
