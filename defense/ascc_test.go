package defense

import (
	"math"
	"math/rand"
	"path/filepath"
	"slices"
	"testing"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/tensor"
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

// The inner steps combine each candidate's projection by the encoder's
// first, linear, map instead of feeding the combined embeddings: the same
// sentence representation and the same gradient of the convex weights, for
// the CNN, a unidirectional LSTM and a BiLSTM, with rows of different
// lengths; and the same inner maximisation.
func TestASCCProjectedInputs(t *testing.T) {
	for _, arch := range []string{"cnn", "lstm", "bilstm"} {
		m, syn, tr, _ := setupArch(t, arch, 9)
		b := exBatch(tr[:8], m.Net.Enc.MinLen())
		a := NewASCC(syn)
		n := a.K + 1
		cand, _ := candidates(syn, b.IDs, a.K)
		r := rand.New(rand.NewSource(3))
		w := tensor.New(b.B*b.L, n)
		for i := range w.Data {
			w.Data[i] = r.Float32()
		}
		probe := tensor.New(b.B, m.Net.Enc.OutDim())
		for i := range probe.Data {
			probe.Data[i] = float32(r.NormFloat64())
		}
		var sents, grads [2][]float32
		for i, hull := range []bool{true, false} {
			a.hullInputs = hull
			tp := ag.NewTape()
			enc := a.hullEncoder(tp, m.Net, b, cand, n)
			wv := tp.Leaf(w.Clone())
			sent := enc(tp, wv)
			tp.Backward(tp.Sum(tp.Mul(sent, tp.Const(probe))))
			sents[i], grads[i] = sent.Data(), wv.Grad.Data
		}
		if d := tensor.MaxAbsDiff(sents[0], sents[1]); d > 1e-5 {
			t.Errorf("%s: sentence representations differ by %g", arch, d)
		}
		if d := tensor.MaxAbsDiff(grads[0], grads[1]); d > 1e-5 {
			t.Errorf("%s: weight gradients differ by %g", arch, d)
		}
		if slices.Max(grads[1]) == 0 && slices.Min(grads[1]) == 0 {
			t.Errorf("%s: zero weight gradient, the comparison is empty", arch)
		}
		ws := adversaryWeights(m.Net, syn, b, func(a *ASCC, hull bool) { a.hullInputs = hull })
		if d := tensor.MaxAbsDiff(ws[0], ws[1]); d > 1e-3 {
			t.Errorf("%s: inner maximisations end %g apart", arch, d)
		}
	}
}

// The inner steps skip the positions the encoder never reads: the same
// convex weights, bit for bit, as mixing every position, on a CNN (a text
// shorter than its widest window included), an LSTM and a BiLSTM.
func TestASCCSkipsUnreadPositions(t *testing.T) {
	for _, arch := range []string{"cnn", "lstm", "bilstm"} {
		m, syn, tr, _ := setupArch(t, arch, 9)
		b := exBatch(tr[:8], m.Net.Enc.MinLen())
		b.Lengths[0] = 2 // shorter than the CNN's widest window
		padded := 0
		for _, n := range b.Lengths {
			padded += b.L - n
		}
		if padded == 0 {
			t.Fatalf("%s: the batch has no padding, the test is empty", arch)
		}
		ws := adversaryWeights(m.Net, syn, b, func(a *ASCC, all bool) { a.mixAllRows = all })
		n := NewASCC(syn).K + 1
		for i := range ws[0] {
			if ws[0][i] != ws[1][i] {
				t.Fatalf("%s: weight %d (text %d): %v mixing every position, %v skipping padding", arch, i, i/(b.L*n), ws[0][i], ws[1][i])
			}
		}
	}
}

// adversaryWeights runs the inner maximisation twice with the spec's
// settings, set(a, true) then set(a, false), and returns both weights.
func adversaryWeights(m *nn.Classifier, syn *SynonymTable, b *nn.Batch, set func(a *ASCC, on bool)) [2][]float32 {
	var ws [2][]float32
	for i, on := range []bool{true, false} {
		a := NewASCC(syn)
		set(a, on)
		w, _ := a.Adversary(m, b)
		ws[i] = w.Data
	}
	return ws
}
