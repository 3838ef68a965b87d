package metrics

import "math"

// Spread summarises how far apart a set of vectors lie, in O(n·d): the
// mean cosine and the root-mean-square Euclidean distance over all pairs
// of different vectors. A distance between a sentence's clean and
// perturbed vectors means something only against it: an encoder that
// maps every sentence to nearly the same vector moves nothing far.
type Spread struct {
	n            int
	sumUnit, sum []float64
	sumSq        float64
	zero         int
}

// Add counts one vector; every vector must have the first one's length.
func (s *Spread) Add(v []float32) {
	if s.sum == nil {
		s.sum, s.sumUnit = make([]float64, len(v)), make([]float64, len(v))
	}
	var sq float64
	for i, x := range v {
		s.sum[i] += float64(x)
		sq += float64(x) * float64(x)
	}
	s.n, s.sumSq = s.n+1, s.sumSq+sq
	if sq == 0 {
		s.zero++ // a zero vector has no direction: it counts as cosine 0
		return
	}
	inv := 1 / math.Sqrt(sq)
	for i, x := range v {
		s.sumUnit[i] += float64(x) * inv
	}
}

// N is the number of vectors added.
func (s *Spread) N() int { return s.n }

// PairCosine is the mean cosine between the vectors of the n(n−1)/2
// pairs: ‖Σ ûᵢ‖² = Σᵢ‖ûᵢ‖² + 2 Σ_{i<j} cos(uᵢ, uⱼ). NaN below two vectors.
func (s *Spread) PairCosine() float64 {
	if s.n < 2 {
		return math.NaN()
	}
	var sq float64
	for _, x := range s.sumUnit {
		sq += x * x
	}
	units := float64(s.n - s.zero)
	return (sq - units) / float64(s.n*(s.n-1))
}

// PairDistance is the root mean square of ‖uᵢ − uⱼ‖ over the pairs:
// Σ_{i<j}‖uᵢ − uⱼ‖² = n Σ‖uᵢ‖² − ‖Σ uᵢ‖². NaN below two vectors.
func (s *Spread) PairDistance() float64 {
	if s.n < 2 {
		return math.NaN()
	}
	var sq float64
	for _, x := range s.sum {
		sq += x * x
	}
	n := float64(s.n)
	return math.Sqrt(max(0, (n*s.sumSq-sq)/(n*(n-1)/2)))
}
