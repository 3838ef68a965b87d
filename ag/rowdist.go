package ag

import (
	"fmt"
	"math"

	"github.com/textarmor/textarmor/tensor"
)

// RowDistances returns, for each i, the distance between rows a[i] and b[i]
// of table [V, D]: the p-norm of their difference (p = 1, 2 or +Inf), its
// square when squared is set (p = 2 only), with eps added under the square
// root of the plain 2-norm to keep its gradient finite at zero.
//
// It is what metric-learning losses over an embedding table (FTML, CML)
// need, fused: no [n, D] differences are materialised, and the backward pass
// writes only the rows used.
func (t *Tape) RowDistances(table *Var, a, b []int32, p float64, squared bool, eps float32) *Var {
	if len(a) != len(b) {
		panic(fmt.Sprintf("ag.RowDistances: %d and %d rows", len(a), len(b)))
	}
	v, d := table.Shape()[0], table.Shape()[1]
	for i := range a {
		if a[i] < 0 || int(a[i]) >= v || b[i] < 0 || int(b[i]) >= v {
			panic(fmt.Sprintf("ag.RowDistances: rows %d, %d outside a table of %d", a[i], b[i], v))
		}
	}
	T := table.Data()
	out := tensor.New(len(a))
	tensor.ParallelFor(len(a), 3*d, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			x, y := T[int(a[i])*d:int(a[i]+1)*d], T[int(b[i])*d:int(b[i]+1)*d]
			var s float64
			switch {
			case p == 1:
				for j := range x {
					s += math.Abs(float64(x[j] - y[j]))
				}
			case math.IsInf(p, 1):
				for j := range x {
					s = math.Max(s, math.Abs(float64(x[j]-y[j])))
				}
			default:
				for j := range x {
					e := float64(x[j] - y[j])
					s += e * e
				}
				if !squared {
					s = math.Sqrt(s + float64(eps))
				}
			}
			out.Data[i] = float32(s)
		}
	})
	return t.op(out, func(o *Var) {
		G := o.Grad.Data
		gt := table.gradRows()
		// Serial: rows repeat across pairs, so parallel writes would race.
		for i := range a {
			g := G[i]
			if g == 0 {
				continue
			}
			ra, rb := int(a[i])*d, int(b[i])*d
			x, y := T[ra:ra+d], T[rb:rb+d]
			ga, gb := gt[ra:ra+d], gt[rb:rb+d]
			switch {
			case p == 1:
				for j := range x {
					var s float32
					if e := x[j] - y[j]; e > 0 {
						s = g
					} else if e < 0 {
						s = -g
					}
					ga[j] += s
					gb[j] -= s
				}
			case math.IsInf(p, 1):
				best, arg := float32(-1), 0
				for j := range x {
					if e := float32(math.Abs(float64(x[j] - y[j]))); e > best {
						best, arg = e, j
					}
				}
				s := g
				if x[arg] < y[arg] {
					s = -g
				}
				ga[arg] += s
				gb[arg] -= s
			default:
				k := 2 * g
				if !squared {
					k = g / out.Data[i]
				}
				for j := range x {
					e := k * (x[j] - y[j])
					ga[j] += e
					gb[j] -= e
				}
			}
			if pr := table.param; pr != nil && pr.rowSparse {
				pr.touch(a[i])
				pr.touch(b[i])
			}
		}
	}, table)
}
