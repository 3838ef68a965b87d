package metrics

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The O(n·d) sums equal the pairwise definitions computed pair by pair.
func TestSpreadMatchesPairs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var vs [][]float32
	for range 9 {
		v := make([]float32, 5)
		for j := range v {
			v[j] = float32(rng.NormFloat64() + 0.7)
		}
		vs = append(vs, v)
	}
	vs = append(vs, make([]float32, 5)) // a zero vector: cosine 0 with every other
	var s Spread
	for _, v := range vs {
		s.Add(v)
	}
	var cos, dist float64
	pairs := 0
	for i := range vs {
		for j := i + 1; j < len(vs); j++ {
			c, _ := Cosine(vs[i], vs[j])
			var d float64
			for k := range vs[i] {
				d += (float64(vs[i][k]) - float64(vs[j][k])) * (float64(vs[i][k]) - float64(vs[j][k]))
			}
			cos, dist, pairs = cos+c, dist+d, pairs+1
		}
	}
	if s.N() != 10 || math.Abs(s.PairCosine()-cos/float64(pairs)) > 1e-9 || math.Abs(s.PairDistance()-math.Sqrt(dist/float64(pairs))) > 1e-9 {
		t.Errorf("spread %g / %g, pairs %g / %g", s.PairCosine(), s.PairDistance(), cos/float64(pairs), math.Sqrt(dist/float64(pairs)))
	}
	// Identical vectors: cosine 1, distance 0.
	var same Spread
	for range 4 {
		same.Add([]float32{1, 2, 3})
	}
	if math.Abs(same.PairCosine()-1) > 1e-12 || same.PairDistance() > 1e-6 {
		t.Errorf("identical vectors: %g / %g", same.PairCosine(), same.PairDistance())
	}
	var one Spread
	one.Add([]float32{1})
	if !math.IsNaN(one.PairCosine()) || !math.IsNaN(one.PairDistance()) {
		t.Error("one vector has no pairs")
	}
}
