package dataset

import (
	"math"
	"math/rand"
	"sort"
)

// StratifiedSplit holds out round(frac·len(ex)) examples, drawn per label so
// that every label keeps its share; b is the held-out part, a the rest. It is
// StratifiedSplitN with that count. frac is clamped to [0, 1].
//
//	rest, test := StratifiedSplit(all, 0.1, 1)
func StratifiedSplit(ex []Example, frac float64, seed int64) (a, b []Example) {
	if math.IsNaN(frac) || frac < 0 {
		frac = 0
	}
	if frac > 1 {
		frac = 1
	}
	return StratifiedSplitN(ex, int(math.Round(frac*float64(len(ex)))), seed)
}

// StratifiedSplitN holds out exactly n examples (clamped to [0, len(ex)]),
// stratified by label; b is the held-out part, a the rest.
//
// The recipe, which is part of every stored split and must not change:
// label l with c_l examples gets floor(n·c_l/N) held-out slots, and the
// slots still missing go one each to the labels with the largest remainders
// (n·c_l mod N; ties to the smaller label). Then, for labels in increasing
// order, one math/rand source seeded with seed draws rng.Perm(c_l) and the
// examples at the first slots of that permutation (indices in file order
// within the label) are held out. Both outputs keep the input order.
func StratifiedSplitN(ex []Example, n int, seed int64) (a, b []Example) {
	N := len(ex)
	n = max(0, min(n, N))
	byLabel := map[int][]int{}
	for i, e := range ex {
		byLabel[e.Label] = append(byLabel[e.Label], i)
	}
	labels := make([]int, 0, len(byLabel))
	for l := range byLabel {
		labels = append(labels, l)
	}
	sort.Ints(labels)
	quota := make(map[int]int, len(labels))
	rem := make(map[int]int64, len(labels))
	left := n
	for _, l := range labels {
		p := int64(n) * int64(len(byLabel[l]))
		quota[l] = int(p / int64(N))
		rem[l] = p % int64(N)
		left -= quota[l]
	}
	byRem := append([]int(nil), labels...)
	sort.SliceStable(byRem, func(i, j int) bool { return rem[byRem[i]] > rem[byRem[j]] })
	for i := 0; i < left; i++ {
		quota[byRem[i]]++
	}
	held := make([]bool, N)
	rng := rand.New(rand.NewSource(seed))
	for _, l := range labels {
		idx := byLabel[l]
		perm := rng.Perm(len(idx))
		for k := 0; k < quota[l]; k++ {
			held[idx[perm[k]]] = true
		}
	}
	a = make([]Example, 0, N-n)
	b = make([]Example, 0, n)
	for i, e := range ex {
		if held[i] {
			b = append(b, e)
		} else {
			a = append(a, e)
		}
	}
	return a, b
}

// SeededOrder is the first n of a permutation of 0..size−1 seeded by
// seed (all size of them when n is 0 or at least size): a seeded sample of
// a split's indices.
func SeededOrder(size, n int, seed int64) []int {
	perm := rand.New(rand.NewSource(seed)).Perm(size)
	if n > 0 && n < len(perm) {
		perm = perm[:n]
	}
	return perm
}

// SeededSubset returns the examples of ex at SeededOrder(len(ex), n, seed).
func SeededSubset(ex []Example, n int, seed int64) []Example {
	perm := SeededOrder(len(ex), n, seed)
	out := make([]Example, len(perm))
	for i, j := range perm {
		out[i] = ex[j]
	}
	return out
}
