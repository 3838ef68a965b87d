package nn

import (
	"math/rand"
	"slices"
	"testing"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/tensor"
)

// testGroups puts the vocabulary's real words into g groups by id modulo g
// and <pad>, <unk> into the extra group g.
func testGroups(vocab, g int) []int32 {
	out := make([]int32, vocab)
	for id := range out {
		out[id] = int32(g)
		if id >= 2 {
			out[id] = int32(id % g)
		}
	}
	return out
}

// randomizeGroupScales moves every group scale away from its initial 1.
func randomizeGroupScales(m *Classifier, r *rand.Rand) {
	if m.GroupMask == nil {
		return
	}
	for i := range m.GroupMask.Scale.Value.Data {
		m.GroupMask.Scale.Value.Data[i] = float32(0.2 + 1.6*r.Float64())
	}
}

func groupedConfig(arch string) Config {
	c := tinyConfig(arch)
	c.Groups, c.NumGroups = testGroups(c.VocabSize, 3), 4
	return c
}

func TestGroupMaskConfigValidation(t *testing.T) {
	good := groupedConfig("cnn")
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := []func(c *Config){
		func(c *Config) { c.Groups = c.Groups[:5] },
		func(c *Config) { c.NumGroups = 0 },
		func(c *Config) { c.NumGroups = 3 }, // group 3 is out of range
		func(c *Config) { c.Groups = slices.Clone(c.Groups); c.Groups[7] = -1 },
		func(c *Config) { c.Groups = nil },
	}
	for i, f := range bad {
		c := groupedConfig("cnn")
		f(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("bad config %d accepted", i)
		}
	}
}

// TestGroupMaskInit: one [NumGroups, 1] parameter of ones, listed last.
func TestGroupMaskInit(t *testing.T) {
	m, err := New(groupedConfig("cnn"), rand.New(rand.NewSource(1)))
	if err != nil {
		t.Fatal(err)
	}
	ps := m.Params()
	last := ps[len(ps)-1]
	if last.Name != "group_mask" || !tensor.SameShape(last.Value.Shape, []int{4, 1}) {
		t.Fatalf("last parameter %s %v, want group_mask [4 1]", last.Name, last.Value.Shape)
	}
	for _, v := range last.Value.Data {
		if v != 1 {
			t.Fatalf("group scales start at %v, want all 1", last.Value.Data)
		}
	}
	if s := m.GroupScales(); !slices.Equal(s, []float32{1, 1, 1, 1}) {
		t.Errorf("GroupScales %v", s)
	}
}

// TestGroupMaskIdentityAtInit: with every scale 1 the model computes exactly
// what the same model without a group mask computes, in inference and in
// training mode (same dropout draws).
func TestGroupMaskIdentityAtInit(t *testing.T) {
	for _, arch := range Archs {
		plainCfg := tinyConfig(arch)
		plain, _ := New(plainCfg, rand.New(rand.NewSource(4)))
		grouped, err := New(groupedConfig(arch), rand.New(rand.NewSource(4)))
		if err != nil {
			t.Fatal(err)
		}
		if len(grouped.Params()) != len(plain.Params())+1 {
			t.Fatalf("%s: %d params with a group mask, %d without", arch, len(grouped.Params()), len(plain.Params()))
		}
		seqs := randomSeqs(rand.New(rand.NewSource(5)), 12, 9, plainCfg.VocabSize)
		a, b := plain.Predict(seqs), grouped.Predict(seqs)
		for i := range a {
			if !slices.Equal(a[i], b[i]) {
				t.Errorf("%s: sequence %d: %v without, %v with the group mask", arch, i, a[i], b[i])
			}
		}
		batch := MakeBatch(seqs, nil, plain.Enc.MinLen())
		var logits [2][]float32
		for k, m := range []*Classifier{plain, grouped} {
			tp := ag.NewTape()
			tp.Train = true
			tp.Rng = rand.New(rand.NewSource(6))
			logits[k] = m.Forward(tp, batch).Data()
		}
		if !slices.Equal(logits[0], logits[1]) {
			t.Errorf("%s: training-mode logits differ", arch)
		}
	}
}

// TestGroupMaskScalesEmbeddings: a model with group scales s computes what
// the plain model computes with each word's embedding row multiplied by
// its group's scale.
func TestGroupMaskScalesEmbeddings(t *testing.T) {
	for _, arch := range Archs {
		cfg := groupedConfig(arch)
		grouped, _ := New(cfg, rand.New(rand.NewSource(4)))
		randomizeGroupScales(grouped, rand.New(rand.NewSource(8)))
		plain, _ := New(tinyConfig(arch), rand.New(rand.NewSource(4)))
		d := cfg.EmbedDim
		s := grouped.GroupScales()
		for id, g := range cfg.Groups {
			for k := 0; k < d; k++ {
				plain.Emb.W.Value.Data[id*d+k] *= s[g]
			}
		}
		seqs := randomSeqs(rand.New(rand.NewSource(5)), 12, 9, cfg.VocabSize)
		a, b := plain.Predict(seqs), grouped.Predict(seqs)
		moved := false
		ref, _ := New(tinyConfig(arch), rand.New(rand.NewSource(4)))
		c := ref.Predict(seqs)
		for i := range a {
			if dd := tensor.MaxAbsDiff(a[i], b[i]); dd > 1e-6 {
				t.Errorf("%s: sequence %d differs by %g from scaled embeddings", arch, i, dd)
			}
			moved = moved || tensor.MaxAbsDiff(b[i], c[i]) > 1e-4
		}
		if !moved {
			t.Errorf("%s: scales other than 1 leave the outputs unchanged", arch)
		}
		want := make([]float32, 0)
		ids := []int32{0, 1, 2, 3, 4, 5, 19}
		for _, id := range ids {
			want = append(want, s[cfg.Groups[id]])
		}
		if got := grouped.InputScale(ids); !slices.Equal(got, want) {
			t.Errorf("%s: InputScale %v, want %v", arch, got, want)
		}
	}
}

// TestGroupMaskGradCheck: the group scales get the gradient of finite
// differences through a small CNN (and a BiLSTM), without dropout, with the
// FLAT word mask off and on (GradCheck's tapes are inference tapes: φ-scaled).
func TestGroupMaskGradCheck(t *testing.T) {
	for _, tc := range []struct {
		arch string
		mask bool
	}{{"cnn", false}, {"bilstm", false}, {"cnn", true}} {
		cfg := groupedConfig(tc.arch)
		cfg.Dropout = 0
		cfg.Mask, cfg.MaskHidden = tc.mask, 5
		r := rand.New(rand.NewSource(2))
		m, err := New(cfg, r)
		if err != nil {
			t.Fatal(err)
		}
		randomizeGroupScales(m, r)
		b := MakeBatch(randomSeqs(r, 3, 7, cfg.VocabSize), []int{0, 1, 2}, m.Enc.MinLen())
		gm := m.GroupMask
		scales := gm.Scale.Value.Clone()
		err = ag.GradCheck([]*tensor.Tensor{scales}, 1e-2, 3e-2, func(tp *ag.Tape, in []*ag.Var) *ag.Var {
			m.GroupMask = &GroupMask{Groups: gm.Groups, Scale: &ag.Param{Name: "group_mask", Var: in[0]}}
			defer func() { m.GroupMask = gm }()
			return tp.CrossEntropy(m.Forward(tp, b), b.Labels, nil)
		})
		if err != nil {
			t.Errorf("%s mask=%v: %v", tc.arch, tc.mask, err)
		}
		// The real parameter: every group present in the batch gets a
		// non-zero gradient, the extra group (padding only) none.
		for _, p := range m.Params() {
			p.ZeroGrad()
		}
		tp := ag.NewTape()
		tp.Backward(tp.CrossEntropy(m.Forward(tp, b), b.Labels, nil))
		g := gm.Scale.Grad
		if g == nil {
			t.Fatalf("%s: the group mask got no gradient", tc.arch)
		}
		for k := 0; k < 3; k++ {
			if g.Data[k] == 0 {
				t.Errorf("%s: group %d has zero gradient %v", tc.arch, k, g.Data)
			}
		}
		if g.Data[3] != 0 {
			t.Errorf("%s: the padding group got gradient %v through the zero padding row", tc.arch, g.Data[3])
		}
	}
}

// TestGroupMaskSavedWithTensors: the scales are saved and loaded by name.
func TestGroupMaskSavedWithTensors(t *testing.T) {
	m, _ := New(groupedConfig("cnn"), rand.New(rand.NewSource(1)))
	randomizeGroupScales(m, rand.New(rand.NewSource(2)))
	ts := m.Tensors()
	if ts["group_mask"] == nil {
		t.Fatal("group_mask not among the tensors")
	}
	m2, _ := New(m.Cfg, rand.New(rand.NewSource(1)))
	if err := m2.LoadTensors(ts); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.GroupScales(), m2.GroupScales()) {
		t.Errorf("scales %v reloaded as %v", m.GroupScales(), m2.GroupScales())
	}
	plainCfg := m.Cfg
	plainCfg.Groups, plainCfg.NumGroups = nil, 0
	plain, _ := New(plainCfg, rand.New(rand.NewSource(1)))
	if err := plain.LoadTensors(ts); err == nil {
		t.Error("a model without group mask loaded group-mask weights")
	}
}
