package ag

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/textarmor/textarmor/tensor"
)

func randT(r *rand.Rand, shape ...int) *tensor.Tensor {
	x := tensor.New(shape...)
	for i := range x.Data {
		x.Data[i] = float32(r.NormFloat64())
	}
	return x
}

// positive returns a tensor with values away from 0 (for Log, Sqrt, Div).
func positive(r *rand.Rand, shape ...int) *tensor.Tensor {
	x := tensor.New(shape...)
	for i := range x.Data {
		x.Data[i] = 0.5 + r.Float32()
	}
	return x
}

// awayFromZero avoids kinks of ReLU/Abs where finite differences lie.
func awayFromZero(r *rand.Rand, shape ...int) *tensor.Tensor {
	x := randT(r, shape...)
	for i, v := range x.Data {
		if v > -0.05 && v < 0.05 {
			x.Data[i] = 0.3
		}
	}
	return x
}

func TestGradients(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	lengths := []int{5, 3, 1}
	cases := []struct {
		name string
		in   []*tensor.Tensor
		f    func(t *Tape, v []*Var) *Var
	}{
		{"add-same", []*tensor.Tensor{randT(r, 3, 4), randT(r, 3, 4)}, func(t *Tape, v []*Var) *Var { return t.Add(v[0], v[1]) }},
		{"add-bias-broadcast", []*tensor.Tensor{randT(r, 2, 3, 4), randT(r, 4)}, func(t *Tape, v []*Var) *Var { return t.Add(v[0], v[1]) }},
		{"sub-general-broadcast", []*tensor.Tensor{randT(r, 2, 1, 4), randT(r, 3, 1)}, func(t *Tape, v []*Var) *Var { return t.Sub(v[0], v[1]) }},
		{"mul-broadcast", []*tensor.Tensor{randT(r, 2, 3, 4), randT(r, 2, 1, 4)}, func(t *Tape, v []*Var) *Var { return t.Mul(v[0], v[1]) }},
		{"div", []*tensor.Tensor{randT(r, 3, 4), positive(r, 3, 1)}, func(t *Tape, v []*Var) *Var { return t.Div(v[0], v[1]) }},
		// binary's direct loops: same shapes, and b a suffix of a's shape.
		{"sub-same", []*tensor.Tensor{randT(r, 3, 4), randT(r, 3, 4)}, func(t *Tape, v []*Var) *Var { return t.Sub(v[0], v[1]) }},
		{"mul-same", []*tensor.Tensor{randT(r, 3, 4), randT(r, 3, 4)}, func(t *Tape, v []*Var) *Var { return t.Mul(v[0], v[1]) }},
		{"div-same", []*tensor.Tensor{randT(r, 3, 4), positive(r, 3, 4)}, func(t *Tape, v []*Var) *Var { return t.Div(v[0], v[1]) }},
		{"mul-self", []*tensor.Tensor{randT(r, 3, 4)}, func(t *Tape, v []*Var) *Var { return t.Mul(v[0], v[0]) }},
		{"sub-suffix", []*tensor.Tensor{randT(r, 2, 3), randT(r, 3)}, func(t *Tape, v []*Var) *Var { return t.Sub(v[0], v[1]) }},
		{"mul-suffix", []*tensor.Tensor{randT(r, 2, 3, 4), randT(r, 3, 4)}, func(t *Tape, v []*Var) *Var { return t.Mul(v[0], v[1]) }},
		{"div-suffix", []*tensor.Tensor{randT(r, 2, 3, 4), positive(r, 4)}, func(t *Tape, v []*Var) *Var { return t.Div(v[0], v[1]) }},
		{"relu", []*tensor.Tensor{awayFromZero(r, 5, 6)}, func(t *Tape, v []*Var) *Var { return t.ReLU(v[0]) }},
		{"tanh", []*tensor.Tensor{randT(r, 5, 6)}, func(t *Tape, v []*Var) *Var { return t.Tanh(v[0]) }},
		{"sigmoid", []*tensor.Tensor{randT(r, 5, 6)}, func(t *Tape, v []*Var) *Var { return t.Sigmoid(v[0]) }},
		{"gelu", []*tensor.Tensor{randT(r, 5, 6)}, func(t *Tape, v []*Var) *Var { return t.GELU(v[0]) }},
		{"gelu-tanh", []*tensor.Tensor{randT(r, 5, 6)}, func(t *Tape, v []*Var) *Var { return t.GELUTanh(v[0]) }},
		{"self-attention", []*tensor.Tensor{randT(r, 3, 5, 6), randT(r, 3, 5, 6), randT(r, 3, 5, 6)},
			func(t *Tape, v []*Var) *Var { return t.SelfAttention(v[0], v[1], v[2], 2, lengths, 0) }},
		{"self-attention-packed", []*tensor.Tensor{randT(rand.New(rand.NewSource(12)), 3, 5, 18)}, // own stream: later cases keep their inputs
			func(t *Tape, v []*Var) *Var { return t.SelfAttentionPacked(v[0], 3, lengths, 0) }},
		{"self-attention-dropout", []*tensor.Tensor{randT(r, 2, 4, 6), randT(r, 2, 4, 6), randT(r, 2, 4, 6)},
			func(t *Tape, v []*Var) *Var {
				t.Train, t.Rng = true, rand.New(rand.NewSource(3)) // the same mask on every evaluation
				return t.SelfAttention(v[0], v[1], v[2], 3, []int{4, 2}, 0.3)
			}},
		{"exp", []*tensor.Tensor{randT(r, 4)}, func(t *Tape, v []*Var) *Var { return t.Exp(v[0]) }},
		{"log", []*tensor.Tensor{positive(r, 4)}, func(t *Tape, v []*Var) *Var { return t.Log(v[0]) }},
		{"sqrt", []*tensor.Tensor{positive(r, 4)}, func(t *Tape, v []*Var) *Var { return t.Sqrt(v[0]) }},
		{"square-abs", []*tensor.Tensor{awayFromZero(r, 4)}, func(t *Tape, v []*Var) *Var { return t.Square(t.Abs(v[0])) }},
		{"scale-addconst", []*tensor.Tensor{randT(r, 4)}, func(t *Tape, v []*Var) *Var { return t.AddConst(t.Scale(v[0], -2.5), 1) }},
		{"sum-mean", []*tensor.Tensor{randT(r, 3, 4)}, func(t *Tape, v []*Var) *Var { return t.Add(t.Sum(v[0]), t.Mean(t.Square(v[0]))) }},
		{"sumlast", []*tensor.Tensor{randT(r, 3, 4)}, func(t *Tape, v []*Var) *Var { return t.SumLast(v[0]) }},
		{"reshape", []*tensor.Tensor{randT(r, 3, 4)}, func(t *Tape, v []*Var) *Var { return t.Tanh(t.Reshape(v[0], 4, 3)) }},
		{"matmul", []*tensor.Tensor{randT(r, 2, 3, 4), randT(r, 4, 5)}, func(t *Tape, v []*Var) *Var { return t.MatMul(v[0], v[1], false) }},
		{"matmul-transW", []*tensor.Tensor{randT(r, 3, 4), randT(r, 5, 4)}, func(t *Tape, v []*Var) *Var { return t.MatMul(v[0], v[1], true) }},
		{"linear-t", []*tensor.Tensor{randT(rand.New(rand.NewSource(13)), 2, 3, 4), randT(rand.New(rand.NewSource(14)), 5, 4), randT(rand.New(rand.NewSource(15)), 5)}, // own streams: later cases keep their inputs
			func(t *Tape, v []*Var) *Var { return t.LinearT(v[0], v[1], v[2]) }},
		{"linear", []*tensor.Tensor{randT(r, 3, 4), randT(r, 4, 2), randT(r, 2)}, func(t *Tape, v []*Var) *Var { return t.Linear(v[0], v[1], v[2]) }},
		{"bmm", []*tensor.Tensor{randT(r, 2, 3, 4), randT(r, 2, 4, 5)}, func(t *Tape, v []*Var) *Var { return t.BatchMatMul(v[0], false, v[1], false) }},
		{"bmm-tA", []*tensor.Tensor{randT(r, 2, 4, 3), randT(r, 2, 4, 5)}, func(t *Tape, v []*Var) *Var { return t.BatchMatMul(v[0], true, v[1], false) }},
		{"bmm-tB", []*tensor.Tensor{randT(r, 2, 3, 4), randT(r, 2, 5, 4)}, func(t *Tape, v []*Var) *Var { return t.BatchMatMul(v[0], false, v[1], true) }},
		{"bmm-tAB", []*tensor.Tensor{randT(r, 2, 4, 3), randT(r, 2, 5, 4)}, func(t *Tape, v []*Var) *Var { return t.BatchMatMul(v[0], true, v[1], true) }},
		{"lookup", []*tensor.Tensor{randT(r, 6, 3)}, func(t *Tape, v []*Var) *Var { return t.Lookup(v[0], []int32{1, 4, 1, 0}) }},
		{"softmax", []*tensor.Tensor{randT(r, 3, 5)}, func(t *Tape, v []*Var) *Var { return t.Softmax(v[0]) }},
		{"logsoftmax", []*tensor.Tensor{randT(r, 3, 5)}, func(t *Tape, v []*Var) *Var { return t.LogSoftmax(v[0]) }},
		{"crossentropy", []*tensor.Tensor{randT(r, 4, 3)}, func(t *Tape, v []*Var) *Var { return t.CrossEntropy(v[0], []int{0, 2, 1, 2}, nil) }},
		{"crossentropy-weighted", []*tensor.Tensor{randT(r, 4, 3)}, func(t *Tape, v []*Var) *Var {
			return t.CrossEntropy(v[0], []int{0, 2, 1, 2}, []float32{1, 0.5, 2, 0})
		}},
		{"layernorm", []*tensor.Tensor{randT(r, 3, 6), randT(r, 6), randT(r, 6)}, func(t *Tape, v []*Var) *Var { return t.LayerNorm(v[0], v[1], v[2], 1e-5) }},
		{"concat-last", []*tensor.Tensor{randT(r, 2, 3, 2), randT(r, 2, 3, 4)}, func(t *Tape, v []*Var) *Var { return t.Concat(-1, v[0], v[1]) }},
		{"concat-mid", []*tensor.Tensor{randT(r, 2, 1, 2), randT(r, 2, 3, 2)}, func(t *Tape, v []*Var) *Var { return t.Concat(1, v[0], v[1]) }},
		{"slice", []*tensor.Tensor{randT(r, 2, 5, 3)}, func(t *Tape, v []*Var) *Var { return t.Slice(v[0], 1, 1, 4) }},
		{"gather", []*tensor.Tensor{randT(r, 4, 3)}, func(t *Tape, v []*Var) *Var { return t.Gather(v[0], []int{3, 0, 3}) }},
		{"norm-row", []*tensor.Tensor{randT(r, 3, 4)}, func(t *Tape, v []*Var) *Var { return t.Norm(v[0], 1, 1e-8) }},
		{"norm-seq", []*tensor.Tensor{randT(r, 2, 3, 4)}, func(t *Tape, v []*Var) *Var { return t.Norm(v[0], 1, 1e-8) }},
		{"conv1d", []*tensor.Tensor{randT(r, 2, 6, 3), randT(r, 3, 3*4), randT(r, 4)}, func(t *Tape, v []*Var) *Var { return t.Conv1D(v[0], v[1], v[2], 3) }},
		{"conv1d-w1", []*tensor.Tensor{randT(r, 2, 4, 3), randT(r, 3, 2), randT(r, 2)}, func(t *Tape, v []*Var) *Var { return t.Conv1D(v[0], v[1], v[2], 1) }},
		{"max-over-time", []*tensor.Tensor{randT(r, 3, 5, 4)}, func(t *Tape, v []*Var) *Var { return t.MaxOverTime(v[0], lengths) }},
		{"mean-over-time", []*tensor.Tensor{randT(r, 3, 5, 4)}, func(t *Tape, v []*Var) *Var { return t.MeanOverTime(v[0], lengths) }},
		{"mask-time", []*tensor.Tensor{randT(r, 3, 5, 2)}, func(t *Tape, v []*Var) *Var { return t.MaskTime(v[0], lengths) }},
		{"rowdist-l2", []*tensor.Tensor{randT(r, 5, 4)}, func(t *Tape, v []*Var) *Var {
			return t.RowDistances(v[0], []int32{0, 1, 4, 0}, []int32{2, 3, 0, 4}, 2, false, 1e-8)
		}},
		{"rowdist-sq", []*tensor.Tensor{randT(r, 5, 4)}, func(t *Tape, v []*Var) *Var {
			return t.RowDistances(v[0], []int32{0, 1, 4}, []int32{2, 3, 0}, 2, true, 0)
		}},
		{"rowdist-l1", []*tensor.Tensor{randT(r, 5, 4)}, func(t *Tape, v []*Var) *Var {
			return t.RowDistances(v[0], []int32{0, 1, 4}, []int32{2, 3, 0}, 1, false, 0)
		}},
		{"rowdist-inf", []*tensor.Tensor{randT(r, 5, 4)}, func(t *Tape, v []*Var) *Var {
			return t.RowDistances(v[0], []int32{0, 1, 4}, []int32{2, 3, 0}, math.Inf(1), false, 0)
		}},
		{"lstm", []*tensor.Tensor{randT(r, 3, 5, 4), scaled(randT(r, 4, 12), 0.5), scaled(randT(r, 3, 12), 0.5), randT(r, 12)},
			func(t *Tape, v []*Var) *Var { return t.LSTM(v[0], v[1], v[2], v[3], lengths, false) }},
		{"lstm-reverse", []*tensor.Tensor{randT(r, 3, 5, 4), scaled(randT(r, 4, 12), 0.5), scaled(randT(r, 3, 12), 0.5), randT(r, 12)},
			func(t *Tape, v []*Var) *Var { return t.LSTM(v[0], v[1], v[2], v[3], lengths, true) }},
		// Rows out of length order (the op runs them longest first) and an
		// empty one.
		{"lstm-unsorted", []*tensor.Tensor{randT(r, 4, 5, 3), scaled(randT(r, 3, 8), 0.5), scaled(randT(r, 2, 8), 0.5), randT(r, 8)},
			func(t *Tape, v []*Var) *Var { return t.LSTM(v[0], v[1], v[2], v[3], []int{2, 5, 0, 3}, false) }},
		{"lstm-unsorted-reverse", []*tensor.Tensor{randT(r, 4, 5, 3), scaled(randT(r, 3, 8), 0.5), scaled(randT(r, 2, 8), 0.5), randT(r, 8)},
			func(t *Tape, v []*Var) *Var { return t.LSTM(v[0], v[1], v[2], v[3], []int{2, 5, 0, 3}, true) }},
		{"lstm-nolengths", []*tensor.Tensor{randT(r, 2, 4, 3), scaled(randT(r, 3, 8), 0.5), scaled(randT(r, 2, 8), 0.5), randT(r, 8)},
			func(t *Tape, v []*Var) *Var { return t.LSTM(v[0], v[1], v[2], v[3], nil, false) }},
		// Long enough for Conv1D's sparse backward (max pooling leaves one
		// gradient per text and filter).
		{"conv1d-maxpool", []*tensor.Tensor{randT(r, 2, 30, 3), randT(r, 3, 3*4), randT(r, 4)}, func(t *Tape, v []*Var) *Var {
			return t.MaxOverTime(t.Conv1D(v[0], v[1], v[2], 3), []int{28, 20})
		}},
		// Boxes built as lower bound + positive width; row 1 is past its
		// length (state carried over, zero output).
		{"interval-lstm", []*tensor.Tensor{randT(r, 3, 4, 12), positive(r, 3, 4, 12), randT(r, 3, 12)}, func(t *Tape, v []*Var) *Var {
			// Ragged lengths (a row that never runs, one that stops early)
			// in both directions; the sum of both outputs.
			lengths := []int{4, 2, 0}
			fwd := t.IntervalLSTM(v[0], t.Add(v[0], v[1]), v[2], lengths, false)
			bwd := t.IntervalLSTM(v[0], t.Add(v[0], v[1]), v[2], lengths, true)
			return t.Add(fwd, bwd)
		}},
		// After the interval case, whose inputs must stay off its min/max
		// switches (each case draws from the shared source in turn).
		{"lstm-projected", []*tensor.Tensor{randT(r, 4, 5, 8), scaled(randT(r, 2, 8), 0.5), randT(r, 8)},
			func(t *Tape, v []*Var) *Var {
				fwd := t.LSTMProjected(v[0], v[1], v[2], []int{2, 5, 0, 3}, false)
				return t.Add(fwd, t.LSTMProjected(v[0], v[1], v[2], []int{2, 5, 0, 3}, true))
			}},
		{"conv1d-projected", []*tensor.Tensor{randT(r, 2, 6, 12), randT(r, 4)}, func(t *Tape, v []*Var) *Var {
			return t.Conv1DProjected(v[0], v[1], 3)
		}},
		// Positions reading shared rows (one per word), dense and sparse
		// (max pooling) backward.
		{"conv1d-rows", []*tensor.Tensor{randT(r, 5, 3), randT(r, 3, 3*4), randT(r, 4)}, func(t *Tape, v []*Var) *Var {
			rows := []int{0, 1, 2, 1, 3, 4, 4, 0, 2, 3, 1, 0}
			return t.Conv1DRows(v[0], rows, 2, 6, v[1], v[2], 3)
		}},
		{"conv1d-rows-maxpool", []*tensor.Tensor{randT(r, 40, 3), randT(r, 3, 3*4), randT(r, 4)}, func(t *Tape, v []*Var) *Var {
			// Some rows shared, without repeated windows (whose exact ties
			// would put the max on a kink).
			rows := make([]int, 2*30)
			for p := range rows {
				rows[p] = p % 40
			}
			return t.MaxOverTime(t.Conv1DRows(v[0], rows, 2, 30, v[1], v[2], 3), []int{28, 20})
		}},
		// Projected rows shared between positions, dense and under max
		// pooling (the sparse backward).
		{"conv1d-projected-rows", []*tensor.Tensor{randT(r, 5, 3*4), randT(r, 4)}, func(t *Tape, v []*Var) *Var {
			rows := []int{0, 1, 2, 1, 3, 4, 4, 0, 2, 3, 1, 0}
			return t.Conv1DProjectedRows(v[0], rows, 2, 6, v[1], 3)
		}},
		{"conv1d-projected-rows-maxpool", []*tensor.Tensor{randT(r, 40, 3*4), randT(r, 4)}, func(t *Tape, v []*Var) *Var {
			rows := make([]int, 2*30)
			for p := range rows {
				rows[p] = p % 40
			}
			return t.MaxOverTime(t.Conv1DProjectedRows(v[0], rows, 2, 30, v[1], 3), []int{28, 20})
		}},
		// Groups of three rows, one id repeated inside a group; values
		// spaced apart so that no min or max sits on a kink.
		{"lookup-hull", []*tensor.Tensor{spacedT(rand.New(rand.NewSource(6)), 6, 4)}, func(t *Tape, v []*Var) *Var {
			lo, hi := t.LookupHull(v[0], []int32{1, 4, 0, 3, 3, 5, 2, 0, 1}, 3)
			return t.Add(t.Scale(lo, 0.7), hi)
		}},
		{"mix-rows", []*tensor.Tensor{randT(r, 3, 4)}, func(t *Tape, v []*Var) *Var {
			table := randT(rand.New(rand.NewSource(5)), 5, 6)
			return t.MixRows(v[0], table, []int32{0, 1, 2, 3, 4, 4, 0, 2, 1, 1, 3, 0})
		}},
		// A scale per position (FLAT's masks); their own sources keep the
		// other cases' draws as they were.
		{"conv1d-rows-scaled", func() []*tensor.Tensor {
			r := rand.New(rand.NewSource(8))
			return []*tensor.Tensor{randT(r, 5, 3), randT(r, 3, 3*4), randT(r, 4), randT(r, 12)}
		}(), func(t *Tape, v []*Var) *Var {
			rows := []int{0, 1, 2, 1, 3, 4, 4, 0, 2, 3, 1, 0}
			return t.Conv1DRowsScaled(v[0], rows, v[3], 2, 6, v[1], v[2], 3)
		}},
		{"conv1d-rows-scaled-maxpool", func() []*tensor.Tensor {
			r := rand.New(rand.NewSource(9))
			return []*tensor.Tensor{randT(r, 40, 3), randT(r, 3, 3*4), randT(r, 4), randT(r, 60, 1)}
		}(), func(t *Tape, v []*Var) *Var {
			rows := make([]int, 2*30)
			for p := range rows {
				rows[p] = p % 40
			}
			return t.MaxOverTime(t.Conv1DRowsScaled(v[0], rows, v[3], 2, 30, v[1], v[2], 3), []int{28, 20})
		}},
		// Rows out of length order (the op runs them longest first), an
		// empty one, both directions; its own source keeps the other cases'
		// draws as they were.
		{"interval-lstm-unsorted", func() []*tensor.Tensor {
			r := rand.New(rand.NewSource(7))
			return []*tensor.Tensor{randT(r, 4, 4, 8), positive(r, 4, 4, 8), randT(r, 2, 8)}
		}(), func(t *Tape, v []*Var) *Var {
			lengths := []int{2, 4, 0, 3}
			fwd := t.IntervalLSTM(v[0], t.Add(v[0], v[1]), v[2], lengths, false)
			bwd := t.IntervalLSTM(v[0], t.Add(v[0], v[1]), v[2], lengths, true)
			return t.Add(fwd, bwd)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := GradCheck(c.in, 1e-2, 2e-2, c.f); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func scaled(x *tensor.Tensor, s float32) *tensor.Tensor {
	for i := range x.Data {
		x.Data[i] *= s
	}
	return x
}

// TestGradCheckCatchesWrongGradient makes sure the checker itself can fail.
func TestGradCheckCatchesWrongGradient(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	err := GradCheck([]*tensor.Tensor{randT(r, 3)}, 1e-2, 2e-2, func(t *Tape, v []*Var) *Var {
		a := v[0]
		out := tensor.New(3)
		for i, x := range a.Data() {
			out.Data[i] = x * x
		}
		return t.op(out, func(o *Var) { // deliberately wrong: d(x²) is not x
			g := a.grad()
			for i := range g {
				g[i] += o.Grad.Data[i] * a.Data()[i]
			}
		}, a)
	})
	if err == nil {
		t.Fatal("GradCheck accepted a wrong gradient")
	}
}

func TestLSTMPaddingDoesNotLeak(t *testing.T) {
	// A row's outputs must not depend on what sits in its padding.
	r := rand.New(rand.NewSource(3))
	x := randT(r, 1, 6, 3)
	wx, wh, b := randT(r, 3, 8), randT(r, 2, 8), randT(r, 8)
	for _, rev := range []bool{false, true} {
		tp := NewTape()
		out1 := tp.LSTM(tp.Const(x), tp.Const(wx), tp.Const(wh), tp.Const(b), []int{4}, rev).Data()
		x2 := x.Clone()
		for i := 4 * 3; i < len(x2.Data); i++ {
			x2.Data[i] = 100
		}
		out2 := tp.LSTM(tp.Const(x2), tp.Const(wx), tp.Const(wh), tp.Const(b), []int{4}, rev).Data()
		if d := tensor.MaxAbsDiff(out1, out2); d != 0 {
			t.Fatalf("reverse=%v: padding changed outputs by %g", rev, d)
		}
		// and the short row equals running the unpadded sequence alone
		tp2 := NewTape()
		short := tensor.From(append([]float32(nil), x.Data[:4*3]...), 1, 4, 3)
		out3 := tp2.LSTM(tp2.Const(short), tp2.Const(wx), tp2.Const(wh), tp2.Const(b), nil, rev).Data()
		if d := tensor.MaxAbsDiff(out1[:4*2], out3); d > 1e-6 {
			t.Fatalf("reverse=%v: padded run differs from unpadded by %g", rev, d)
		}
	}
}

func TestFrozenParamGetsNoGradient(t *testing.T) {
	r := rand.New(rand.NewSource(4))
	w := NewParam("w", randT(r, 3, 2))
	w.Frozen = true
	tp := NewTape()
	x := tp.Leaf(randT(r, 4, 3))
	tp.Backward(tp.Sum(tp.MatMul(x, w.Var, false)))
	if w.Grad != nil {
		t.Fatal("frozen param received a gradient")
	}
	if x.Grad == nil {
		t.Fatal("input received no gradient")
	}
}

func TestRowSparseParam(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	emb := NewParam("emb", randT(r, 10, 3))
	emb.SetRowSparse()
	tp := NewTape()
	tp.Backward(tp.Sum(tp.Lookup(emb.Var, []int32{0, 2, 7, 2}, 0)))
	rows, all := emb.TouchedRows()
	if all || len(rows) != 2 {
		t.Fatalf("touched rows %v all=%v, want [2 7]", rows, all)
	}
	for i := 0; i < 10; i++ {
		want := float32(0)
		switch i {
		case 2:
			want = 2
		case 7:
			want = 1
		}
		if g := emb.Grad.Data[i*3]; g != want {
			t.Fatalf("row %d grad %v, want %v", i, g, want)
		}
	}
	emb.ZeroGrad()
	if !tensor.AllFinite(emb.Grad.Data) || emb.Grad.Data[2*3] != 0 {
		t.Fatal("ZeroGrad left gradient behind")
	}
	// a dense op on the table makes the whole gradient live
	tp.Reset()
	tp.Backward(tp.Sum(tp.Square(emb.Var)))
	if _, all := emb.TouchedRows(); !all {
		t.Fatal("dense write not recorded")
	}
	emb.ZeroGrad()
	for _, g := range emb.Grad.Data {
		if g != 0 {
			t.Fatal("ZeroGrad after dense write left gradient behind")
		}
	}
}

func TestDropoutTrainOnly(t *testing.T) {
	r := rand.New(rand.NewSource(6))
	x := randT(r, 100, 10)
	tp := NewTape()
	if got := tp.Dropout(tp.Const(x), 0.5); got.Value != x {
		t.Fatal("dropout changed values in inference mode")
	}
	tp.Train = true
	y := tp.Dropout(tp.Const(x), 0.5).Data()
	zeros := 0
	for i, v := range y {
		if v == 0 {
			zeros++
		} else if v != 2*x.Data[i] {
			t.Fatal("kept value not scaled by 1/(1-p)")
		}
	}
	if zeros < 400 || zeros > 600 {
		t.Fatalf("dropped %d of 1000 at p=0.5", zeros)
	}
}

func TestNoGradRecordsNothing(t *testing.T) {
	r := rand.New(rand.NewSource(8))
	w := NewParam("w", randT(r, 3, 2))
	tp := NewTape()
	tp.NoGrad = true
	tp.MatMul(tp.Const(randT(r, 4, 3)), w.Var, false)
	if tp.Len() != 0 {
		t.Fatalf("NoGrad tape recorded %d ops", tp.Len())
	}
}

// LSTMProjected from x·Wx gives LSTM's outputs and its gradients of Wh and
// the bias.
func TestLSTMProjectedEqualsLSTM(t *testing.T) {
	r := rand.New(rand.NewSource(4))
	x, wx, wh, b := randT(r, 4, 6, 5), randT(r, 5, 12), scaled(randT(r, 3, 12), 0.5), randT(r, 12)
	lengths := []int{3, 6, 0, 5}
	for _, rev := range []bool{false, true} {
		run := func(projected bool) (out, gwh, gb []float32) {
			tp := NewTape()
			whv, bv := tp.Leaf(wh.Clone()), tp.Leaf(b.Clone())
			var o *Var
			if projected {
				gx := tensor.New(4, 6, 12)
				tensor.Gemm(false, false, 24, 12, 5, 1, x.Data, 5, wx.Data, 12, 0, gx.Data, 12)
				o = tp.LSTMProjected(tp.Const(gx), whv, bv, lengths, rev)
			} else {
				o = tp.LSTM(tp.Const(x), tp.Const(wx), whv, bv, lengths, rev)
			}
			tp.Backward(tp.Sum(tp.Mul(o, tp.Const(scaled(randT(rand.New(rand.NewSource(9)), 4, 6, 3), 1)))))
			return o.Data(), whv.Grad.Data, bv.Grad.Data
		}
		o1, w1, b1 := run(false)
		o2, w2, b2 := run(true)
		if d := max(tensor.MaxAbsDiff(o1, o2), tensor.MaxAbsDiff(w1, w2), tensor.MaxAbsDiff(b1, b2)); d > 1e-5 {
			t.Errorf("reverse=%v: projected LSTM differs by %g", rev, d)
		}
	}
}

// Conv1DRows over shared rows equals Conv1D over the gathered positions.
func TestConv1DRowsEqualsConv1D(t *testing.T) {
	r := rand.New(rand.NewSource(8))
	x, w, b := randT(r, 6, 4), randT(r, 4, 2*5), randT(r, 5)
	rows := make([]int, 3*7)
	pos := tensor.New(3, 7, 4)
	for p := range rows {
		rows[p] = r.Intn(6)
		copy(pos.Data[p*4:(p+1)*4], x.Data[rows[p]*4:(rows[p]+1)*4])
	}
	tp := NewTape()
	got := tp.Conv1DRows(tp.Const(x), rows, 3, 7, tp.Const(w), tp.Const(b), 2).Data()
	want := tp.Conv1D(tp.Const(pos), tp.Const(w), tp.Const(b), 2).Data()
	if d := tensor.MaxAbsDiff(got, want); d > 1e-6 {
		t.Errorf("Conv1DRows differs from Conv1D by %g", d)
	}
}

// spacedT is a tensor of shuffled values 0.25 apart, so that comparisons
// between its elements keep away from ties under finite differences.
func spacedT(r *rand.Rand, shape ...int) *tensor.Tensor {
	x := tensor.New(shape...)
	for i, p := range r.Perm(len(x.Data)) {
		x.Data[i] = 0.25*float32(p) - 2
	}
	return x
}

// Reshape hands its gradient buffer to an input that has none yet instead
// of copying it; the input's gradient must still sum every consumer's, in
// either creation order, and a parameter keeps a buffer of its own.
func TestReshapeGradientWithOtherConsumers(t *testing.T) {
	x := tensor.From([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	c1 := tensor.From([]float32{1, -1, 2, -2, 3, -3}, 3, 2)
	c2 := tensor.From([]float32{0.5, 1, 1.5, 2, 2.5, 3}, 2, 3)
	want := make([]float32, 6)
	for i := range want {
		want[i] = c1.Data[i] + 2*c2.Data[i]
	}
	for _, reshapeFirst := range []bool{true, false} {
		for _, param := range []bool{false, true} {
			tp := NewTape()
			var xv *Var
			var p *Param
			if param {
				p = NewParam("x", x.Clone())
				xv = p.Var
			} else {
				xv = tp.Leaf(x.Clone())
			}
			var y1, y2 *Var
			if reshapeFirst {
				y1 = tp.Reshape(xv, 3, 2)
				y2 = tp.Scale(xv, 2)
			} else {
				y2 = tp.Scale(xv, 2)
				y1 = tp.Reshape(xv, 3, 2)
			}
			loss := tp.Add(tp.Sum(tp.Mul(y1, tp.Leaf(c1))), tp.Sum(tp.Mul(y2, tp.Leaf(c2))))
			tp.Backward(loss)
			for i, w := range want {
				if got := xv.Grad.Data[i]; math.Abs(float64(got-w)) > 1e-6 {
					t.Fatalf("reshape first %v, param %v: grad[%d] = %v, want %v", reshapeFirst, param, i, got, w)
				}
			}
			if param && &xv.Grad.Data[0] == &y1.Grad.Data[0] {
				t.Errorf("a parameter took over an op's gradient buffer")
			}
		}
	}
}

// MixRows gives every row its own weighted sum of table rows (a gradient
// check alone would not see a row left out of both passes).
func TestMixRowsValues(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	const rows, n, u, f = 40, 3, 7, 5
	table := randT(r, u, f)
	w := randT(r, rows, n)
	idx := make([]int32, rows*n)
	for i := range idx {
		idx[i] = int32(r.Intn(u))
	}
	tp := NewTape()
	out := tp.MixRows(tp.Leaf(w), table, idx)
	for row := range rows {
		for j := range f {
			var want float32
			for k := range n {
				want += w.Data[row*n+k] * table.Data[int(idx[row*n+k])*f+j]
			}
			if got := out.Data()[row*f+j]; math.Abs(float64(got-want)) > 1e-5 {
				t.Fatalf("row %d col %d: %v, want %v", row, j, got, want)
			}
		}
	}
}

// LSTMPair and LSTMProjectedPair give, bit for bit, the outputs and every
// gradient of two separate calls, on one goroutine or two, whether both
// outputs are used or only one.
func TestLSTMPairEqualsTwoLSTMs(t *testing.T) {
	defer tensor.SetWorkers(tensor.Workers())
	r := rand.New(rand.NewSource(11))
	const b, steps, d, h = 5, 7, 4, 3
	x := randT(r, b, steps, d)
	gxs := []*tensor.Tensor{randT(r, b, steps, 4*h), randT(r, b, steps, 4*h)}
	var ws [2][3]*tensor.Tensor // per direction: wx, wh, bias
	for i := range ws {
		ws[i] = [3]*tensor.Tensor{randT(r, d, 4*h), scaled(randT(r, h, 4*h), 0.5), randT(r, 4*h)}
	}
	lengths := []int{3, 7, 0, 5, 7}
	seeds := []*tensor.Tensor{randT(r, b, steps, h), randT(r, b, steps, h)}
	// run returns the outputs followed by every leaf's gradient (nil for
	// a leaf that got none).
	run := func(pair, projected bool, use [2]bool) [][]float32 {
		tp := NewTape()
		tp.Train = true
		xv := tp.Leaf(x.Clone())
		gx := []*Var{tp.Leaf(gxs[0].Clone()), tp.Leaf(gxs[1].Clone())}
		var lw [2]LSTMWeights
		for i := range lw {
			lw[i] = LSTMWeights{Wx: tp.Leaf(ws[i][0].Clone()), Wh: tp.Leaf(ws[i][1].Clone()), Bias: tp.Leaf(ws[i][2].Clone()), Reverse: i == 1}
		}
		var o [2]*Var
		switch {
		case pair && projected:
			o[0], o[1] = tp.LSTMProjectedPair(gx[0], gx[1], lw[0], lw[1], lengths)
		case pair:
			o[0], o[1] = tp.LSTMPair(xv, lw[0], lw[1], lengths)
		default:
			for i := range o {
				if projected {
					o[i] = tp.LSTMProjected(gx[i], lw[i].Wh, lw[i].Bias, lengths, lw[i].Reverse)
				} else {
					o[i] = tp.LSTM(xv, lw[i].Wx, lw[i].Wh, lw[i].Bias, lengths, lw[i].Reverse)
				}
			}
		}
		tp.Backward(pairLoss(tp, o, seeds, use))
		leaves := []*Var{xv, gx[0], gx[1]}
		for _, w := range lw {
			leaves = append(leaves, w.Wx, w.Wh, w.Bias)
		}
		return append([][]float32{o[0].Data(), o[1].Data()}, gradsOf(leaves...)...)
	}
	for _, workers := range []int{1, 2} {
		tensor.SetWorkers(workers)
		for _, projected := range []bool{false, true} {
			for _, use := range [][2]bool{{true, true}, {true, false}, {false, true}} {
				sameBits(t, fmt.Sprintf("workers %d projected %v use %v", workers, projected, use), run(false, projected, use), run(true, projected, use))
			}
		}
	}
}

// pairLoss is Σ o[i]·seeds[i] over the outputs that use marks.
func pairLoss(tp *Tape, o [2]*Var, seeds []*tensor.Tensor, use [2]bool) *Var {
	var loss *Var
	for i := range o {
		if !use[i] {
			continue
		}
		term := tp.Sum(tp.Mul(o[i], tp.Const(seeds[i])))
		if loss == nil {
			loss = term
		} else {
			loss = tp.Add(loss, term)
		}
	}
	return loss
}

// gradsOf returns each Var's gradient, nil where it has none.
func gradsOf(vs ...*Var) [][]float32 {
	out := make([][]float32, len(vs))
	for i, v := range vs {
		if v.Grad != nil {
			out[i] = v.Grad.Data
		}
	}
	return out
}

// sameBits fails unless got holds want's values bit for bit, nil where
// want is nil.
func sameBits(t *testing.T, label string, want, got [][]float32) {
	t.Helper()
	for k := range want {
		if (want[k] == nil) != (got[k] == nil) {
			t.Fatalf("%s: value %d nil %v, want nil %v", label, k, got[k] == nil, want[k] == nil)
		}
		for i := range want[k] {
			if math.Float32bits(got[k][i]) != math.Float32bits(want[k][i]) {
				t.Fatalf("%s: value %d [%d] = %g, want %g", label, k, i, got[k][i], want[k][i])
			}
		}
	}
}

// IntervalLSTMPair gives, bit for bit, two IntervalLSTM calls' outputs and
// gradients, on one goroutine or two, whether both outputs are used or one.
func TestIntervalLSTMPairEqualsTwoLayers(t *testing.T) {
	defer tensor.SetWorkers(tensor.Workers())
	r := rand.New(rand.NewSource(12))
	const b, steps, h = 4, 6, 3
	var lo, hi, wh [2]*tensor.Tensor
	for i := range lo {
		lo[i], hi[i] = randT(r, b, steps, 4*h), randT(r, b, steps, 4*h)
		for j, v := range hi[i].Data {
			hi[i].Data[j] = lo[i].Data[j] + 0.3*max(v, -v)
		}
		wh[i] = scaled(randT(r, h, 4*h), 0.5)
	}
	lengths := []int{6, 2, 0, 5}
	seeds := []*tensor.Tensor{randT(r, b, steps, 2*h), randT(r, b, steps, 2*h)}
	run := func(pair bool, use [2]bool) [][]float32 {
		tp := NewTape()
		var L, U, W [2]*Var
		for i := range L {
			L[i], U[i], W[i] = tp.Leaf(lo[i].Clone()), tp.Leaf(hi[i].Clone()), tp.Leaf(wh[i].Clone())
		}
		var o [2]*Var
		if pair {
			o[0], o[1] = tp.IntervalLSTMPair(L[0], U[0], W[0], L[1], U[1], W[1], lengths)
		} else {
			for i := range o {
				o[i] = tp.IntervalLSTM(L[i], U[i], W[i], lengths, i == 1)
			}
		}
		tp.Backward(pairLoss(tp, o, seeds, use))
		return append([][]float32{o[0].Data(), o[1].Data()}, gradsOf(L[0], U[0], W[0], L[1], U[1], W[1])...)
	}
	for _, workers := range []int{1, 2} {
		tensor.SetWorkers(workers)
		for _, use := range [][2]bool{{true, true}, {true, false}, {false, true}} {
			sameBits(t, fmt.Sprintf("workers %d use %v", workers, use), run(false, use), run(true, use))
		}
	}
}
