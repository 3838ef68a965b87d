package ag

import (
	"math"
	"math/rand"
	"testing"

	"github.com/textarmor/textarmor/tensor"
)

// The wide path (a vocabulary softmax) gives the exact path's loss and
// gradient to float32 precision, with and without weights, and its own
// gradient passes the finite-difference check.
func TestCrossEntropyWide(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	const b, c = 5, wideSoftmax + 37
	x := randT(r, b, c)
	for i := range x.Data {
		x.Data[i] *= 4
	}
	labels := []int{0, 3, c - 1, 17, 200}
	for _, weights := range [][]float32{nil, {1, 0.5, 2, 0, 1}} {
		run := func(wide bool) (float32, []float32) {
			tp := NewTape()
			v := tp.Leaf(x.Clone())
			var loss *Var
			if wide {
				loss = tp.crossEntropyWide(v, labels, weights)
			} else {
				// The exact path, by the row: CrossEntropy of each row alone
				// sends wide rows to the wide path, so rebuild it here.
				L := v.Data()
				logp := make([]float32, b*c)
				var s, ws float64
				for i := range b {
					logSoftmaxRow(L[i*c:(i+1)*c], logp[i*c:(i+1)*c])
					w := 1.0
					if weights != nil {
						w = float64(weights[i])
					}
					s -= w * float64(logp[i*c+labels[i]])
					ws += w
				}
				g := make([]float32, b*c)
				for i := range b {
					w := float32(1)
					if weights != nil {
						w = weights[i]
					}
					for j := range c {
						p := float32(math.Exp(float64(logp[i*c+j])))
						if j == labels[i] {
							p--
						}
						g[i*c+j] = w * p / float32(ws)
					}
				}
				return float32(s / ws), g
			}
			tp.Backward(loss)
			return loss.Item(), v.Grad.Data
		}
		lw, gw := run(true)
		le, ge := run(false)
		if math.Abs(float64(lw-le)) > 1e-5*math.Max(1, math.Abs(float64(le))) || tensor.MaxAbsDiff(gw, ge) > 1e-6 {
			t.Errorf("weights %v: wide loss %g, exact %g; gradients differ by %g", weights, lw, le, tensor.MaxAbsDiff(gw, ge))
		}
	}
	err := GradCheck([]*tensor.Tensor{randT(r, 3, c)}, 1e-2, 2e-2, func(tp *Tape, v []*Var) *Var {
		return tp.CrossEntropy(v[0], []int{1, c - 2, 100}, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// LogSumExpRows matches a float64 log-sum-exp to float32 precision, on
// rows of ordinary and of very large logits (the maximum is taken out
// first), and refuses a slice shorter than its shape.
func TestLogSumExpRows(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	const rows, cols = 7, 10002
	x := make([]float32, rows*cols)
	for i := range x {
		x[i] = float32(r.NormFloat64() * 5)
	}
	for j := range cols {
		x[3*cols+j] += 1e4 // a row that would overflow exp without its maximum taken out
	}
	got := LogSumExpRows(x, rows, cols)
	for i := range rows {
		row := x[i*cols : (i+1)*cols]
		m := math.Inf(-1)
		for _, v := range row {
			m = math.Max(m, float64(v))
		}
		var s float64
		for _, v := range row {
			s += math.Exp(float64(v) - m)
		}
		want := m + math.Log(s)
		if d := math.Abs(float64(got[i]) - want); d > 1e-6*math.Max(1, math.Abs(want)) {
			t.Errorf("row %d: %.7g, want %.7g", i, got[i], want)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("a short slice was accepted")
		}
	}()
	LogSumExpRows(x[:10], 2, cols)
}
