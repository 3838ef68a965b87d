package ag

import (
	"fmt"
	"math"

	"github.com/textarmor/textarmor/tensor"
)

// wideSoftmax is the class count from which CrossEntropy takes its wide
// path: a language model's softmax over its vocabulary, where the
// exponentials, not the products, would dominate a step. Classifiers (2
// to a few dozen classes) keep the exact float64 path, bit for bit.
const wideSoftmax = 256

// LogSumExpRows is log Σ_j exp(x[r, j]) of each row of x [rows, cols],
// the exponentials in float32 vector passes (as CrossEntropy's wide path)
// summed in float64, the rows in parallel: a language model's
// normaliser over its vocabulary without a scalar exponential per word.
func LogSumExpRows(x []float32, rows, cols int) []float32 {
	if rows < 0 || cols < 1 || len(x) < rows*cols {
		panic(fmt.Sprintf("ag.LogSumExpRows: %d values for %d rows of %d", len(x), rows, cols))
	}
	lse := make([]float32, rows)
	tensor.ParallelFor(rows, 4*cols, func(lo, hi int) {
		e := make([]float32, cols)
		for r := lo; r < hi; r++ {
			row := x[r*cols : (r+1)*cols]
			m := float32(math.Inf(-1))
			for _, v := range row {
				m = max(m, v)
			}
			for j, v := range row {
				e[j] = v - m
			}
			expVec(e)
			var s float64
			for _, v := range e {
				s += float64(v)
			}
			lse[r] = m + float32(math.Log(s))
		}
	})
	return lse
}

// crossEntropyWide is CrossEntropy with the exponentials in float32
// vector passes (expVec, as the LSTM's gates) and the rows in parallel;
// the loss is summed in row order, so it does not depend on the workers.
func (t *Tape) crossEntropyWide(logits *Var, labels []int, weights []float32) *Var {
	b, c := rowsCols(logits.Shape())
	L := logits.Data()
	for r, l := range labels {
		if l < 0 || l >= c {
			panic(fmt.Sprintf("ag.CrossEntropy: label %d outside %d classes (row %d)", l, c, r))
		}
	}
	lse := LogSumExpRows(L, b, c)
	var loss, wsum float64
	for r := range b {
		w := 1.0
		if weights != nil {
			w = float64(weights[r])
		}
		loss -= w * float64(L[r*c+labels[r]]-lse[r])
		wsum += w
	}
	if wsum == 0 {
		wsum = 1
	}
	return t.op(tensor.Scalar(float32(loss/wsum)), func(o *Var) {
		g := o.Grad.Data[0] / float32(wsum)
		gl := logits.grad()
		tensor.ParallelFor(b, 4*c, func(lo, hi int) {
			p := make([]float32, c)
			for r := lo; r < hi; r++ {
				w := float32(1)
				if weights != nil {
					w = weights[r]
				}
				row := L[r*c : (r+1)*c]
				for j, v := range row {
					p[j] = v - lse[r]
				}
				expVec(p)
				p[labels[r]]--
				gr, k := gl[r*c:(r+1)*c], g*w
				for j, v := range p {
					gr[j] += k * v
				}
			}
		})
	}, logits)
}
