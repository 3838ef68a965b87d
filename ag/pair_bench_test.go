package ag

import (
	"math/rand"
	"testing"

	"github.com/textarmor/textarmor/tensor"
)

// BenchmarkLSTMPair times a BiLSTM's two directions, forward and backward,
// as two layers one after the other and as a pair run at once, for the
// plain and the interval LSTM (batch 64, ragged lengths up to 250, hidden
// 128).
func BenchmarkLSTMPair(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	const batch, steps, d, h = 64, 250, 64, 128
	lengths := make([]int, batch)
	for i := range lengths {
		lengths[i] = 50 + r.Intn(steps-50)
	}
	x := randT(r, batch, steps, d)
	lo := [2]*tensor.Tensor{randT(r, batch, steps, 4*h), randT(r, batch, steps, 4*h)}
	var hi [2]*tensor.Tensor
	var lw [2]LSTMWeights
	for i := range lw {
		hi[i] = lo[i].Clone()
		for j := range hi[i].Data {
			hi[i].Data[j] += 0.1
		}
		lw[i] = LSTMWeights{Wx: NewParam("wx", scaled(randT(r, d, 4*h), 0.1)).Var, Wh: NewParam("wh", scaled(randT(r, h, 4*h), 0.1)).Var,
			Bias: NewParam("b", randT(r, 4*h)).Var, Reverse: i == 1}
	}
	for _, kind := range []string{"lstm", "interval"} {
		for _, pair := range []bool{false, true} {
			name := kind + "/separate"
			if pair {
				name = kind + "/pair"
			}
			b.Run(name, func(b *testing.B) {
				for b.Loop() {
					tp := NewTape()
					var o [2]*Var
					switch {
					case kind == "lstm" && pair:
						o[0], o[1] = tp.LSTMPair(tp.Const(x), lw[0], lw[1], lengths)
					case kind == "lstm":
						for i := range o {
							o[i] = tp.LSTM(tp.Const(x), lw[i].Wx, lw[i].Wh, lw[i].Bias, lengths, lw[i].Reverse)
						}
					case pair:
						o[0], o[1] = tp.IntervalLSTMPair(tp.Const(lo[0]), tp.Const(hi[0]), lw[0].Wh, tp.Const(lo[1]), tp.Const(hi[1]), lw[1].Wh, lengths)
					default:
						for i := range o {
							o[i] = tp.IntervalLSTM(tp.Const(lo[i]), tp.Const(hi[i]), lw[i].Wh, lengths, lw[i].Reverse)
						}
					}
					tp.Backward(tp.Add(tp.Sum(o[0]), tp.Sum(o[1])))
				}
			})
		}
	}
}
