package metrics

import (
	"math"
	"math/rand"
	"testing"
)

func TestAcrossSeeds(t *testing.T) {
	a := AcrossSeeds([]float64{2, 4, 9})
	if a.N != 3 || a.Mean != 5 || a.Min != 2 || a.Max != 9 || math.Abs(a.SD-math.Sqrt(13)) > 1e-12 {
		t.Errorf("AcrossSeeds = %+v, want mean 5, SD √13, 2–9", a)
	}
	if one := AcrossSeeds([]float64{7}); one.SD != 0 || one.Mean != 7 {
		t.Errorf("one value: %+v", one)
	}
	if (AcrossSeeds(nil) != Across{}) {
		t.Error("no values: want the zero Across")
	}
}

// By hand: no interaction, so SE² = Var_s(d_s)/S + Var_i(D_i)/n.
func TestCrossedByHand(t *testing.T) {
	e := Crossed([][]float64{{1, 2}, {3, 4}})
	if e.Mean != 2.5 || math.Abs(e.SE-math.Sqrt(1.25)) > 1e-12 || e.SeedSE != 1 || e.ExampleSE != 0.5 || e.Seeds() != 2 || e.N != 2 {
		t.Errorf("Crossed = %+v, want mean 2.5, SE √1.25, seed SE 1, example SE 0.5", e)
	}
	if (Crossed(nil).SE != 0) || Crossed([][]float64{{}}).Seeds() != 0 {
		t.Error("empty input: want a zero estimate")
	}
}

// With one instance, Crossed on the per-example differences is the paired
// SE of PairedAccuracy, and PairedSeeds is PairedAccuracy.
func TestCrossedOneSeedIsPaired(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	a, b := map[int]bool{}, map[int]bool{}
	for i := range 200 {
		a[i], b[i] = rng.Float64() < 0.7, rng.Float64() < 0.5
	}
	b[500] = true // held by one map only: left out
	p := PairedAccuracy(a, b)
	e, ok := PairedSeeds([]map[int]bool{a}, []map[int]bool{b})
	if !ok || math.Abs(e.Mean-p.Diff) > 1e-12 || math.Abs(e.SE-p.SE) > 1e-12 || e.N != 200 || e.SeedSE != 0 {
		t.Errorf("PairedSeeds = %+v, PairedAccuracy = %+v", e, p)
	}
	if _, ok := PairedSeeds([]map[int]bool{{1: true}}, []map[int]bool{{2: true}}); ok {
		t.Error("no common example: want ok false")
	}
	k, ok := KeptSeeds([]map[int]bool{a}, 0.7)
	if want := p.A - 0.7; !ok || math.Abs(k.Mean-want) > 1e-12 {
		t.Errorf("KeptSeeds mean %g, want %g", k.Mean, want)
	}
}

// On data drawn from the crossed model, the SE² averages to the true
// variance of the mean, σa²/S + σb²/n + σc²/(S·n), and the estimates'
// own spread matches it; the estimator that divides the example part by S
// (independent examples per instance) falls far short.
func TestCrossedCoversBothSources(t *testing.T) {
	const S, n, reps = 3, 60, 2000
	const sa, sb, sc = 0.05, 0.4, 0.3
	want := sa*sa/S + sb*sb/n + sc*sc/(S*n)
	rng := rand.New(rand.NewSource(1))
	var sumSE2, sumM, sumM2, sumNaive float64
	x := make([][]float64, S)
	for s := range x {
		x[s] = make([]float64, n)
	}
	for range reps {
		b := make([]float64, n)
		for i := range b {
			b[i] = sb * rng.NormFloat64()
		}
		var within float64
		for s := range S {
			a := sa * rng.NormFloat64()
			var sum, sumSq float64
			for i := range n {
				x[s][i] = 1 + a + b[i] + sc*rng.NormFloat64()
				sum += x[s][i]
				sumSq += x[s][i] * x[s][i]
			}
			within += MeanVariance(sum, sumSq, n)
		}
		e := Crossed(x)
		sumSE2 += e.SE * e.SE
		sumM += e.Mean
		sumM2 += e.Mean * e.Mean
		sumNaive += e.SeedSE*e.SeedSE + within/S/S
	}
	meanSE2 := sumSE2 / reps
	empirical := sumM2/reps - (sumM/reps)*(sumM/reps)
	if math.Abs(meanSE2/want-1) > 0.05 {
		t.Errorf("mean SE² %.3g, true variance %.3g", meanSE2, want)
	}
	if math.Abs(empirical/want-1) > 0.1 {
		t.Errorf("empirical variance of the mean %.3g, true %.3g", empirical, want)
	}
	if naive := sumNaive / reps; naive > 0.75*want {
		t.Errorf("independent-examples estimate %.3g should understate %.3g", naive, want)
	}
}

func TestFromSeeds(t *testing.T) {
	one := FromSeeds([]float64{0.3}, []float64{0.02})
	if one.Mean != 0.3 || one.SE != 0.02 {
		t.Errorf("one instance: %+v, want its own SE", one)
	}
	e := FromSeeds([]float64{1, 3}, []float64{0.3, 0.4})
	// Var_s = 2, /S = 1; mean within² = 0.125.
	if e.Mean != 2 || math.Abs(e.SE-math.Sqrt(1.125)) > 1e-12 {
		t.Errorf("FromSeeds = %+v, want mean 2, SE √1.125", e)
	}
	if FromSeeds(nil, nil).Seeds() != 0 {
		t.Error("no instances: want a zero estimate")
	}
}
