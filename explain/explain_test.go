package explain

import (
	"math"
	"math/rand"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/tensor"
)

// baselineProbs runs the encoder on an all-zero embedding of ids: IG's
// baseline. A transformer's word mask still scales its input states by φ
// of ids (the embedding layer adds positions to the zero rows).
func baselineProbs(m *nn.Classifier, ids []int32) []float32 {
	t := ag.NewTape()
	t.NoGrad = true
	n := len(ids)
	l := max(n, m.Enc.MinLen())
	var scale *ag.Var
	if st := m.StateScale(m.MapIDs(ids)); st != nil {
		scale = t.Const(tensor.From(append(st, make([]float32, l-n)...), l, 1))
	}
	_, s := m.EncodeStates(t, t.Const(tensor.New(1, l, m.Emb.Dim())), []int{n}, scale)
	p := append([]float32(nil), m.Head(t, s).Data()...)
	ag.SoftmaxRows(p, m.Cfg.NumClasses)
	return p
}

func tinyModel(t *testing.T, arch string, mask bool) *nn.Classifier {
	cfg := nn.DefaultConfig(arch)
	cfg.VocabSize, cfg.EmbedDim, cfg.NumClasses = 30, 8, 3
	cfg.Filters, cfg.Hidden, cfg.Mask, cfg.MaskHidden = 6, 6, mask, 10
	m, err := nn.New(cfg, rand.New(rand.NewSource(3)))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestIGCompleteness(t *testing.T) {
	ids := []int32{4, 9, 2, 17, 5, 23, 8}
	for _, tc := range []struct {
		arch  string
		mask  bool
		steps int
		tol   float64
	}{{"lstm", false, 50, 0.01}, {"bilstm", true, 50, 0.01}, {"cnn", false, 300, 0.01}, {"transformer", false, 100, 0.01}, {"transformer", true, 100, 0.01}} {
		m := tinyModel(t, tc.arch, tc.mask)
		ig, err := IG(m, ids, nil, tc.steps)
		if err != nil {
			t.Fatal(err)
		}
		fx, f0 := Probs(m, ids), baselineProbs(m, ids)
		for c := range ig {
			var sum float64
			for _, v := range ig[c] {
				sum += v
			}
			want := float64(fx[c] - f0[c])
			if math.Abs(sum-want) > tc.tol {
				t.Errorf("%s mask=%v class %d: Σ IG = %.5f, f(x) − f(0) = %.5f", tc.arch, tc.mask, c, sum, want)
			}
		}
	}
}

// oneWordModel is a hand-built CNN whose prediction depends only on word 5.
func oneWordModel(t *testing.T) *nn.Classifier {
	cfg := nn.DefaultConfig("cnn")
	cfg.VocabSize, cfg.EmbedDim, cfg.NumClasses, cfg.Filters, cfg.Widths = 20, 4, 2, 1, []int{1}
	m, err := nn.New(cfg, rand.New(rand.NewSource(1)))
	if err != nil {
		t.Fatal(err)
	}
	emb := m.Emb.W.Value.Data
	for id := 1; id < 20; id++ {
		emb[id*4] = 0 // dimension 0 carries only word 5
	}
	emb[5*4] = 1
	conv := m.Enc.(*nn.CNN).Convs[0]
	clear(conv.W.Value.Data)
	conv.W.Value.Data[0] = 1 // weight [D=4, 1·F]: picks dimension 0
	conv.B.Value.Data[0] = 0
	copy(m.Out.W.Value.Data, []float32{-4, 4}) // [1, 2]
	copy(m.Out.B.Value.Data, []float32{2, -2})
	return m
}

func argmax(v []float64) int {
	b := 0
	for i, x := range v {
		if x > v[b] {
			b = i
		}
	}
	return b
}

func TestOneWordRankedFirst(t *testing.T) {
	m := oneWordModel(t)
	ids := []int32{3, 7, 5, 11, 2, 9}
	ig, err := IG(m, ids, []int{1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if argmax(ig[0]) != 2 {
		t.Errorf("IG top position %d, want 2: %v", argmax(ig[0]), ig[0])
	}
	lime, err := LIME(m, ids, []int{1}, LIMEOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if argmax(lime[0]) != 2 {
		t.Errorf("LIME top position %d, want 2: %v", argmax(lime[0]), lime[0])
	}
	again, _ := LIME(m, ids, []int{1}, LIMEOptions{Seed: 1})
	for j := range again[0] {
		if again[0][j] != lime[0][j] {
			t.Fatal("LIME with the same seed gave different scores")
		}
	}
	// Class 0 is the mirror image: word 5 is the most negative.
	l0, _ := LIME(m, ids, []int{0}, LIMEOptions{Seed: 1, Samples: 500})
	for j, v := range l0[0] {
		if j != 2 && v <= l0[0][2] {
			t.Errorf("class 0: position %d score %g not above word 5's %g", j, v, l0[0][2])
		}
	}
}

func TestErrors(t *testing.T) {
	m := tinyModel(t, "cnn", false)
	if _, err := IG(m, nil, nil, 0); err != ErrEmpty {
		t.Errorf("empty IG: %v", err)
	}
	if _, err := LIME(m, nil, nil, LIMEOptions{}); err != ErrEmpty {
		t.Errorf("empty LIME: %v", err)
	}
	if _, err := IG(m, []int32{3}, []int{3}, 0); err == nil {
		t.Error("class 3 of 3 accepted")
	}
	if _, err := LIME(m, []int32{3, 4}, []int{-1}, LIMEOptions{}); err == nil {
		t.Error("class -1 accepted")
	}
	// Single token and shorter-than-window inputs work.
	if s, err := LIME(m, []int32{3}, nil, LIMEOptions{}); err != nil || len(s) != 3 || len(s[0]) != 1 {
		t.Errorf("one-token LIME: %v %v", s, err)
	}
	if s, err := IG(m, []int32{3}, nil, 10); err != nil || len(s[0]) != 1 {
		t.Errorf("one-token IG: %v %v", s, err)
	}
}

func TestRidgeRecoversLinear(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	beta := []float64{0.5, -1, 2, 0}
	var z [][]bool
	var y, w []float64
	for s := 0; s < 400; s++ {
		row := make([]bool, 4)
		v := 0.3
		for j := range row {
			row[j] = rng.Intn(2) == 1
			if row[j] {
				v += beta[j]
			}
		}
		z, y, w = append(z, row), append(y, v), append(w, 0.5+rng.Float64())
	}
	got, err := weightedRidge(z, [][]float64{y}, w, 1e-9)
	if err != nil {
		t.Fatal(err)
	}
	for j := range beta {
		if math.Abs(got[0][j]-beta[j]) > 1e-6 {
			t.Errorf("β_%d = %g, want %g", j, got[0][j], beta[j])
		}
	}
}

// With two classes the LSTM path computes one class and negates it; that
// must agree with computing the other class on its own tape.
func TestIGBinaryShortcutMatchesDirect(t *testing.T) {
	ids := []int32{4, 9, 2, 17, 5}
	for _, arch := range []string{"lstm", "bilstm"} {
		cfg := nn.DefaultConfig(arch)
		cfg.VocabSize, cfg.EmbedDim, cfg.NumClasses, cfg.Hidden = 30, 8, 2, 6
		m, err := nn.New(cfg, rand.New(rand.NewSource(5)))
		if err != nil {
			t.Fatal(err)
		}
		both, err := IG(m, ids, nil, 20)
		if err != nil {
			t.Fatal(err)
		}
		one, err := IG(m, ids, []int{1}, 20)
		if err != nil {
			t.Fatal(err)
		}
		// The parameters get no gradient.
		for _, p := range m.Params() {
			if p.Grad != nil {
				for _, g := range p.Grad.Data {
					if g != 0 {
						t.Fatalf("%s: IG wrote a gradient into %s", arch, p.Name)
					}
				}
			}
		}
		for j := range ids {
			if both[1][j] != -both[0][j] || math.Abs(both[1][j]-one[0][j]) > 1e-6 {
				t.Errorf("%s position %d: class 1 %g, −class 0 %g, direct %g", arch, j, both[1][j], -both[0][j], one[0][j])
			}
		}
	}
}

// IG on the tape path only reads the model: goroutines sharing one LSTM get
// the sequential scores.
func TestIGConcurrentOnOneModel(t *testing.T) {
	m := tinyModel(t, "bilstm", true)
	texts := [][]int32{{4, 9, 2, 17, 5}, {3, 3, 8}, {21, 7, 6, 2, 11, 12, 4}, {9}}
	want := make([][][]float64, len(texts))
	for i, ids := range texts {
		var err error
		if want[i], err = IG(m, ids, nil, 10); err != nil {
			t.Fatal(err)
		}
	}
	got := make([][][]float64, len(texts)*4)
	var wg sync.WaitGroup
	for k := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[k], _ = IG(m, texts[k%len(texts)], nil, 10)
		}()
	}
	wg.Wait()
	for k, g := range got {
		w := want[k%len(texts)]
		for c := range w {
			if !slices.Equal(g[c], w[c]) {
				t.Fatalf("run %d class %d: %v, sequential %v", k, c, g[c], w[c])
			}
		}
	}
}

// TestLIMEBoundsItsInput: LIME over more tokens than its regression can
// hold is an error, not an out-of-memory crash.
func TestLIMEBoundsItsInput(t *testing.T) {
	m := tinyModel(t, "cnn", false)
	ids := make([]int32, MaxLIMETokens+1)
	for i := range ids {
		ids[i] = int32(2 + i%20)
	}
	if _, err := LIME(m, ids, nil, LIMEOptions{Samples: 10}); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Errorf("LIME over %d tokens: %v", len(ids), err)
	}
}
