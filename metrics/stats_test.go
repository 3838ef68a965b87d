package metrics

import (
	"math"
	"testing"
)

func TestBinomialSE(t *testing.T) {
	if got := BinomialSE(0.25, 300); math.Abs(got-0.025) > 1e-12 {
		t.Fatalf("BinomialSE(0.25, 300) = %v, want 0.025", got)
	}
	if BinomialSE(0.5, 0) != 0 {
		t.Fatal("n = 0 must give 0")
	}
}

// TestPairedAccuracy: A keeps 3 of the 4 shared examples, B 2; the
// differences are 0, +1, +1, −1 (mean 0.25, sample variance 0.9167), so
// the paired SE is √(0.9167/4) = 0.4787. An index only one side holds is
// left out.
func TestPairedAccuracy(t *testing.T) {
	a := map[int]bool{0: true, 1: true, 2: true, 3: false, 9: true}
	b := map[int]bool{0: true, 1: false, 2: false, 3: true, 7: false}
	p := PairedAccuracy(a, b)
	if p.N != 4 || p.A != 0.75 || p.B != 0.5 || math.Abs(p.Diff-0.25) > 1e-12 {
		t.Fatalf("PairedAccuracy = %+v", p)
	}
	if want := math.Sqrt((1.0 + 1 + 1 - 0.25*0.25*4) / 3 / 4); math.Abs(p.SE-want) > 1e-12 {
		t.Fatalf("SE %v, want %v", p.SE, want)
	}
	if _, ok := PairedOnFirst(a, b, 5); ok {
		t.Fatal("PairedOnFirst over 5 examples neither map holds in full")
	}
	q, ok := PairedOnFirst(a, b, 4)
	if !ok || q != p {
		t.Fatalf("PairedOnFirst(4) = %+v, %v", q, ok)
	}
}

// TestMeanVariance: the values 1, 2, 3, 4 have sample variance 5/3, so the
// squared SE of their mean is 5/12.
func TestMeanVariance(t *testing.T) {
	if got := MeanVariance(10, 30, 4); math.Abs(got-5.0/12) > 1e-12 {
		t.Fatalf("MeanVariance = %v, want %v", got, 5.0/12)
	}
	if MeanVariance(1, 1, 1) != 0 {
		t.Fatal("one value has no variance")
	}
}

// TestQuantile matches NumPy's default (linear) interpolation:
// np.quantile([1, 2, 4, 8], [0, .25, .5, .75, 1]) = 1, 1.75, 3, 5, 8.
func TestQuantile(t *testing.T) {
	got := Summarize5([]float64{1, 2, 4, 8})
	want := FiveNumbers{1, 1.75, 3, 5, 8}
	if got != want {
		t.Fatalf("Summarize5 = %+v, want %+v", got, want)
	}
}
