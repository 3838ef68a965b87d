package ag

import (
	"fmt"

	"github.com/textarmor/textarmor/tensor"
)

// negligibleShare: MixRows skips a term whose weight is below this share of
// its row's total weight. Its part of the result is then far below the
// float32 rounding of the sum (2⁻²⁴), and such weights (a softmax's far
// tails, ASCC's convex weights of 1e-38 to 1e-30) make subnormal products,
// an axpy with such a weight about 28 times slower (tensor's
// BenchmarkAxpySubnormal).
const negligibleShare = 0x1p-60

// MixRows returns, for each of R rows, the weighted sum of n rows of a
// constant table: out[r] = Σ_k w[r,k]·table[idx[r·n+k]], with w [R, n] and
// table [U, F]; out is [R, F]. The gradient reaches w only. It is a convex
// hull of candidate words taken after a linear map that was applied to
// each distinct candidate once (ASCC's inner steps). Terms with a
// negligible weight are skipped (negligibleShare).
func (t *Tape) MixRows(w *Var, table *tensor.Tensor, idx []int32) *Var {
	return t.MixLiveRows(w, table, idx, nil)
}

// MixLiveRows is MixRows computing only the rows r with live[r] (nil: all):
// the others are zero and pass no gradient to w. An encoder that never
// reads a padding position's row need not have it mixed (it saves little:
// padding rows all read the pad word's candidates, which stay in cache).
func (t *Tape) MixLiveRows(w *Var, table *tensor.Tensor, idx []int32, live []bool) *Var {
	ws := w.Shape()
	if len(ws) != 2 || len(table.Shape) != 2 || len(idx) != ws[0]*ws[1] || (live != nil && len(live) != ws[0]) {
		panic(fmt.Sprintf("ag.MixRows: w %v, table %v, %d indices, %d live flags", ws, table.Shape, len(idx), len(live)))
	}
	R, n, F := ws[0], ws[1], table.Shape[1]
	for _, i := range idx {
		if i < 0 || int(i) >= table.Shape[0] {
			panic(fmt.Sprintf("ag.MixRows: index %d outside a table of %d rows", i, table.Shape[0]))
		}
	}
	W, T := w.Data(), table.Data
	out := tensor.New(R, F)
	tensor.ParallelFor(R, n*F, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			if live != nil && !live[r] {
				continue
			}
			o := out.Data[r*F : (r+1)*F]
			var mass float32
			for _, v := range W[r*n : (r+1)*n] {
				mass += max(v, -v)
			}
			for k := 0; k < n; k++ {
				i := int(idx[r*n+k])
				if w := W[r*n+k]; max(w, -w) >= negligibleShare*mass {
					tensor.Axpy(w, T[i*F:(i+1)*F], o)
				}
			}
		}
	})
	return t.op(out, func(o *Var) {
		G, gw := o.Grad.Data, w.grad()
		tensor.ParallelFor(R, n*F, func(lo, hi int) {
			for r := lo; r < hi; r++ {
				if live != nil && !live[r] {
					continue
				}
				g := G[r*F : (r+1)*F]
				for k := 0; k < n; k++ {
					i := int(idx[r*n+k])
					gw[r*n+k] += tensor.Dot(g, T[i*F:(i+1)*F])
				}
			}
		})
	}, w)
}
