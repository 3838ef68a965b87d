package metrics

import "math"

// Standard errors in textarmor follow one convention. A proportion p over
// n examples has SE √(p(1−p)/n). A mean of n values has SE s/√n with s the
// sample standard deviation (denominator n − 1); a paired difference is
// the mean of per-example differences, so its SE is that of a mean. A
// claimed ordering holds only when it is beyond two such SEs. Over several
// trained instances (seeds) the SE also holds the seed-to-seed variance:
// seeds.go.

// BinomialSE is the standard error √(p(1−p)/n) of a proportion p over n
// examples (0 for n = 0).
func BinomialSE(p float64, n int) float64 {
	if n == 0 {
		return 0
	}
	return math.Sqrt(p * (1 - p) / float64(n))
}

// MeanVariance is the squared standard error of the mean of n values,
// from their sum and sum of squares: the sample variance over n (0 for
// n < 2). Squared SEs of independent means add.
func MeanVariance(sum, sumSq float64, n int) float64 {
	if n < 2 {
		return 0
	}
	f := float64(n)
	return max((sumSq-sum*sum/f)/(f-1), 0) / f
}

// Paired compares two cells (attack results on the same test examples) on
// the examples both hold.
type Paired struct {
	N    int     // examples both cells hold
	A, B float64 // each cell's accuracy on them
	Diff float64 // A − B, the mean per-example difference
	SE   float64 // its standard error: pairing cancels how hard each example is
}

// PairedAccuracy compares a and b, maps from example index to whether the
// example kept its label, over the indices both hold.
func PairedAccuracy(a, b map[int]bool) Paired {
	var p Paired
	var sum, sumSq float64
	for i, ka := range a {
		kb, ok := b[i]
		if !ok {
			continue
		}
		p.N++
		d := 0.0
		if ka {
			p.A++
			d++
		}
		if kb {
			p.B++
			d--
		}
		sum += d
		sumSq += d * d
	}
	if p.N == 0 {
		return p
	}
	n := float64(p.N)
	p.A, p.B = p.A/n, p.B/n
	p.Diff = p.A - p.B
	p.SE = math.Sqrt(MeanVariance(sum, sumSq, p.N))
	return p
}

// PairedOnFirst is PairedAccuracy over the examples 0..n-1 of maps that may
// hold more; ok is false unless both hold every one of them.
func PairedOnFirst(a, b map[int]bool, n int) (p Paired, ok bool) {
	if n == 0 {
		return p, false
	}
	first := func(kept map[int]bool) map[int]bool {
		m := make(map[int]bool, n)
		for i, k := range kept {
			if i >= 0 && i < n {
				m[i] = k
			}
		}
		return m
	}
	p = PairedAccuracy(first(a), first(b))
	return p, p.N == n
}

// Quantile is the q-quantile of sorted (non-empty, ascending) with linear
// interpolation between order statistics: NumPy's default, R's type 7,
// what matplotlib's box plots draw.
func Quantile(sorted []float64, q float64) float64 {
	h := q * float64(len(sorted)-1)
	lo := int(math.Floor(h))
	if lo >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}

// FiveNumbers is a box plot's summary.
type FiveNumbers struct {
	Min    float64 `json:"min"`
	Q1     float64 `json:"q1"`
	Median float64 `json:"median"`
	Q3     float64 `json:"q3"`
	Max    float64 `json:"max"`
}

// Summarize5 is the five-number summary of sorted (non-empty, ascending).
func Summarize5(sorted []float64) FiveNumbers {
	return FiveNumbers{sorted[0], Quantile(sorted, 0.25), Quantile(sorted, 0.5), Quantile(sorted, 0.75), sorted[len(sorted)-1]}
}
