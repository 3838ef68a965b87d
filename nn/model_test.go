package nn

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/tensor"
)

func tinyConfig(arch string) Config {
	c := DefaultConfig(arch)
	c.VocabSize, c.EmbedDim, c.NumClasses = 20, 6, 3
	c.Filters, c.Hidden = 4, 5
	if c.Transformer != nil { // small enough for finite differences over every weight
		c.Transformer.MaxPositions, c.Transformer.Intermediate = 16, 12
	}
	return c
}

func randomSeqs(r *rand.Rand, n, maxLen, vocab int) [][]int32 {
	seqs := make([][]int32, n)
	for i := range seqs {
		l := 1 + r.Intn(maxLen)
		for j := 0; j < l; j++ {
			seqs[i] = append(seqs[i], int32(2+r.Intn(vocab-2)))
		}
	}
	return seqs
}

// TestPaddingInvariance: a sentence gets the same probabilities alone and in
// a batch padded for longer neighbours — attacks rely on it.
func TestPaddingInvariance(t *testing.T) {
	for _, arch := range Archs {
		for _, pool := range []string{"max", "mean", "last"} {
			cfg := tinyConfig(arch)
			if (arch == "cnn" && pool == "mean") || (pool == "last" && arch != "lstm") {
				continue
			}
			cfg.Pool = pool
			r := rand.New(rand.NewSource(1))
			m, err := New(cfg, r)
			if err != nil {
				t.Fatal(err)
			}
			seqs := randomSeqs(r, 9, 12, cfg.VocabSize)
			seqs = append(seqs, []int32{5}, nil) // shorter than a window; empty
			all := m.Predict(seqs)
			for i, s := range seqs {
				alone := m.Predict([][]int32{s})[0]
				if d := tensor.MaxAbsDiff(all[i], alone); d > 1e-5 {
					t.Errorf("%s/%s: sequence %d differs by %g in a batch", arch, pool, i, d)
				}
			}
		}
	}
}

// TestModelInputGradient checks d(loss)/d(embedded input) and the parameter
// gradients of whole models against finite differences.
func TestModelInputGradient(t *testing.T) {
	for _, arch := range append(slices.Clone(Archs), "bilstm+layers", "cnn+layers") {
		cfg := tinyConfig(strings.TrimSuffix(arch, "+layers"))
		if strings.HasSuffix(arch, "+layers") {
			cfg.InputLayer, cfg.HeadHidden = 4, 3
		}
		cfg.Dropout = 0
		r := rand.New(rand.NewSource(2))
		m, err := New(cfg, r)
		if err != nil {
			t.Fatal(err)
		}
		seqs := randomSeqs(r, 3, 7, cfg.VocabSize)
		b := MakeBatch(seqs, []int{0, 1, 2}, m.Enc.MinLen())
		tp := ag.NewTape()
		x := m.Embed(tp, b)
		inputs := []*tensor.Tensor{x.Value.Clone()}
		for _, p := range m.Params()[1:] {
			inputs = append(inputs, p.Value)
		}
		eps := 1e-2
		if arch == "transformer" {
			eps = 3e-3 // two LayerNorms per layer curve too much for 1e-2 steps
		}
		err = ag.GradCheck(inputs, eps, 3e-2, func(tp *ag.Tape, v []*ag.Var) *ag.Var {
			// Route the gradient through the leaf copies of each param.
			params := m.Params()[1:]
			saved := make([]*ag.Var, len(params))
			for i, p := range params {
				saved[i] = p.Var
				p.Var = v[i+1]
			}
			defer func() {
				for i, p := range params {
					p.Var = saved[i]
				}
			}()
			_, s := m.Encode(tp, v[0], b.Lengths)
			return tp.CrossEntropy(m.Head(tp, s), b.Labels, nil)
		})
		if err != nil {
			t.Errorf("%s: %v", arch, err)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	bad := []func(*Config){
		func(c *Config) { c.Arch = "gru" },
		func(c *Config) { c.VocabSize = 1 },
		func(c *Config) { c.NumClasses = 1 },
		func(c *Config) { c.Dropout = 1 },
		func(c *Config) { c.Widths = nil },
		func(c *Config) { c.Widths = []int{0} },
		func(c *Config) { c.InputLayer = -1 },
		func(c *Config) { c.HeadHidden = -1 },
	}
	for i, f := range bad {
		c := tinyConfig("cnn")
		f(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("case %d: invalid config accepted", i)
		}
	}
	c := tinyConfig("lstm")
	c.Pool = "sum"
	if c.Validate() == nil {
		t.Error("pool sum accepted")
	}
}

func TestLoadTensorsChecks(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	m, _ := New(tinyConfig("cnn"), r)
	m2, _ := New(tinyConfig("cnn"), rand.New(rand.NewSource(4)))
	if err := m2.LoadTensors(m.Tensors()); err != nil {
		t.Fatal(err)
	}
	seqs := randomSeqs(r, 4, 8, 20)
	if d := tensor.MaxAbsDiff(flat(m.Predict(seqs)), flat(m2.Predict(seqs))); d != 0 {
		t.Fatalf("loaded model differs by %g", d)
	}
	ts := m.Tensors()
	ts["head.bias"] = tensor.New(7)
	if m2.LoadTensors(ts) == nil {
		t.Fatal("shape mismatch accepted")
	}
	delete(ts, "head.bias")
	if m2.LoadTensors(ts) == nil {
		t.Fatal("missing tensor accepted")
	}
}

func flat(p [][]float32) []float32 {
	var out []float32
	for _, r := range p {
		out = append(out, r...)
	}
	return out
}

// EncodeBatch's per-word inputs (encoders without masks) give the
// position-wise path's logits and parameter gradients, with and without
// the embedding's gradient, for the CNN and every LSTM configuration, an
// id map and rows of different lengths.
func TestEncodeBatchPerWordMatchesPositionwise(t *testing.T) {
	for name, cfg := range incConfigs() {
		r := rand.New(rand.NewSource(6))
		m, err := New(cfg, r)
		if err != nil {
			t.Fatal(err)
		}
		seqs := randomSeqs(r, 7, 12, cfg.VocabSize)
		labels := make([]int, len(seqs))
		for i := range labels {
			labels[i] = r.Intn(cfg.NumClasses)
		}
		b := MakeBatch(seqs, labels, m.Enc.MinLen())
		// Masked models (FLAT's word mask, the group mask) also on training
		// tapes, where the word mask is sampled (the same draws on both
		// paths).
		train := []bool{false}
		if cfg.Mask || cfg.Groups != nil {
			train = append(train, true)
		}
		for _, embedGrad := range []bool{true, false} {
			for _, training := range train {
				name := fmt.Sprintf("%s train=%v", name, training)
				run := func(perWord bool) (logits []float32, grads [][]float32) {
					defer func(old bool) { perWordInputs = old }(perWordInputs)
					perWordInputs = perWord
					for _, p := range m.Params() {
						p.ZeroGrad()
					}
					tp := ag.NewTape()
					tp.Train = training
					out := m.Head(tp, m.EncodeBatch(tp, b, embedGrad))
					tp.Backward(tp.CrossEntropy(out, labels, nil))
					for _, p := range m.Params() {
						var g []float32
						if p.Grad != nil {
							g = slices.Clone(p.Grad.Data)
						}
						grads = append(grads, g)
					}
					return slices.Clone(out.Data()), grads
				}
				l1, g1 := run(false)
				l2, g2 := run(true)
				if d := tensor.MaxAbsDiff(l1, l2); d > 1e-5 {
					t.Errorf("%s embedGrad=%v: logits differ by %g", name, embedGrad, d)
				}
				for i, p := range m.Params() {
					nz := func(g []float32) bool { return g != nil && (slices.Max(g) != 0 || slices.Min(g) != 0) }
					if nz(g1[i]) != nz(g2[i]) {
						t.Errorf("%s embedGrad=%v %s: gradient present %v vs %v", name, embedGrad, p.Name, nz(g1[i]), nz(g2[i]))
						continue
					}
					if nz(g1[i]) {
						if d := tensor.MaxAbsDiff(g1[i], g2[i]); d > 1e-5 {
							t.Errorf("%s embedGrad=%v %s: gradients differ by %g", name, embedGrad, p.Name, d)
						}
					}
					if p == m.Emb.W && nz(g2[i]) != embedGrad {
						t.Errorf("%s embedGrad=%v: embedding gradient present %v", name, embedGrad, nz(g2[i]))
					}
				}
			}
		}
	}
}

// TestParamCount: the count matches what New allocates, for every
// architecture and the optional parts.
func TestParamCount(t *testing.T) {
	for _, arch := range append(slices.Clone(Archs), "cnn+layers", "bilstm+mask", "cnn+mask0", "transformer+mask") {
		cfg := tinyConfig(strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(arch, "+layers"), "+mask"), "+mask0"))
		if strings.HasSuffix(arch, "+layers") {
			cfg.InputLayer, cfg.HeadHidden = 4, 3
		}
		if strings.HasSuffix(arch, "+mask") {
			cfg.Mask, cfg.MaskHidden = true, 5
		}
		if strings.HasSuffix(arch, "+mask0") { // the default width
			cfg.Mask, cfg.MaskHidden = true, 0
		}
		if cfg.Transformer != nil {
			cfg.Transformer.Pooler = true
		}
		m, err := New(cfg, rand.New(rand.NewSource(1)))
		if err != nil {
			t.Fatal(err)
		}
		var n int
		for _, p := range m.Params() {
			n += len(p.Value.Data)
		}
		if got := cfg.ParamCount(); got != float64(n) {
			t.Errorf("%s: ParamCount %g, New allocates %d", arch, got, n)
		}
	}
}
