package ag

import (
	"fmt"
	"math"

	"github.com/textarmor/textarmor/tensor"
)

// broadcast describes how two operands map onto a broadcast output.
type broadcast struct {
	out          []int
	sa, sb       []int // per-output-dim strides into a and b (0 = broadcast)
	sameA, sameB bool  // operand has the output's shape
	suffixB      bool  // b's shape is a suffix of a's and a has the output shape
	nb           int   // number of elements of b
}

func newBroadcast(a, b []int) (broadcast, error) {
	n := max(len(a), len(b))
	out := make([]int, n)
	sa, sb := make([]int, n), make([]int, n)
	strideA, strideB := 1, 1
	for i := n - 1; i >= 0; i-- {
		da, db := 1, 1
		if j := i - (n - len(a)); j >= 0 {
			da = a[j]
		}
		if j := i - (n - len(b)); j >= 0 {
			db = b[j]
		}
		switch {
		case da == db:
			out[i] = da
		case da == 1:
			out[i] = db
		case db == 1:
			out[i] = da
		default:
			return broadcast{}, fmt.Errorf("shapes %v and %v do not broadcast", a, b)
		}
		if da != 1 || out[i] == 1 {
			sa[i] = strideA
		}
		if db != 1 || out[i] == 1 {
			sb[i] = strideB
		}
		strideA *= da
		strideB *= db
	}
	bc := broadcast{out: out, sa: sa, sb: sb, nb: tensor.Numel(b)}
	bc.sameA = tensor.SameShape(a, out)
	bc.sameB = tensor.SameShape(b, out)
	if bc.sameA && len(b) <= len(a) && tensor.SameShape(b, a[len(a)-len(b):]) {
		bc.suffixB = true
	}
	return bc, nil
}

// each calls fn(i, ia, ib) for every output index with the operand indices.
func (bc broadcast) each(fn func(i, ia, ib int)) {
	n := tensor.Numel(bc.out)
	if bc.sameA && bc.sameB {
		for i := 0; i < n; i++ {
			fn(i, i, i)
		}
		return
	}
	if bc.suffixB {
		nb := bc.nb
		for i := 0; i < n; i++ {
			fn(i, i, i%nb)
		}
		return
	}
	idx := make([]int, len(bc.out))
	ia, ib := 0, 0
	for i := 0; i < n; i++ {
		fn(i, ia, ib)
		for d := len(idx) - 1; d >= 0; d-- {
			idx[d]++
			ia += bc.sa[d]
			ib += bc.sb[d]
			if idx[d] < bc.out[d] {
				break
			}
			ia -= bc.sa[d] * idx[d]
			ib -= bc.sb[d] * idx[d]
			idx[d] = 0
		}
	}
}

type binKind int

const (
	binAdd binKind = iota
	binSub
	binMul
	binDiv
)

func (t *Tape) binary(a, b *Var, kind binKind) *Var {
	bc, err := newBroadcast(a.Shape(), b.Shape())
	if err != nil {
		panic("ag: " + err.Error())
	}
	out := tensor.New(bc.out...)
	A, B, O := a.Data(), b.Data(), out.Data
	if bc.sameA && bc.sameB {
		return t.binarySame(a, b, out, kind)
	}
	switch kind {
	case binAdd:
		bc.each(func(i, ia, ib int) { O[i] = A[ia] + B[ib] })
	case binSub:
		bc.each(func(i, ia, ib int) { O[i] = A[ia] - B[ib] })
	case binMul:
		bc.each(func(i, ia, ib int) { O[i] = A[ia] * B[ib] })
	case binDiv:
		bc.each(func(i, ia, ib int) { O[i] = A[ia] / B[ib] })
	}
	return t.op(out, func(o *Var) {
		G := o.Grad.Data
		if t.needs(a) {
			ga := a.grad()
			switch kind {
			case binAdd, binSub:
				bc.each(func(i, ia, _ int) { ga[ia] += G[i] })
			case binMul:
				bc.each(func(i, ia, ib int) { ga[ia] += G[i] * B[ib] })
			case binDiv:
				bc.each(func(i, ia, ib int) { ga[ia] += G[i] / B[ib] })
			}
		}
		if t.needs(b) {
			gb := b.grad()
			switch kind {
			case binAdd:
				bc.each(func(i, _, ib int) { gb[ib] += G[i] })
			case binSub:
				bc.each(func(i, _, ib int) { gb[ib] -= G[i] })
			case binMul:
				bc.each(func(i, ia, ib int) { gb[ib] += G[i] * A[ia] })
			case binDiv:
				bc.each(func(i, ia, ib int) { gb[ib] -= G[i] * A[ia] / (B[ib] * B[ib]) })
			}
		}
	}, a, b)
}

// binarySame is binary for operands of one shape: plain loops instead of a
// closure call per element (the same arithmetic, so the same results).
func (t *Tape) binarySame(a, b *Var, out *tensor.Tensor, kind binKind) *Var {
	A, B, O := a.Data(), b.Data(), out.Data
	switch kind {
	case binAdd:
		for i := range O {
			O[i] = A[i] + B[i]
		}
	case binSub:
		for i := range O {
			O[i] = A[i] - B[i]
		}
	case binMul:
		for i := range O {
			O[i] = A[i] * B[i]
		}
	case binDiv:
		for i := range O {
			O[i] = A[i] / B[i]
		}
	}
	return t.op(out, func(o *Var) {
		G := o.Grad.Data
		if t.needs(a) {
			ga := a.grad()
			switch kind {
			case binAdd, binSub:
				for i, g := range G {
					ga[i] += g
				}
			case binMul:
				for i, g := range G {
					ga[i] += g * B[i]
				}
			case binDiv:
				for i, g := range G {
					ga[i] += g / B[i]
				}
			}
		}
		if t.needs(b) {
			gb := b.grad()
			switch kind {
			case binAdd:
				for i, g := range G {
					gb[i] += g
				}
			case binSub:
				for i, g := range G {
					gb[i] -= g
				}
			case binMul:
				for i, g := range G {
					gb[i] += g * A[i]
				}
			case binDiv:
				for i, g := range G {
					gb[i] -= g * A[i] / (B[i] * B[i])
				}
			}
		}
	}, a, b)
}

// Add returns a+b with NumPy broadcasting.
func (t *Tape) Add(a, b *Var) *Var { return t.binary(a, b, binAdd) }

// Sub returns a-b with broadcasting.
func (t *Tape) Sub(a, b *Var) *Var { return t.binary(a, b, binSub) }

// Mul returns a*b element-wise with broadcasting.
func (t *Tape) Mul(a, b *Var) *Var { return t.binary(a, b, binMul) }

// Div returns a/b element-wise with broadcasting.
func (t *Tape) Div(a, b *Var) *Var { return t.binary(a, b, binDiv) }

// unary applies f element-wise; df gives the derivative from input x and
// output y, so ops like tanh reuse their output.
func (t *Tape) unary(a *Var, f func(x float32) float32, df func(x, y float32) float32) *Var {
	return t.unaryVec(a, func(dst, src []float32) {
		for i, x := range src {
			dst[i] = f(x)
		}
	}, df)
}

// unaryVec is unary with the function applied to whole slices (forward
// fills dst from src, which do not overlap), for functions with a vector
// kernel.
func (t *Tape) unaryVec(a *Var, forward func(dst, src []float32), df func(x, y float32) float32) *Var {
	out := tensor.New(a.Shape()...)
	A, O := a.Data(), out.Data
	tensor.ParallelFor(len(A), 8, func(lo, hi int) { forward(O[lo:hi], A[lo:hi]) })
	return t.op(out, func(o *Var) {
		G, ga := o.Grad.Data, a.grad()
		tensor.ParallelFor(len(A), 8, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				ga[i] += G[i] * df(A[i], O[i])
			}
		})
	}, a)
}

// ReLU returns max(x, 0).
func (t *Tape) ReLU(a *Var) *Var {
	return t.unary(a, func(x float32) float32 { return max(x, 0) },
		func(x, _ float32) float32 {
			if x > 0 {
				return 1
			}
			return 0
		})
}

// Tanh returns tanh(x).
func (t *Tape) Tanh(a *Var) *Var {
	return t.unaryVec(a, tanhVec, func(_, y float32) float32 { return 1 - y*y })
}

// Sigmoid returns 1/(1+exp(-x)).
func (t *Tape) Sigmoid(a *Var) *Var {
	return t.unary(a, sigmoid32, func(_, y float32) float32 { return y * (1 - y) })
}

// GELU is the exact (erf) Gaussian error linear unit, as BERT uses it:
// x·Φ(x). Φ comes from a float32 erf good to 1.5e-7 (Abramowitz and Stegun
// 7.1.26) whose one exponential, e^(−x²/2), is also the derivative's
// density and runs through the vector kernel: a transformer evaluates
// millions of these per batch, and float64 math.Erf took a fifth of a
// forward pass.
func (t *Tape) GELU(a *Var) *Var {
	out := tensor.New(a.Shape()...)
	A, O := a.Data(), out.Data
	if t.NoGrad || !t.needs(a) {
		tensor.ParallelFor(len(A), 16, func(lo, hi int) { geluVec(O[lo:hi], nil, A[lo:hi]) })
		return t.op(out, nil, a)
	}
	// The derivative Φ(x) + x·φ(x) keeps the forward pass's Φ(x) and
	// e^(−x²/2), so the backward pass does not evaluate them again.
	deriv := make([]float32, len(A))
	tensor.ParallelFor(len(A), 16, func(lo, hi int) { geluVec(O[lo:hi], deriv[lo:hi], A[lo:hi]) })
	return t.op(out, func(o *Var) {
		G, ga := o.Grad.Data, a.grad()
		tensor.ParallelFor(len(A), 2, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				ga[i] += G[i] * deriv[i]
			}
		})
	}, a)
}

// geluVec sets y[i] = GELU(x[i]) and, when d is not nil, d[i] = GELU'(x[i]),
// a block of exponentials at a time.
func geluVec(y, d, x []float32) {
	const block = 256
	const invSqrt2Pi = 0.3989422804014327
	var e, c [block]float32
	for lo := 0; lo < len(x); lo += block {
		xs := x[lo:min(lo+block, len(x))]
		es, cs := e[:len(xs)], c[:len(xs)]
		for i, v := range xs {
			es[i] = -0.5 * v * v
		}
		expVec(es)
		for i := normalCDFSIMD(cs, xs, es); i < len(xs); i++ {
			cs[i] = normalCDF(xs[i], es[i])
		}
		ys := y[lo : lo+len(xs)]
		for i, v := range xs {
			ys[i] = v * cs[i]
		}
		if d != nil {
			ds := d[lo : lo+len(xs)]
			for i, v := range xs {
				ds[i] = cs[i] + v*invSqrt2Pi*es[i]
			}
		}
	}
}

// normalCDF is Φ(x) given e = e^(−x²/2): ½(1 + erf(x/√2)), with erf by
// Abramowitz and Stegun 7.1.26 (absolute error ≤ 1.5e-7).
func normalCDF(x, e float32) float32 {
	z := x * 0.70710678118654752
	if z < 0 {
		z = -z
	}
	k := 1 / (1 + 0.3275911*z)
	poly := k * (0.254829592 + k*(-0.284496736+k*(1.421413741+k*(-1.453152027+k*1.061405429))))
	erf := 1 - poly*e
	if x < 0 {
		erf = -erf
	}
	return 0.5 * (1 + erf)
}

// GELUTanh is GELU's tanh approximation, 0.5·x·(1 + tanh(√(2/π)·(x +
// 0.044715·x³))): Hugging Face's gelu_new and gelu_pytorch_tanh.
func (t *Tape) GELUTanh(a *Var) *Var {
	const c = 0.7978845608028654 // √(2/π)
	return t.unary(a, func(x float32) float32 {
		xf := float64(x)
		return float32(0.5 * xf * (1 + math.Tanh(c*(xf+0.044715*xf*xf*xf))))
	}, func(x, _ float32) float32 {
		xf := float64(x)
		th := math.Tanh(c * (xf + 0.044715*xf*xf*xf))
		return float32(0.5*(1+th) + 0.5*xf*(1-th*th)*c*(1+3*0.044715*xf*xf))
	})
}

// Exp returns e^x.
func (t *Tape) Exp(a *Var) *Var {
	return t.unary(a, func(x float32) float32 { return float32(math.Exp(float64(x))) },
		func(_, y float32) float32 { return y })
}

// Log returns ln(x).
func (t *Tape) Log(a *Var) *Var {
	return t.unary(a, func(x float32) float32 { return float32(math.Log(float64(x))) },
		func(x, _ float32) float32 { return 1 / x })
}

// Sqrt returns √x.
func (t *Tape) Sqrt(a *Var) *Var {
	return t.unary(a, func(x float32) float32 { return float32(math.Sqrt(float64(x))) },
		func(_, y float32) float32 { return 0.5 / y })
}

// Square returns x².
func (t *Tape) Square(a *Var) *Var {
	return t.unary(a, func(x float32) float32 { return x * x },
		func(x, _ float32) float32 { return 2 * x })
}

// Abs returns |x| (subgradient 0 at 0).
func (t *Tape) Abs(a *Var) *Var {
	return t.unary(a, func(x float32) float32 { return float32(math.Abs(float64(x))) },
		func(x, _ float32) float32 {
			switch {
			case x > 0:
				return 1
			case x < 0:
				return -1
			}
			return 0
		})
}

// Scale returns c·x.
func (t *Tape) Scale(a *Var, c float32) *Var {
	return t.unary(a, func(x float32) float32 { return c * x }, func(_, _ float32) float32 { return c })
}

// AddConst returns x+c.
func (t *Tape) AddConst(a *Var, c float32) *Var {
	return t.unary(a, func(x float32) float32 { return x + c }, func(_, _ float32) float32 { return 1 })
}

// StopGradient passes a's value on but no gradient back.
func (t *Tape) StopGradient(a *Var) *Var { return &Var{Value: a.Value} }

// Sum adds every element into a scalar.
func (t *Tape) Sum(a *Var) *Var {
	var s float64
	for _, x := range a.Data() {
		s += float64(x)
	}
	return t.op(tensor.Scalar(float32(s)), func(o *Var) {
		g, ga := o.Grad.Data[0], a.grad()
		for i := range ga {
			ga[i] += g
		}
	}, a)
}

// Mean averages every element into a scalar.
func (t *Tape) Mean(a *Var) *Var { return t.Scale(t.Sum(a), 1/float32(len(a.Data()))) }

// SumLast sums over the last axis: [..., n] → [...].
func (t *Tape) SumLast(a *Var) *Var {
	sh := a.Shape()
	n := sh[len(sh)-1]
	rows := len(a.Data()) / max(n, 1)
	out := tensor.New(sh[:len(sh)-1]...)
	A := a.Data()
	for r := 0; r < rows; r++ {
		var s float32
		for _, x := range A[r*n : (r+1)*n] {
			s += x
		}
		out.Data[r] = s
	}
	return t.op(out, func(o *Var) {
		G, ga := o.Grad.Data, a.grad()
		for r := 0; r < rows; r++ {
			for j := r * n; j < (r+1)*n; j++ {
				ga[j] += G[r]
			}
		}
	}, a)
}

// Reshape returns a view of a with another shape; gradients flow through.
func (t *Tape) Reshape(a *Var, shape ...int) *Var {
	out := a.Value.Reshape(shape...)
	return t.op(out, func(o *Var) {
		if a.Grad == nil && a.param == nil {
			// a's first gradient: o's buffer under a's shape, no copy
			// (o is done with it; ASCC reshapes [B·L, F] gradients of
			// tens of MB every inner step).
			a.Grad = tensor.From(o.Grad.Data, a.Shape()...)
			return
		}
		G, ga := o.Grad.Data, a.grad()
		for i := range ga {
			ga[i] += G[i]
		}
	}, a)
}
