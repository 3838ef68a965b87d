package defense

import (
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/train"
)

func exBatch(ex []train.Example, minLen int) *nn.Batch {
	var seqs [][]int32
	var labels []int
	for _, e := range ex {
		seqs, labels = append(seqs, e.IDs), append(labels, e.Label)
	}
	return nn.MakeBatch(seqs, labels, minLen)
}

// FGPM only substitutes synonyms from S, each position at most once and at
// most MaxSteps per text, leaves the parameters' gradients alone, and the
// first substitution is the best-scoring one.
func TestFGPM(t *testing.T) {
	m, syn, tr, _ := setup(t, 2)
	b := exBatch(tr[:24], m.Net.Enc.MinLen())
	a := NewATFL(syn)
	a.MaxSteps = 3
	adv := a.FGPM(m.Net, b)
	total := 0
	for r := 0; r < b.B; r++ {
		n := 0
		for i := r * b.L; i < (r+1)*b.L; i++ {
			if adv[i] != b.IDs[i] {
				n++
				if !slices.Contains(syn.Of(b.IDs[i]), adv[i]) {
					t.Fatalf("position %d: %d is not a synonym of %d", i, adv[i], b.IDs[i])
				}
			}
		}
		if n > a.MaxSteps {
			t.Errorf("text %d: %d substitutions > %d", r, n, a.MaxSteps)
		}
		total += n
	}
	if total == 0 {
		t.Fatal("FGPM changed nothing on an untrained model")
	}
	for _, p := range m.Net.Params() {
		if p.Grad != nil {
			for _, g := range p.Grad.Data {
				if g != 0 {
					t.Fatalf("FGPM left a gradient in %s", p.Name)
				}
			}
		}
		if p.Frozen {
			t.Fatalf("FGPM left %s frozen", p.Name)
		}
	}
	// One step on one correctly classified text: the substitution maximises
	// the projected gradient, checked against finite differences of CE along
	// each candidate direction ranking (the top candidate must raise the
	// first-order CE estimate the most, i.e. have the largest directional
	// derivative).
	a.MaxSteps = 1
	one := a.FGPM(m.Net, b)
	tp := ag.NewTape()
	x := tp.Leaf(m.Net.Embed(tp, b).Value)
	_, s := m.Net.Encode(tp, x, b.Lengths)
	logits := m.Net.Head(tp, s)
	tp.Backward(tp.CrossEntropy(logits, b.Labels, nil))
	for _, p := range m.Net.Params() {
		p.ZeroGrad()
	}
	d := m.Net.Cfg.EmbedDim
	E := m.Net.Emb.W.Value.Data
	c := m.Net.Cfg.NumClasses
	for r := 0; r < b.B; r++ {
		if nn.Argmax(logits.Data()[r*c:(r+1)*c]) != b.Labels[r] {
			continue
		}
		best := float32(math.Inf(-1))
		var bestAt int
		var bestID int32
		for i := r * b.L; i < r*b.L+b.Lengths[r]; i++ {
			for _, w := range syn.Of(b.IDs[i]) {
				var sc float32
				for j := 0; j < d; j++ {
					sc += (E[int(w)*d+j] - E[int(b.IDs[i])*d+j]) * x.Grad.Data[i*d+j]
				}
				if sc > best {
					best, bestAt, bestID = sc, i, w
				}
			}
		}
		if math.IsInf(float64(best), -1) {
			continue
		}
		if one[bestAt] != bestID {
			t.Errorf("text %d: FGPM did not apply the best-scoring substitution %d at %d", r, bestID, bestAt)
		}
	}
}

// FGPM attacks each text on its own: the batch result equals running every
// text as a batch of one, whichever texts finish early (FGPM drops finished
// texts from its later passes). Checked on the CNN and the BiLSTM.
func TestFGPMBatchEqualsOneByOne(t *testing.T) {
	for _, arch := range []string{"cnn", "bilstm"} {
		m, syn, tr, _ := setupArch(t, arch, 2)
		b := exBatch(tr[:16], m.Net.Enc.MinLen())
		a := NewATFL(syn)
		a.MaxSteps = 6
		adv := a.FGPM(m.Net, b)
		stops := map[int]bool{} // substitutions made, per text
		for r := 0; r < b.B; r++ {
			one := &nn.Batch{IDs: b.IDs[r*b.L : (r+1)*b.L], B: 1, L: b.L, Lengths: b.Lengths[r : r+1], Labels: b.Labels[r : r+1]}
			want := a.FGPM(m.Net, one)
			got := adv[r*b.L : (r+1)*b.L]
			if !slices.Equal(got, want) {
				t.Fatalf("%s text %d: batch FGPM %v, alone %v", arch, r, got, want)
			}
			n := 0
			for i := range got {
				if got[i] != one.IDs[i] {
					n++
				}
			}
			stops[n] = true
		}
		// Texts must stop after different numbers of steps, or the test
		// would not exercise the dropping of finished texts.
		if len(stops) < 2 {
			t.Fatalf("%s: every text made the same number of substitutions %v", arch, stops)
		}
	}
}

// With N_max = 0 and no dropout, x_adv = x and the loss is CE; with
// N_max > 0 the loss has a gradient for every parameter and ATFL trains.
func TestATFLLoss(t *testing.T) {
	m, syn, tr, dev := setup(t, 4)
	b := exBatch(tr[:16], m.Net.Enc.MinLen())
	a := NewATFL(syn)
	a.MaxSteps = 0
	tp := ag.NewTape()
	out, err := a.Loss(tp, m.Net, b)
	if err != nil {
		t.Fatal(err)
	}
	ce := tp.CrossEntropy(m.Net.Forward(tp, b), b.Labels, nil).Item()
	if d := math.Abs(float64(out.Loss.Item() - ce)); d > 1e-6 {
		t.Errorf("N_max = 0: loss %g, CE %g", out.Loss.Item(), ce)
	}
	a.MaxSteps = 30
	opt := train.Options{Epochs: 8, BatchSize: 32, LR: 5e-3, Seed: 7, Out: filepath.Join(t.TempDir(), "m")}
	res, err := train.Run(m, a, tr, dev, opt)
	if err != nil {
		t.Fatal(err)
	}
	if acc := accuracy(m.Net, dev); acc < 0.85 {
		t.Errorf("dev accuracy %.3f after ATFL, want >= 0.85", acc)
	}
	// The trained model resists FGPM on dev better than at the start.
	db := exBatch(dev, m.Net.Enc.MinLen())
	advAcc := accuracy(m.Net, split(a.FGPM(m.Net, db), db))
	t.Logf("ATFL: dev %.3f, under FGPM %.3f (last epoch terms %v)", accuracy(m.Net, dev), advAcc, res.Epochs[len(res.Epochs)-1].Terms)
}

// split turns a batch's ids back into examples with its labels.
func split(ids []int32, b *nn.Batch) []train.Example {
	out := make([]train.Example, b.B)
	for r := range out {
		out[r] = train.Example{IDs: ids[r*b.L : r*b.L+b.Lengths[r]], Label: b.Labels[r]}
	}
	return out
}

// The CNN shortcut makes the taped path's substitutions: on untrained and
// trained Kim CNNs, texts shorter than the widest window included, with
// budgets that stop texts early and late.
func TestFGPMCNNMatchesTaped(t *testing.T) {
	m, syn, tr, _ := setup(t, 3)
	if _, ok := newFGPMCNN(NewATFL(syn), m.Net); !ok {
		t.Fatal("the test model does not take the CNN shortcut")
	}
	check := func(name string) {
		for _, steps := range []int{1, 4, 30} {
			a := NewATFL(syn)
			a.MaxSteps = steps
			ex := tr
			b := exBatch(ex, m.Net.Enc.MinLen())
			b.Lengths[0] = 2 // shorter than the widest window
			got, want := a.FGPM(m.Net, b), a.fgpmTaped(m.Net, b)
			changed := 0
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("%s, %d steps: position %d (text %d): shortcut %d, taped %d", name, steps, i, i/b.L, got[i], want[i])
				}
				if got[i] != b.IDs[i] {
					changed++
				}
			}
			if changed == 0 {
				t.Fatalf("%s, %d steps: nothing substituted", name, steps)
			}
		}
	}
	check("untrained")
	if _, err := train.Run(m, train.Standard{}, tr, nil, train.Options{Epochs: 3, BatchSize: 16, LR: 0.01, Seed: 1, Out: filepath.Join(t.TempDir(), "m")}); err != nil {
		t.Fatal(err)
	}
	check("trained")
}

// FGPM's taped path gathers the words' input projections (inputMaps)
// instead of running the input GEMM and scores candidates from the gradient
// of the projections: the same substitutions as from the embeddings'
// gradient, on a CNN, an LSTM and a BiLSTM, untrained and trained, for 1, 4
// and 30 steps.
func TestFGPMProjectedMatchesEmbeddings(t *testing.T) {
	for _, arch := range []string{"cnn", "lstm", "bilstm"} {
		m, syn, tr, _ := setupArch(t, arch, 5)
		check := func(name string) {
			for _, steps := range []int{1, 4, 30} {
				a := NewATFL(syn)
				a.MaxSteps = steps
				b := exBatch(tr, m.Net.Enc.MinLen())
				got := a.fgpmTaped(m.Net, b)
				a.embeddingInputs = true
				want := a.fgpmTaped(m.Net, b)
				changed := 0
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("%s %s, %d steps: position %d (text %d): projected %d, embeddings %d", arch, name, steps, i, i/b.L, got[i], want[i])
					}
					if got[i] != b.IDs[i] {
						changed++
					}
				}
				if changed == 0 {
					t.Fatalf("%s %s, %d steps: nothing substituted", arch, name, steps)
				}
			}
		}
		check("untrained")
		if _, err := train.Run(m, train.Standard{}, tr, nil, train.Options{Epochs: 3, BatchSize: 16, LR: 0.01, Seed: 1, Out: filepath.Join(t.TempDir(), "m")}); err != nil {
			t.Fatal(err)
		}
		check("trained")
	}
}
