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

import (
	"fmt"

	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/text"
)

// Graph returns, for every vocabulary id, its neighbours in the
// symmetrised synonym relation of src restricted to the vocabulary (ids
// ascending, no self loops). Padding and unknown have none.
func Graph(src lexicon.Source, vocab *text.Vocab) [][]int32 {
	n := vocab.Len()
	sets := make([]map[int32]bool, n)
	add := func(a, b int32) {
		if sets[a] == nil {
			sets[a] = map[int32]bool{}
		}
		sets[a][b] = true
	}
	for id := int32(2); id < int32(n); id++ {
		for _, s := range src.Synonyms(vocab.Word(id)) {
			j := vocab.ID(s)
			if j < 2 || j == id {
				continue
			}
			add(id, j)
			add(j, id)
		}
	}
	out := make([][]int32, n)
	for id, s := range sets {
		for j := range s {
			out[id] = append(out[id], j)
		}
		sortIDs(out[id])
	}
	return out
}

func sortIDs(a []int32) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

// Apply retrofits table (row-major [len(graph), dim]) in place: iters
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
