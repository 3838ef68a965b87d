// Package retrofit pulls the vectors of synonyms together (Faruqui et al.
// 2015, "Retrofitting Word Vectors to Semantic Lexicons"): each word's
// vector becomes the average of its original vector and its neighbours'
// current vectors, iterated. Words without neighbours keep their vectors.
//
// textarmor uses it to give embeddings the synonym structure of
// counter-fitted vectors (which cannot be downloaded here): a frozen table
// in which a word and its substitutes lie close, as FLAT's word masks and
// the attacks' embedding checks assume.
package retrofit

import "fmt"

// Apply retrofits table (row-major [len(graph), dim]) in place, graph
// being each row's neighbours (lexicon.VocabGraph): iters
// Jacobi sweeps of q_i ← (α·q̂_i + Σ_j q_j/deg_i) / (α + 1), the paper's
// update with β_ij = 1/deg_i and α_i = alpha (1 in the paper), where q̂ is
// the original table. Sweeps read the previous sweep's vectors, so the
// result does not depend on the order of the words.
func Apply(table []float32, dim int, graph [][]int32, iters int, alpha float64) error {
	if dim < 1 || len(table) != len(graph)*dim {
		return fmt.Errorf("retrofit: table of %d values is not %d rows of %d", len(table), len(graph), dim)
	}
	if iters < 0 || alpha <= 0 {
		return fmt.Errorf("retrofit: iterations %d must be ≥ 0 and alpha %g > 0", iters, alpha)
	}
	orig := append([]float32(nil), table...)
	prev := make([]float32, len(table))
	acc := make([]float64, dim)
	for it := 0; it < iters; it++ {
		copy(prev, table)
		for i, nb := range graph {
			if len(nb) == 0 {
				continue
			}
			for d := range acc {
				acc[d] = 0
			}
			for _, j := range nb {
				row := prev[int(j)*dim : int(j+1)*dim]
				for d, v := range row {
					acc[d] += float64(v)
				}
			}
			inv := 1 / float64(len(nb))
			q := orig[i*dim : (i+1)*dim]
			out := table[i*dim : (i+1)*dim]
			for d := range out {
				out[d] = float32((alpha*float64(q[d]) + acc[d]*inv) / (alpha + 1))
			}
		}
	}
	return nil
}
