package ag

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/textarmor/textarmor/tensor"
)

// raggedLengths are 64 lengths of 20 to 512 tokens, one at 512: an IMDB
// batch under the FTML preprocessing, about half padding.
func raggedLengths() []int {
	r := rand.New(rand.NewSource(3))
	lengths := make([]int, 64)
	for i := range lengths {
		lengths[i] = 20 + r.Intn(493)
	}
	lengths[0] = 512
	return lengths
}

// BenchmarkIntervalLSTMRagged is one direction of IBP's BiLSTM (hidden 128)
// on a ragged batch: forward and backward.
func BenchmarkIntervalLSTMRagged(b *testing.B) {
	const h, steps = 128, 512
	lengths := raggedLengths()
	r := rand.New(rand.NewSource(1))
	lo, width := randT(r, len(lengths), steps, 4*h), positive(r, len(lengths), steps, 4*h)
	wh := scaled(randT(r, h, 4*h), 0.1)
	tp := NewTape()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tp.Reset()
		pl := tp.Leaf(lo)
		out := tp.IntervalLSTM(pl, tp.Add(pl, tp.Const(width)), tp.Leaf(wh), lengths, false)
		tp.Backward(tp.Sum(out))
	}
}

// BenchmarkLSTMProjectedRagged is the same for the plain LSTM from input
// projections (the BiLSTM's path in training).
func BenchmarkLSTMProjectedRagged(b *testing.B) {
	const h, steps = 128, 512
	lengths := raggedLengths()
	r := rand.New(rand.NewSource(1))
	gx := randT(r, len(lengths), steps, 4*h)
	wh, bias := scaled(randT(r, h, 4*h), 0.1), tensor.New(4*h)
	tp := NewTape()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tp.Reset()
		out := tp.LSTMProjected(tp.Leaf(gx), tp.Leaf(wh), tp.Leaf(bias), lengths, false)
		tp.Backward(tp.Sum(out))
	}
}

// BenchmarkLSTMStep is one cell step of a row (the gates, the state and
// tanh(c), with the input projection and bias added), hidden 128 (the FTML
// BiLSTM) and 300 (FLAT's LSTM): the fused kernels (avx512 where the CPU
// has it, else avx2 or the scalar path) and "passes", the cell before the
// fused kernels (the additions, then vector passes over the whole row, one
// per kind of work).
func BenchmarkLSTMStep(b *testing.B) {
	defer setAVX512(setAVX512(true))
	for _, h := range []int{128, 300} {
		for _, kernel := range []string{"avx512", "avx2", "passes"} {
			b.Run(fmt.Sprintf("%d/%s", h, kernel), func(b *testing.B) {
				setAVX512(kernel == "avx512")
				r := rand.New(rand.NewSource(1))
				gx, rec, bias := randT(r, 4*h).Data, randT(r, 4*h).Data, randT(r, 4*h).Data
				z, c, hs, tmp := make([]float32, 4*h), make([]float32, h), make([]float32, h), make([]float32, 4*h)
				b.ResetTimer()
				for b.Loop() {
					copy(z, rec)
					if kernel == "passes" {
						tensor.Axpy(1, gx, z)
						tensor.Axpy(1, bias, z)
						lstmStepPasses(z, c, hs, tmp)
					} else {
						LSTMStepAdd(z, gx, bias, c, hs, tmp)
					}
					for k := range c {
						c[k] *= 0.5 // keep the state in the gates' working range
					}
				}
			})
		}
	}
}
