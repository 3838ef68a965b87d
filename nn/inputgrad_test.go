package nn

import (
	"math"
	"math/rand"
	"testing"
)

// InputGradL1 against central finite differences of the cross-entropy in
// each embedding coordinate (each position holds a distinct word, so moving
// its embedding row moves that position only).
func TestInputGradL1FiniteDifferences(t *testing.T) {
	for _, arch := range Archs {
		cfg := tinyConfig(arch)
		cfg.Dropout = 0
		if arch != "cnn" {
			cfg.Pool = "mean" // smooth: max-over-time kinks spoil finite differences
		}
		m, err := New(cfg, rand.New(rand.NewSource(3)))
		if err != nil {
			t.Fatal(err)
		}
		ids := []int32{4, 9, 2, 15, 7, 11}
		const label = 1
		ce := func() float64 {
			p := m.Predict([][]int32{ids})[0]
			return -math.Log(float64(p[label]))
		}
		got := m.InputGradL1(ids, label)
		d := m.Emb.Dim()
		w := m.Emb.W.Value.Data
		const h = 1e-2
		for i, id := range ids {
			var l1 float64
			for k := 0; k < d; k++ {
				v := w[int(id)*d+k]
				w[int(id)*d+k] = v + h
				up := ce()
				w[int(id)*d+k] = v - h
				down := ce()
				w[int(id)*d+k] = v
				l1 += math.Abs((up - down) / (2 * h))
			}
			if math.Abs(l1-got[i]) > 2e-2*math.Max(1e-3, l1)+1e-4 {
				t.Errorf("%s: position %d: L1 gradient %.6f, finite differences %.6f", arch, i, got[i], l1)
			}
		}
		// The model is only read: no parameter gradient is left behind.
		for _, p := range m.Params() {
			if p.Grad == nil {
				continue
			}
			for _, g := range p.Grad.Data {
				if g != 0 {
					t.Fatalf("%s: %s has a gradient after InputGradL1", arch, p.Name)
				}
			}
		}
	}
}
