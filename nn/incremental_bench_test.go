package nn

import (
	"fmt"
	"math/rand"
	"testing"
)

// benchSwaps is an attack step at IMDB length: 64 one-word substitutions at
// random positions of one sequence of length l.
func benchSwaps(l int) ([]int32, []Swap, [][]int32) {
	r := rand.New(rand.NewSource(3))
	base := make([]int32, l)
	for i := range base {
		base[i] = int32(2 + r.Intn(14998))
	}
	swaps := make([]Swap, 64)
	seqs := make([][]int32, len(swaps))
	for i := range swaps {
		swaps[i] = Swap{Pos: r.Intn(l), ID: int32(2 + r.Intn(14998))}
		seqs[i] = ApplySwaps(base, swaps[i:i+1])
	}
	return base, swaps, seqs
}

// BenchmarkPredictSwaps compares scoring 64 candidates with a full Predict,
// with an Incremental whose base is already set (the attack's steady state:
// ids projected on first use), and including SetBase.
func BenchmarkPredictSwaps(b *testing.B) {
	for _, arch := range []string{"cnn", "bilstm", "lstm", "flat-lstm"} {
		for _, l := range []int{250, 500} {
			m := benchModel(b, arch)
			base, swaps, seqs := benchSwaps(l)
			b.Run(fmt.Sprintf("%s/L%d/Predict", arch, l), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					m.Predict(seqs)
				}
			})
			b.Run(fmt.Sprintf("%s/L%d/Incremental", arch, l), func(b *testing.B) {
				inc := m.NewIncremental()
				inc.SetBase(base)
				inc.PredictSwaps(swaps)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					inc.PredictSwaps(swaps)
				}
			})
			b.Run(fmt.Sprintf("%s/L%d/SetBase+Swaps", arch, l), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					m.PredictSwaps(base, swaps)
				}
			})
		}
	}
}

// BenchmarkPredictFarEdits scores 64 candidates that each differ from the
// base in k scattered positions (a GA population late in the search) with a
// full Predict and with the CNN's incremental path, which takes them at any
// distance.
func BenchmarkPredictFarEdits(b *testing.B) {
	for _, arch := range []string{"cnn", "bilstm"} {
		benchFarEdits(b, arch)
	}
}

func benchFarEdits(b *testing.B, arch string) {
	m := benchModel(b, arch)
	const l = 250
	base, _, _ := benchSwaps(l)
	r := rand.New(rand.NewSource(4))
	for _, k := range []int{4, 16, 40} {
		edits := make([][]Swap, 64)
		seqs := make([][]int32, len(edits))
		for i := range edits {
			for j := 0; j < k; j++ {
				edits[i] = append(edits[i], Swap{Pos: r.Intn(l), ID: int32(2 + r.Intn(14998))})
			}
			seqs[i] = ApplySwaps(base, edits[i])
		}
		b.Run(fmt.Sprintf("%s/L%d/k%d/Predict", arch, l, k), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				m.Predict(seqs)
			}
		})
		b.Run(fmt.Sprintf("%s/L%d/k%d/Incremental", arch, l, k), func(b *testing.B) {
			inc := m.NewIncremental()
			inc.SetBase(base)
			inc.PredictEdits(edits)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				inc.PredictEdits(edits)
			}
		})
	}
}
