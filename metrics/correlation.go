package metrics

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
)

// ErrPearsonUndefined is returned by Pearson when one vector is constant,
// so the correlation's denominator is zero.
var ErrPearsonUndefined = errors.New("pearson r undefined: a vector is constant")

// Pearson is the Pearson product-moment correlation r of x and y with its
// two-sided p-value for the null hypothesis r = 0, from Student's t with
// n − 2 degrees of freedom, t = r·sqrt((n−2)/(1−r²)); this is what
// scipy.stats.pearsonr reports (FLAT spec §9.3, Table 9). The vectors must
// have the same length n ≥ 3; a constant vector gives ErrPearsonUndefined.
// |r| = 1 gives p = 0.
func Pearson(x, y []float64) (r, p float64, err error) {
	if len(x) != len(y) {
		return 0, 0, fmt.Errorf("pearson: vectors have different lengths %d and %d", len(x), len(y))
	}
	n := len(x)
	if n < 3 {
		return 0, 0, fmt.Errorf("pearson: need at least 3 values for a p-value, have %d", n)
	}
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= float64(n)
	my /= float64(n)
	var sxy, sxx, syy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return 0, 0, ErrPearsonUndefined
	}
	r = sxy / math.Sqrt(sxx*syy)
	r = max(-1, min(1, r)) // rounding can push |r| a hair past 1
	if math.Abs(r) == 1 {
		return r, 0, nil
	}
	df := float64(n - 2)
	t := math.Abs(r) * math.Sqrt(df/((1-r)*(1+r)))
	p = 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(t)
	return r, min(p, 1), nil
}

// Spearman is Spearman's rank correlation ρ of x and y: Pearson's r of
// their ranks, tied values sharing their average rank, with the p-value
// Pearson gives for those ranks (both as scipy.stats.spearmanr computes
// them). Used for SimLex-999 scores of word vectors.
func Spearman(x, y []float64) (rho, p float64, err error) {
	if len(x) != len(y) {
		return 0, 0, fmt.Errorf("spearman: vectors have different lengths %d and %d", len(x), len(y))
	}
	return Pearson(ranks(x), ranks(y))
}

// ranks returns the 1-based rank of each value, ties averaged.
func ranks(x []float64) []float64 {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return x[idx[a]] < x[idx[b]] })
	r := make([]float64, len(x))
	for lo := 0; lo < len(idx); {
		hi := lo + 1
		for hi < len(idx) && x[idx[hi]] == x[idx[lo]] {
			hi++
		}
		avg := float64(lo+hi+1) / 2 // mean of ranks lo+1 … hi
		for _, i := range idx[lo:hi] {
			r[i] = avg
		}
		lo = hi
	}
	return r
}
