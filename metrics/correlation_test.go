package metrics

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// TestPearson checks r and the two-sided p-value against values worked out
// by hand (n = 3, 4: Student t with 1 and 2 degrees of freedom has a closed
// form CDF) and against a 40-digit reference computed once with mpmath,
// r from the definition and p = I_{1−r²}((n−2)/2, 1/2), the regularised
// incomplete beta that scipy.stats.pearsonr also evaluates.
func TestPearson(t *testing.T) {
	strongX, strongY := make([]float64, 60), make([]float64, 60)
	for v := range strongX {
		strongX[v] = float64(v)
		strongY[v] = float64(v) + float64((v*7)%11-5)*1.5
	}
	for _, tc := range []struct {
		name  string
		x, y  []float64
		r, p  float64
		relTo float64 // relative tolerance of p
	}{
		// dx = dy up to one swap: r = 1/2; ν = 1 (Cauchy):
		// t = 1/√3, p = 1 − (2/π)·atan(1/√3) = 1 − (2/π)(π/6) = 2/3.
		{"n=3 by hand", []float64{1, 2, 3}, []float64{1, 3, 2}, 0.5, 2.0 / 3, 1e-12},
		// sxy = 4, sxx = syy = 5: r = 0.8; ν = 2: t² = 32/9,
		// p = 1 − t/√(2+t²) = 1 − √(32/50) = 0.2.
		{"n=4 by hand", []float64{1, 2, 3, 4}, []float64{1, 3, 2, 4}, 0.8, 0.2, 1e-12},
		{"n=5", []float64{1, 2, 3, 4, 5}, []float64{2, 1, 4, 3, 5}, 0.8, 0.10408803866182786, 1e-10},
		{"negative", []float64{0.5, 1.5, 2.25, 3, 4.75, 5, 6.5, 7, 8.25, 9},
			[]float64{9.1, 7.4, 8.8, 6.0, 5.9, 6.3, 3.2, 4.4, 2.0, 2.7},
			-0.94160554605027356, 4.7391674071585454e-5, 1e-9},
		{"weak", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12},
			[]float64{3, -1, 4, 1, -5, 9, 2, -6, 5, 3, -5, 8},
			0.056085232739348933, 0.86255498635567933, 1e-9},
		// A tiny p must not underflow to 0 through 1 − CDF.
		{"strong n=60", strongX, strongY, 0.96455010630397134, 2.9988349464961317e-35, 1e-6},
		// |r| = 1 (up to rounding): p = 0 (up to rounding), no NaN from t = ∞.
		{"perfect", []float64{1, 2, 3, 4}, []float64{-2, 0, 2, 4}, 1, 0, 0},
		{"perfect negative", []float64{1, 2, 3, 4}, []float64{3, 2, 1, 0}, -1, 0, 0},
	} {
		r, p, err := Pearson(tc.x, tc.y)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if math.Abs(r-tc.r) > 1e-12 {
			t.Errorf("%s: r = %.17g, want %.17g", tc.name, r, tc.r)
		}
		if math.Abs(p-tc.p) > tc.relTo*tc.p || (tc.p == 0 && p > 1e-12) {
			t.Errorf("%s: p = %.17g, want %.17g", tc.name, p, tc.p)
		}
		// Symmetric in its arguments.
		r2, p2, _ := Pearson(tc.y, tc.x)
		if math.Abs(r2-r) > 1e-15 || math.Abs(p2-p) > 1e-15*math.Max(1, p) {
			t.Errorf("%s: not symmetric: (%g, %g) vs (%g, %g)", tc.name, r, p, r2, p2)
		}
	}
	// Invariant under affine maps with a positive scale.
	x, y := []float64{1, 2, 3, 4, 5}, []float64{2, 1, 4, 3, 5}
	sy := make([]float64, len(y))
	for i, v := range y {
		sy[i] = 1000 + 3*v
	}
	r, p, _ := Pearson(x, sy)
	if math.Abs(r-0.8) > 1e-12 || math.Abs(p-0.10408803866182786) > 1e-10 {
		t.Errorf("scaled: r %g p %g", r, p)
	}
}

func TestPearsonErrors(t *testing.T) {
	if _, _, err := Pearson([]float64{1, 2, 3}, []float64{1, 2}); err == nil || !strings.Contains(err.Error(), "different lengths") {
		t.Errorf("different lengths: %v", err)
	}
	if _, _, err := Pearson([]float64{1, 2}, []float64{2, 1}); err == nil || !strings.Contains(err.Error(), "at least 3") {
		t.Errorf("n = 2: %v", err)
	}
	if _, _, err := Pearson(nil, nil); err == nil {
		t.Error("empty vectors accepted")
	}
	if _, _, err := Pearson([]float64{1, 2, 3}, []float64{4, 4, 4}); !errors.Is(err, ErrPearsonUndefined) {
		t.Errorf("constant y: %v", err)
	}
	if _, _, err := Pearson([]float64{0, 0, 0, 0}, []float64{1, 2, 3, 4}); !errors.Is(err, ErrPearsonUndefined) {
		t.Errorf("constant x: %v", err)
	}
}

func TestSpearman(t *testing.T) {
	// Ranks with ties averaged: x → [1, 2.5, 2.5, 4, 5], y → [1, 2, 3.5, 5, 3.5];
	// their Pearson r, worked out by hand, is 0.7631578947368421 (29/38).
	rho, _, err := Spearman([]float64{1, 2, 2, 4, 5}, []float64{5, 6, 7, 8, 7})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(rho-29.0/38) > 1e-12 {
		t.Errorf("rho = %v, want 29/38", rho)
	}
	// A monotone but non-linear relation has ρ = 1.
	if rho, _, _ := Spearman([]float64{1, 2, 3, 4}, []float64{1, 8, 27, 1000}); rho != 1 {
		t.Errorf("monotone: rho = %v, want 1", rho)
	}
	if _, _, err := Spearman([]float64{1, 2, 3}, []float64{1, 2}); err == nil {
		t.Error("different lengths: no error")
	}
	got := ranks([]float64{10, 30, 20, 30})
	want := []float64{1, 3.5, 2, 3.5}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("ranks = %v, want %v", got, want)
		}
	}
}
