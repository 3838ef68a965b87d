package explain

import (
	"math"
	"math/rand"
	"testing"
)

// TestCNNFastPathsMatchTape checks the CNN closed forms against the generic
// tape/Predict paths: with and without a word mask, texts shorter than the
// widest window, and padding rows that are not zero.
func TestCNNFastPathsMatchTape(t *testing.T) {
	defer func() { noFast = false }()
	for _, mask := range []bool{false, true} {
		m := tinyModel(t, "cnn", mask)
		// A trained model's padding row need not stay zero.
		pad := m.Emb.W.Value.Data[:m.Emb.Dim()]
		r := rand.New(rand.NewSource(9))
		for i := range pad {
			pad[i] = float32(r.NormFloat64() * 0.1)
		}
		for _, ids := range [][]int32{{4, 9, 2, 17, 5, 23, 8, 11, 4}, {7, 3}, {12, 1, 5, 6}} {
			for _, steps := range []int{1, 50} {
				noFast = false
				fast, err := IG(m, ids, nil, steps)
				if err != nil {
					t.Fatal(err)
				}
				noFast = true
				slow, err := IG(m, ids, nil, steps)
				if err != nil {
					t.Fatal(err)
				}
				if d := maxDiff(fast, slow); d > 1e-5 {
					t.Errorf("mask=%v ids=%v steps=%d: IG fast and tape differ by %g\nfast %v\ntape %v", mask, ids, steps, d, fast, slow)
				}
			}
			opt := LIMEOptions{Samples: 300, Seed: 4}
			noFast = false
			fast, err := LIME(m, ids, []int{0, 2}, opt)
			if err != nil {
				t.Fatal(err)
			}
			noFast = true
			slow, err := LIME(m, ids, []int{0, 2}, opt)
			if err != nil {
				t.Fatal(err)
			}
			if d := maxDiff(fast, slow); d > 1e-4 {
				t.Errorf("mask=%v ids=%v: LIME fast and Predict differ by %g", mask, ids, d)
			}
		}
	}
}

func maxDiff(a, b [][]float64) float64 {
	var d float64
	for i := range a {
		for j := range a[i] {
			d = math.Max(d, math.Abs(a[i][j]-b[i][j]))
		}
	}
	return d
}
