package metrics

import (
	"errors"
	"math"
	"testing"
)

func TestKendallTauB(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b []float64
		want float64
	}{
		{"identical", []float64{1, 2, 3, 4}, []float64{1, 2, 3, 4}, 1},
		{"reversed", []float64{1, 2, 3, 4}, []float64{-1, -2, -3, -4}, -1},
		// pairs: (0,1) c, (0,2) c, (0,3) c, (1,2) d, (1,3) c, (2,3) c → (5−1)/6
		{"one swap", []float64{1, 2, 3, 4}, []float64{1, 3, 2, 4}, 4.0 / 6},
		// a ties (0,1); b none. n0=6, n1=1, n2=0; pairs with a tie excluded:
		// (0,2) c (0,3) c (1,2) c (1,3) c (2,3) d → (4−1)/sqrt(5·6)
		{"tie in a", []float64{1, 1, 2, 3}, []float64{1, 2, 4, 3}, 3 / math.Sqrt(30)},
		// a ties (0,1), b ties (2,3) → n1=n2=1; (0,2) c (0,3) c (1,2) c (1,3) c → 4/5
		{"ties in both", []float64{1, 1, 2, 3}, []float64{1, 2, 3, 3}, 4.0 / 5},
		// both tie the same pair (0,1): counts in n1 and n2; others concordant → 2/2
		{"shared tie", []float64{1, 1, 2}, []float64{5, 5, 9}, 1},
	} {
		got, err := KendallTauB(tc.a, tc.b)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: τ_b = %g, want %g", tc.name, got, tc.want)
		}
	}
	if _, err := KendallTauB([]float64{1, 2}, []float64{1, 2, 3}); err == nil {
		t.Error("different lengths accepted")
	}
	if _, err := KendallTauB([]float64{1}, []float64{1}); err == nil {
		t.Error("one value accepted")
	}
	if _, err := KendallTauB([]float64{1, 1, 1}, []float64{1, 2, 3}); !errors.Is(err, ErrTauUndefined) {
		t.Errorf("constant vector: %v", err)
	}
}

func TestTopKIntersection(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b []float64
		k    int
		want float64
	}{
		{"identical", []float64{.1, .5, .3, .9, .2, .7}, []float64{.1, .5, .3, .9, .2, .7}, 5, 1},
		// top3(a) = {3,5,1}; top3(b) = {0,3,2} → 1/3
		{"one shared", []float64{.1, .5, .3, .9, .2, .7}, []float64{.9, .1, .5, .8, .2, .0}, 3, 1.0 / 3},
		// signed: negatives are not "large"
		{"signed", []float64{-5, 1, 2}, []float64{5, 1, 2}, 1, 0},
		// n < k → k = n → always 1
		{"short", []float64{3, 1}, []float64{1, 3}, 5, 1},
		// tie broken by lower position: top1(a) = {0}, top1(b) = {0}
		{"tie", []float64{1, 1, 0}, []float64{2, 0, 1}, 1, 1},
	} {
		got, err := TopKIntersection(tc.a, tc.b, tc.k)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: TI = %g, want %g", tc.name, got, tc.want)
		}
	}
	if _, err := TopKIntersection([]float64{1}, []float64{1, 2}, 1); err == nil {
		t.Error("different lengths accepted")
	}
	if _, err := TopKIntersection([]float64{1}, []float64{1}, 0); err == nil {
		t.Error("k = 0 accepted")
	}
}
