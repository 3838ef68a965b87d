package metrics

import (
	"math"
	"slices"
)

// Several trained instances of one configuration (seeds) measured on the
// same examples have two sources of noise: which examples were drawn, and
// which instance training produced. The estimators here give a mean over
// the instances with a standard error holding both; with one instance
// they are the single-run SEs of stats.go.

// Across is the spread of one value over several trained instances.
type Across struct {
	N    int     `json:"seeds"`
	Mean float64 `json:"mean"`
	SD   float64 `json:"sd"` // sample SD (n − 1); 0 below two values
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
}

// AcrossSeeds summarises values, one per instance (zero Across for none).
func AcrossSeeds(values []float64) Across {
	if len(values) == 0 {
		return Across{}
	}
	a := Across{N: len(values), Min: slices.Min(values), Max: slices.Max(values)}
	var sum, sumSq float64
	for _, v := range values {
		sum += v
		sumSq += v * v
	}
	a.Mean = sum / float64(len(values))
	a.SD = math.Sqrt(MeanVariance(sum, sumSq, len(values)) * float64(len(values)))
	return a
}

// SeedEstimate is a mean over S instances with its standard error.
type SeedEstimate struct {
	Mean    float64   `json:"mean"`
	SE      float64   `json:"se"`
	PerSeed []float64 `json:"per_seed"` // each instance's estimate
	// N is the number of examples every instance was measured on (0 when
	// the estimate was combined from per-instance SEs: FromSeeds).
	N int `json:"n,omitempty"`
	// SeedSE is SD_s(d_s)/√S, the seed-to-seed part alone (0 for S = 1);
	// ExampleSE the SE over examples of the per-example values averaged
	// over the instances (Crossed), or the mean within-instance SE
	// (FromSeeds).
	SeedSE    float64 `json:"seed_se"`
	ExampleSE float64 `json:"example_se"`
}

// Seeds is the number of instances.
func (e SeedEstimate) Seeds() int { return len(e.PerSeed) }

// Spread is the per-instance estimates' spread.
func (e SeedEstimate) Spread() Across { return AcrossSeeds(e.PerSeed) }

// Crossed estimates the mean of x[s][i], the value of example i under
// instance s, every instance measured on the same n examples (a paired
// difference per example, or a per-example outcome). The design is
// crossed: x = μ + a_s + b_i + c_si with a seed effect, an example effect
// and their interaction. With d_s the instance means, D_i the example
// means over instances and MS_int the interaction's mean square,
//
//	SE² = Var_s(d_s)/S + Var_i(D_i)/n − MS_int/(S·n),
//
// the unbiased estimate of Var(mean) under that model (the ANOVA
// estimator), kept at least as large as each of its first two terms, which
// estimate parts of it. The example term does not shrink with S: every
// instance sees the same examples, so their sampling error is shared.
// With S = 1 it is Var_i(x_i)/n, the paired SE of stats.go. x must be
// rectangular with at least one value; an empty x gives a zero estimate.
func Crossed(x [][]float64) SeedEstimate {
	S := len(x)
	if S == 0 || len(x[0]) == 0 {
		return SeedEstimate{}
	}
	n := len(x[0])
	e := SeedEstimate{PerSeed: make([]float64, S), N: n}
	D := make([]float64, n)
	var grand float64
	for s, row := range x {
		for i, v := range row {
			e.PerSeed[s] += v
			D[i] += v
		}
		grand += e.PerSeed[s]
		e.PerSeed[s] /= float64(n)
	}
	grand /= float64(S * n)
	for i := range D {
		D[i] /= float64(S)
	}
	var ssSeed, ssEx, ssInt float64
	for _, d := range e.PerSeed {
		ssSeed += (d - grand) * (d - grand)
	}
	for _, d := range D {
		ssEx += (d - grand) * (d - grand)
	}
	for s, row := range x {
		for i, v := range row {
			r := v - e.PerSeed[s] - D[i] + grand
			ssInt += r * r
		}
	}
	e.Mean = grand
	var seedVar, exVar, intMS float64 // Var_s(d_s)/S, Var_i(D_i)/n, MS_int
	if S > 1 {
		seedVar = ssSeed / float64(S-1) / float64(S)
	}
	if n > 1 {
		exVar = ssEx / float64(n-1) / float64(n)
	}
	if S > 1 && n > 1 {
		intMS = ssInt / float64((S-1)*(n-1))
	}
	v := max(seedVar+exVar-intMS/float64(S*n), seedVar, exVar)
	e.SE, e.SeedSE, e.ExampleSE = math.Sqrt(v), math.Sqrt(seedVar), math.Sqrt(exVar)
	return e
}

// FromSeeds combines per-instance estimates est[s], each with its own
// standard error se[s], when the per-example values are not at hand (a
// clean accuracy, a mean agreement): SE² = Var_s(est)/S + mean_s(se²).
// The within-instance part is not divided by S, as the instances share
// their examples: conservative, since it also counts the interaction of
// instance and example, which averaging over instances does shrink. With
// one instance it is se[0].
func FromSeeds(est, se []float64) SeedEstimate {
	S := len(est)
	if S == 0 {
		return SeedEstimate{}
	}
	e := SeedEstimate{PerSeed: slices.Clone(est)}
	a := AcrossSeeds(est)
	e.Mean = a.Mean
	var within float64
	for _, s := range se {
		within += s * s
	}
	within /= float64(len(se))
	e.SeedSE = a.SD / math.Sqrt(float64(S))
	e.ExampleSE = math.Sqrt(within)
	e.SE = math.Sqrt(e.SeedSE*e.SeedSE + within)
	return e
}

// PairedSeeds is Crossed on the per-example differences kept(a) − kept(b)
// of pairs of cells, one pair per instance (maps from example index to
// whether the example kept its label), over the indices every map holds;
// ok is false when no index is held by all (or there are no pairs).
func PairedSeeds(a, b []map[int]bool) (SeedEstimate, bool) {
	if len(a) == 0 || len(a) != len(b) {
		return SeedEstimate{}, false
	}
	idx := common(append(slices.Clone(a), b...))
	if len(idx) == 0 {
		return SeedEstimate{}, false
	}
	x := make([][]float64, len(a))
	for s := range a {
		x[s] = make([]float64, len(idx))
		for k, i := range idx {
			x[s][k] = b2f(a[s][i]) - b2f(b[s][i])
		}
	}
	return Crossed(x), true
}

// KeptSeeds is Crossed on kept − target (target a proportion, e.g. 0.7)
// over the indices every map holds: an after-attack accuracy against a
// fixed bound.
func KeptSeeds(kept []map[int]bool, target float64) (SeedEstimate, bool) {
	idx := common(kept)
	if len(idx) == 0 {
		return SeedEstimate{}, false
	}
	x := make([][]float64, len(kept))
	for s := range kept {
		x[s] = make([]float64, len(idx))
		for k, i := range idx {
			x[s][k] = b2f(kept[s][i]) - target
		}
	}
	return Crossed(x), true
}

// common is the sorted indices every map holds (none for no maps).
func common(ms []map[int]bool) []int {
	if len(ms) == 0 {
		return nil
	}
	var idx []int
outer:
	for i := range ms[0] {
		for _, m := range ms[1:] {
			if _, ok := m[i]; !ok {
				continue outer
			}
		}
		idx = append(idx, i)
	}
	slices.Sort(idx)
	return idx
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
