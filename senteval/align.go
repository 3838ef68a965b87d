package senteval

import (
	"errors"
	"fmt"
	"math"

	"github.com/textarmor/textarmor/dataset"
	"gonum.org/v1/gonum/floats"
)

// PositiveScore is the gold score from which an STS-B pair counts as a
// positive pair for the alignment (SimCSE's and RobustEmbed's 4.0).
const PositiveScore = 4.0

// AlignUniformResult holds the alignment and uniformity of L2-normalised
// embeddings f (Wang & Isola 2020); lower is better for both.
type AlignUniformResult struct {
	// Align is ℓ_align = mean over the positive pairs (x, x⁺) of
	// ‖f(x) − f(x⁺)‖², over the Positives pairs whose gold score is at
	// least PositiveScore.
	Align     float64 `json:"align"`
	Positives int     `json:"positives"`
	// Uniform is ℓ_uniform = log of the mean over all pairs {x, y} of two
	// distinct sentences of exp(−2‖f(x) − f(y)‖²), exactly (no sampling),
	// over the Sentences distinct sentences of the pairs.
	Uniform   float64 `json:"uniform"`
	Sentences int     `json:"sentences"`
}

// AlignUniform measures the alignment over the pairs scored at least
// PositiveScore and the uniformity over every distinct sentence of pairs
// (both sides), each sentence embedded once and normalised to unit length
// (a zero vector stays zero).
//
// The uniformity takes the n(n−1)/2 unordered pairs of distinct sentences,
// not i.i.d. draws that may pick the same sentence twice (as Wang &
// Isola's torch.pdist code); n is 2,552 for STS-B test (3.3 million
// pairs).
func AlignUniform(e Embedder, pairs []dataset.SimPair) (AlignUniformResult, error) {
	texts, ia, ib := pairTexts(pairs)
	if len(texts) < 2 {
		return AlignUniformResult{}, fmt.Errorf("senteval: %d distinct sentences: need at least 2", len(texts))
	}
	vecs32, err := embedChecked(e, texts)
	if err != nil {
		return AlignUniformResult{}, fmt.Errorf("senteval: %w", err)
	}
	vecs := make([][]float64, len(vecs32))
	for i, v := range vecs32 {
		u := make([]float64, len(v))
		for j, x := range v {
			u[j] = float64(x)
		}
		if n := floats.Norm(u, 2); n > 0 {
			floats.Scale(1/n, u)
		}
		vecs[i] = u
	}
	var r AlignUniformResult
	for k, p := range pairs {
		if p.Score >= PositiveScore {
			d := floats.Distance(vecs[ia[k]], vecs[ib[k]], 2)
			r.Align += d * d
			r.Positives++
		}
	}
	if r.Positives == 0 {
		return AlignUniformResult{}, errors.New("senteval: no pair scored at least 4.0: no positive pairs for the alignment")
	}
	r.Align /= float64(r.Positives)
	r.Uniform, r.Sentences = uniformity(vecs), len(vecs)
	return r, nil
}

// uniformity is log mean_{i<j} exp(−2‖v_i − v_j‖²), with ‖v_i − v_j‖² =
// ‖v_i‖² + ‖v_j‖² − 2 v_i·v_j (one dot product a pair). Every term is at
// most e^0 = 1 (a rounding-negative distance is clamped to 0), so the sum
// needs no log-sum-exp shift.
func uniformity(vecs [][]float64) float64 {
	sq := make([]float64, len(vecs))
	for i, v := range vecs {
		sq[i] = floats.Dot(v, v)
	}
	var sum float64
	for i, vi := range vecs {
		for j := i + 1; j < len(vecs); j++ {
			d := max(0, sq[i]+sq[j]-2*floats.Dot(vi, vecs[j]))
			sum += math.Exp(-2 * d)
		}
	}
	n := float64(len(vecs))
	return math.Log(sum / (n * (n - 1) / 2))
}
