package explain

import (
	"math"
	"math/rand"
	"testing"

	"github.com/textarmor/textarmor/nn"
)

// groupedModel is tinyModel with a group mask (groups id mod 3, <pad> and
// <unk> in group 3) whose scales are moved away from 1.
func groupedModel(t *testing.T, arch string, mask bool) *nn.Classifier {
	cfg := nn.DefaultConfig(arch)
	cfg.VocabSize, cfg.EmbedDim, cfg.NumClasses = 30, 8, 3
	cfg.Filters, cfg.Hidden, cfg.Mask, cfg.MaskHidden = 6, 6, mask, 10
	cfg.Groups, cfg.NumGroups = make([]int32, cfg.VocabSize), 4
	for id := range cfg.Groups {
		cfg.Groups[id] = 3
		if id >= 2 {
			cfg.Groups[id] = int32(id % 3)
		}
	}
	m, err := nn.New(cfg, rand.New(rand.NewSource(3)))
	if err != nil {
		t.Fatal(err)
	}
	copy(m.GroupMask.Scale.Value.Data, []float32{0.3, 1.7, 0.8, 1.2})
	return m
}

// TestGroupMaskExplainers: with a group mask the CNN fast paths equal the
// tape paths, and IG stays complete (the scores sum to F(x) − F(0)), which
// fails if either path leaves the group scales out.
func TestGroupMaskExplainers(t *testing.T) {
	defer func() { noFast = false }()
	ids := []int32{4, 9, 2, 17, 5, 23, 8, 11}
	for _, mask := range []bool{false, true} {
		m := groupedModel(t, "cnn", mask)
		noFast = false
		fast, err := IG(m, ids, nil, 300)
		if err != nil {
			t.Fatal(err)
		}
		noFast = true
		slow, err := IG(m, ids, nil, 300)
		if err != nil {
			t.Fatal(err)
		}
		if d := maxDiff(fast, slow); d > 1e-5 {
			t.Errorf("mask=%v: IG fast and tape differ by %g", mask, d)
		}
		fx, f0 := Probs(m, ids), baselineProbs(m, ids)
		for c := range fast {
			var sum float64
			for _, v := range fast[c] {
				sum += v
			}
			if want := float64(fx[c] - f0[c]); math.Abs(sum-want) > 0.01 {
				t.Errorf("mask=%v class %d: IG sums to %.4f, F(x) − F(0) = %.4f", mask, c, sum, want)
			}
		}
		opt := LIMEOptions{Samples: 300, Seed: 4}
		noFast = false
		lf, err := LIME(m, ids, []int{0, 2}, opt)
		if err != nil {
			t.Fatal(err)
		}
		noFast = true
		ls, err := LIME(m, ids, []int{0, 2}, opt)
		if err != nil {
			t.Fatal(err)
		}
		if d := maxDiff(lf, ls); d > 1e-4 {
			t.Errorf("mask=%v: LIME fast and Predict differ by %g", mask, d)
		}
	}
	// The BiLSTM (tape only) path is complete too.
	m := groupedModel(t, "bilstm", false)
	ig, err := IG(m, ids, nil, 50)
	if err != nil {
		t.Fatal(err)
	}
	fx, f0 := Probs(m, ids), baselineProbs(m, ids)
	for c := range ig {
		var sum float64
		for _, v := range ig[c] {
			sum += v
		}
		if want := float64(fx[c] - f0[c]); math.Abs(sum-want) > 0.01 {
			t.Errorf("bilstm class %d: IG sums to %.4f, F(x) − F(0) = %.4f", c, sum, want)
		}
	}
}
