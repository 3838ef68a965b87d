package ag

import (
	"fmt"

	"github.com/textarmor/textarmor/tensor"
)

// rowsCols views a tensor of shape [..., n] as a matrix [rows, n].
func rowsCols(sh []int) (rows, cols int) {
	cols = sh[len(sh)-1]
	return tensor.Numel(sh) / max(cols, 1), cols
}

// MatMul multiplies x [..., k] by w [k, n] (or w [n, k] when transW),
// giving [..., n]. Leading axes of x are flattened into one GEMM.
func (t *Tape) MatMul(x, w *Var, transW bool) *Var {
	m, k := rowsCols(x.Shape())
	wk, n := w.Shape()[0], w.Shape()[1]
	if transW {
		wk, n = n, wk
	}
	if k != wk {
		panic(fmt.Sprintf("ag.MatMul: %v times %v (transW=%v)", x.Shape(), w.Shape(), transW))
	}
	outShape := append(append([]int(nil), x.Shape()[:len(x.Shape())-1]...), n)
	out := tensor.New(outShape...)
	ldw := w.Shape()[1]
	tensor.Gemm(false, transW, m, n, k, 1, x.Data(), k, w.Data(), ldw, 0, out.Data, n)
	return t.op(out, func(o *Var) {
		G := o.Grad.Data
		if t.needs(x) {
			// dX = G · Wᵀ (or G · W when W was used transposed)
			tensor.Gemm(false, !transW, m, k, n, 1, G, n, w.Data(), ldw, 1, x.grad(), k)
		}
		if t.needs(w) {
			if transW { // dW [n,k] = Gᵀ · X
				tensor.Gemm(true, false, n, k, m, 1, G, n, x.Data(), k, 1, w.grad(), k)
			} else { // dW [k,n] = Xᵀ · G
				tensor.Gemm(true, false, k, n, m, 1, x.Data(), k, G, n, 1, w.grad(), n)
			}
		}
	}, x, w)
}

// Linear returns x·w + b for x [..., in], w [in, out], b [out] (b may be nil).
func (t *Tape) Linear(x, w, b *Var) *Var {
	y := t.MatMul(x, w, false)
	if b == nil {
		return y
	}
	return t.AddBias(y, b)
}

// AddBias adds b [n] to every row of x [..., n], in place of a general
// broadcast because it is on every layer's hot path.
func (t *Tape) AddBias(x, b *Var) *Var {
	rows, n := rowsCols(x.Shape())
	if len(b.Data()) != n {
		panic(fmt.Sprintf("ag.AddBias: %v plus bias %v", x.Shape(), b.Shape()))
	}
	out := tensor.New(x.Shape()...)
	X, B, O := x.Data(), b.Data(), out.Data
	tensor.ParallelFor(rows, n, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			o, xr := O[r*n:(r+1)*n], X[r*n:(r+1)*n]
			for j := range o {
				o[j] = xr[j] + B[j]
			}
		}
	})
	return t.op(out, func(o *Var) {
		G := o.Grad.Data
		if t.needs(x) {
			gx := x.grad()
			for i := range gx {
				gx[i] += G[i]
			}
		}
		if t.needs(b) {
			gb := b.grad()
			for r := 0; r < rows; r++ {
				g := G[r*n : (r+1)*n]
				for j := range gb {
					gb[j] += g[j]
				}
			}
		}
	}, x, b)
}

// BatchMatMul multiplies a [B, m, k] by b [B, k, n] batch by batch (either
// operand optionally transposed in its last two axes), giving [B, m, n].
func (t *Tape) BatchMatMul(a *Var, transA bool, b *Var, transB bool) *Var {
	as, bs := a.Shape(), b.Shape()
	if len(as) != 3 || len(bs) != 3 || as[0] != bs[0] {
		panic(fmt.Sprintf("ag.BatchMatMul: shapes %v and %v", as, bs))
	}
	nb := as[0]
	m, k := as[1], as[2]
	if transA {
		m, k = k, m
	}
	k2, n := bs[1], bs[2]
	if transB {
		k2, n = n, k2
	}
	if k != k2 {
		panic(fmt.Sprintf("ag.BatchMatMul: shapes %v and %v (transA=%v transB=%v)", as, bs, transA, transB))
	}
	out := tensor.New(nb, m, n)
	sa, sb, so := as[1]*as[2], bs[1]*bs[2], m*n
	A, B := a.Data(), b.Data()
	for i := 0; i < nb; i++ {
		tensor.Gemm(transA, transB, m, n, k, 1, A[i*sa:], as[2], B[i*sb:], bs[2], 0, out.Data[i*so:], n)
	}
	return t.op(out, func(o *Var) {
		G := o.Grad.Data
		for i := 0; i < nb; i++ {
			g := G[i*so:]
			if t.needs(a) {
				ga := a.grad()[i*sa:]
				if !transA { // dA [m,k] = G · op(B)ᵀ
					tensor.Gemm(false, !transB, m, k, n, 1, g, n, B[i*sb:], bs[2], 1, ga, as[2])
				} else { // dA [k,m] = op(B) · Gᵀ
					tensor.Gemm(transB, true, k, m, n, 1, B[i*sb:], bs[2], g, n, 1, ga, as[2])
				}
			}
			if t.needs(b) {
				gb := b.grad()[i*sb:]
				if !transB { // dB [k,n] = op(A)ᵀ · G
					tensor.Gemm(!transA, false, k, n, m, 1, A[i*sa:], as[2], g, n, 1, gb, bs[2])
				} else { // dB [n,k] = Gᵀ · op(A)
					tensor.Gemm(true, transA, n, k, m, 1, g, n, A[i*sa:], as[2], 1, gb, bs[2])
				}
			}
		}
	}, a, b)
}

// LinearT is x·wᵀ + b for x [..., in], w [out, in] (the layout of Hugging
// Face checkpoints) and b [out], as one op: the bias is written first and
// the product added onto it, and the bias gradient (the column sums of the
// output gradient) is one matrix-vector product, where MatMul then AddBias
// would make two more passes over the output in Go.
func (t *Tape) LinearT(x, w, b *Var) *Var {
	m, k := rowsCols(x.Shape())
	n := w.Shape()[0]
	if w.Shape()[1] != k || len(b.Data()) != n {
		panic(fmt.Sprintf("ag.LinearT: %v times %vᵀ plus %v", x.Shape(), w.Shape(), b.Shape()))
	}
	outShape := append(append([]int(nil), x.Shape()[:len(x.Shape())-1]...), n)
	out := tensor.New(outShape...)
	B := b.Data()
	tensor.ParallelFor(m, n, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			copy(out.Data[r*n:(r+1)*n], B)
		}
	})
	tensor.Gemm(false, true, m, n, k, 1, x.Data(), k, w.Data(), k, 1, out.Data, n)
	return t.op(out, func(o *Var) {
		G := o.Grad.Data
		if t.needs(x) { // dX = G · W
			tensor.Gemm(false, false, m, k, n, 1, G, n, w.Data(), k, 1, x.grad(), k)
		}
		if t.needs(w) { // dW = Gᵀ · X
			tensor.Gemm(true, false, n, k, m, 1, G, n, x.Data(), k, 1, w.grad(), k)
		}
		if t.needs(b) { // db = 1ᵀ · G
			ones := tensor.GetScratch(m)
			for i := range ones {
				ones[i] = 1
			}
			tensor.Gemm(false, false, 1, n, m, 1, ones, m, G, n, 1, b.grad(), n)
			tensor.PutScratch(ones)
		}
	}, x, w, b)
}
