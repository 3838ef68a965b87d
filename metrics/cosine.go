package metrics

import "math"

// Cosine is the cosine similarity of a and b (equal lengths), accumulated
// in float64; ok is false when either vector is zero, where it is
// undefined.
func Cosine(a, b []float32) (cos float64, ok bool) {
	var ab, aa, bb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		ab += x * y
		aa += x * x
		bb += y * y
	}
	if aa == 0 || bb == 0 {
		return 0, false
	}
	return ab / math.Sqrt(aa*bb), true
}
