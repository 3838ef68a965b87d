package metrics

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

// ErrTauUndefined is returned by KendallTauB when one vector has every pair
// tied (a constant vector), so τ-b's denominator is zero.
var ErrTauUndefined = errors.New("kendall tau-b undefined: a vector is constant")

func sameLength(a, b []float64) error {
	if len(a) != len(b) {
		return fmt.Errorf("attribution vectors have different lengths %d and %d", len(a), len(b))
	}
	return nil
}

// KendallTauB is Kendall's rank correlation with the tie correction:
// τ_b = (n_c − n_d) / sqrt((n_0 − n_1)(n_0 − n_2)), n_0 = n(n−1)/2, n_c and
// n_d the concordant and discordant pairs, n_1 and n_2 the pairs tied in a
// and in b (FLAT spec §9.2). Vectors must have the same length ≥ 2; a
// constant vector gives ErrTauUndefined.
func KendallTauB(a, b []float64) (float64, error) {
	if err := sameLength(a, b); err != nil {
		return 0, err
	}
	n := len(a)
	if n < 2 {
		return 0, fmt.Errorf("kendall tau-b needs at least 2 values, have %d", n)
	}
	var nc, nd, t1, t2 int
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			da, db := a[i]-a[j], b[i]-b[j]
			switch {
			case da == 0 && db == 0:
				t1++
				t2++
			case da == 0:
				t1++
			case db == 0:
				t2++
			case (da > 0) == (db > 0):
				nc++
			default:
				nd++
			}
		}
	}
	n0 := n * (n - 1) / 2
	den := math.Sqrt(float64(n0-t1) * float64(n0-t2))
	if den == 0 {
		return 0, ErrTauUndefined
	}
	return float64(nc-nd) / den, nil
}

// TopK returns the positions of the k largest (signed) scores, ties broken
// by the lower position; k is capped at len(a).
func TopK(a []float64, k int) []int {
	idx := make([]int, len(a))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(x, y int) bool { return a[idx[x]] > a[idx[y]] })
	return idx[:min(max(k, 0), len(a))]
}

// TopKIntersection is |Top_k(a) ∩ Top_k(b)| / k over positions (a word and
// its substitute at the same position count as the same feature); when the
// vectors are shorter than k, k becomes their length (FLAT spec §9.2).
func TopKIntersection(a, b []float64, k int) (float64, error) {
	if err := sameLength(a, b); err != nil {
		return 0, err
	}
	if k < 1 {
		return 0, fmt.Errorf("top-k intersection: k = %d must be positive", k)
	}
	if len(a) == 0 {
		return 0, errors.New("top-k intersection of empty vectors")
	}
	k = min(k, len(a))
	in := map[int]bool{}
	for _, i := range TopK(a, k) {
		in[i] = true
	}
	common := 0
	for _, i := range TopK(b, k) {
		if in[i] {
			common++
		}
	}
	return float64(common) / float64(k), nil
}
