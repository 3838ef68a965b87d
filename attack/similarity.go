package attack

import (
	"fmt"
	"math"
	"slices"

	"github.com/textarmor/textarmor/metrics"
	"github.com/textarmor/textarmor/text"
)

// MeanVectorEncoder is the documented stand-in for the Universal Sentence
// Encoder: a text is the mean of its words' vectors and two texts are
// compared by cosine similarity. It is NOT USE: it ignores word order and
// its scale differs (synonym swaps in counter-fitted space keep it close to
// 1), so thresholds calibrated for USE (TextFooler's 0.8408, BAE's 0.9363)
// do not carry over. Every recipe that uses it says so in its Deviations.
type MeanVectorEncoder struct{ Table *text.Vectors }

// Name implements SentenceEncoder.
func (e MeanVectorEncoder) Name() string { return "mean-word-vector-cosine(" + e.Table.Name + ")" }

// Similarity implements SentenceEncoder. Two texts with no known word are
// identical (1) when their words are equal and unrelated (0) otherwise.
func (e MeanVectorEncoder) Similarity(a, b []string) float64 {
	ma, na := e.mean(a)
	mb, nb := e.mean(b)
	if na == 0 || nb == 0 {
		if slices.Equal(a, b) {
			return 1
		}
		return 0
	}
	return cosine64(ma, mb)
}

func (e MeanVectorEncoder) mean(words []string) ([]float64, int) {
	m := make([]float64, e.Table.Dim)
	n := 0
	for _, w := range words {
		r := e.Table.Lookup(w)
		if r == nil {
			continue
		}
		n++
		for j, v := range r {
			m[j] += float64(v)
		}
	}
	return m, n
}

func cosine64(a, b []float64) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += a[i] * b[i]
		na += a[i] * a[i]
		nb += b[i] * b[i]
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// CosineDistance is a WordDistance of 1 − cos(a, b) over a vector table, so
// WordEmbeddingDistance{Max: 0.5} keeps substitutes with cosine ≥ 0.5
// (TextFooler's min_cos_sim on counter-fitted vectors). Words without a
// vector are reported as not ok (rejected).
type CosineDistance struct{ Table *text.Vectors }

// Name implements WordDistance.
func (d CosineDistance) Name() string { return "1-cosine(" + d.Table.Name + ")" }

// Distance implements WordDistance.
func (d CosineDistance) Distance(a, b string) (float64, bool) {
	if a == b {
		return 0, true
	}
	ra, rb := d.Table.Lookup(a), d.Table.Lookup(b)
	if ra == nil || rb == nil {
		return 0, false
	}
	cos, ok := metrics.Cosine(ra, rb)
	if !ok {
		return 0, false
	}
	return 1 - cos, true
}

// isUSE reports whether an encoder is the real Universal Sentence Encoder
// (no implementation ships; a future one must be named "use...").
func isUSE(e SentenceEncoder) bool {
	n := e.Name()
	return len(n) >= 3 && n[:3] == "use"
}

func useDeviation(e SentenceEncoder, what string) string {
	return fmt.Sprintf("USE replaced by %s for %s (Universal Sentence Encoder unavailable; not calibrated to USE's scale)", e.Name(), what)
}
