package ag

import (
	"fmt"
	"math"
	"slices"

	"github.com/textarmor/textarmor/tensor"
)

// Lookup gathers rows of table [V, D] for ids, giving [len(ids), D] (reshape
// as needed). Only the rows used receive gradient; rows listed in skipGrad
// (the padding id, say) receive none.
func (t *Tape) Lookup(table *Var, ids []int32, skipGrad ...int32) *Var {
	v, d := table.Shape()[0], table.Shape()[1]
	out := tensor.New(len(ids), d)
	T := table.Data()
	for i, id := range ids {
		if id < 0 || int(id) >= v {
			panic(fmt.Sprintf("ag.Lookup: id %d outside table of %d rows", id, v))
		}
		copy(out.Data[i*d:(i+1)*d], T[int(id)*d:int(id+1)*d])
	}
	return t.op(out, func(o *Var) {
		G := o.Grad.Data
		gt := table.gradRows()
		p := table.param
	next:
		for i, id := range ids {
			for _, s := range skipGrad {
				if id == s {
					continue next
				}
			}
			row := gt[int(id)*d : int(id+1)*d]
			for j, g := range G[i*d : (i+1)*d] {
				row[j] += g
			}
			if p != nil && p.rowSparse {
				p.touch(id)
			}
		}
	}, table)
}

// LookupHull returns, for each group of n consecutive ids, the elementwise
// minimum and maximum of their rows of table [V, D]: lo and hi [len(ids)/n,
// D], the corners of the box the group's vectors span. It equals min and
// max over time of Lookup(table, ids) reshaped to [G, n, D] (ties go to the
// group's first such id) without that [G, n, D] copy, which for IBP's word
// boxes (nine candidates per distinct word) dominated the step. Gradients
// go to the arg-min and arg-max rows; ids in skipGrad get none.
func (t *Tape) LookupHull(table *Var, ids []int32, n int, skipGrad ...int32) (lo, hi *Var) {
	v, d := table.Shape()[0], table.Shape()[1]
	if n <= 0 || len(ids)%n != 0 {
		panic(fmt.Sprintf("ag.LookupHull: %d ids in groups of %d", len(ids), n))
	}
	for _, id := range ids {
		if id < 0 || int(id) >= v {
			panic(fmt.Sprintf("ag.LookupHull: id %d outside table of %d rows", id, v))
		}
	}
	g := len(ids) / n
	T := table.Data()
	L, U := tensor.New(g, d), tensor.New(g, d)
	argL, argU := make([]int32, g*d), make([]int32, g*d) // the winning ids
	tensor.ParallelFor(g, n*d, func(s, e int) {
		for i := s; i < e; i++ {
			l, u := L.Data[i*d:(i+1)*d], U.Data[i*d:(i+1)*d]
			al, au := argL[i*d:(i+1)*d], argU[i*d:(i+1)*d]
			first := ids[i*n]
			copy(l, T[int(first)*d:int(first+1)*d])
			copy(u, l)
			for k := range al {
				al[k], au[k] = first, first
			}
			for _, id := range ids[i*n+1 : (i+1)*n] {
				for k, x := range T[int(id)*d : int(id+1)*d] {
					if x < l[k] {
						l[k], al[k] = x, id
					}
					if x > u[k] {
						u[k], au[k] = x, id
					}
				}
			}
		}
	})
	back := func(arg []int32) func(o *Var) {
		return func(o *Var) {
			G := o.Grad.Data
			gt := table.gradRows()
			p := table.param
			for i, id := range arg {
				if slices.Contains(skipGrad, id) {
					continue
				}
				gt[int(id)*d+i%d] += G[i]
				if p != nil && p.rowSparse {
					p.touch(id)
				}
			}
		}
	}
	return t.op(L, back(argL), table), t.op(U, back(argU), table)
}

// Dropout zeroes each element with probability p and scales the rest by
// 1/(1-p) when the tape is in training mode; otherwise it is the identity.
func (t *Tape) Dropout(a *Var, p float32) *Var {
	if !t.Train || p <= 0 {
		return a
	}
	keep := 1 / (1 - p)
	mask := make([]float32, len(a.Data()))
	for i := range mask {
		if t.Rng.Float32() >= p {
			mask[i] = keep
		}
	}
	return t.Mul(a, t.Const(tensor.From(mask, a.Shape()...)))
}

// Softmax normalises over the last axis.
func (t *Tape) Softmax(a *Var) *Var {
	rows, n := rowsCols(a.Shape())
	out := tensor.New(a.Shape()...)
	A, O := a.Data(), out.Data
	for r := 0; r < rows; r++ {
		softmaxRow(A[r*n:(r+1)*n], O[r*n:(r+1)*n])
	}
	// Probabilities below float32's normal range are 0 for any use, and as
	// subnormals they slow every product they enter many times over (x86
	// takes a microcode assist per operation): ASCC's convex weights, for
	// one, feed millions of multiply-adds.
	flushSubnormals(O)
	return t.op(out, func(o *Var) {
		G, ga := o.Grad.Data, a.grad()
		for r := 0; r < rows; r++ {
			y, g := O[r*n:(r+1)*n], G[r*n:(r+1)*n]
			var dot float32
			for j := range y {
				dot += y[j] * g[j]
			}
			for j := range y {
				ga[r*n+j] += y[j] * (g[j] - dot)
			}
		}
	}, a)
}

// SoftmaxRow writes softmax(x) into y, stably.
func softmaxRow(x, y []float32) {
	m := float32(math.Inf(-1))
	for _, v := range x {
		m = max(m, v)
	}
	var s float64
	for j, v := range x {
		e := math.Exp(float64(v - m))
		y[j] = float32(e)
		s += e
	}
	inv := float32(1 / s)
	for j := range y {
		y[j] *= inv
	}
}

// SoftmaxRows applies a stable softmax to each row of x [rows, n] in place;
// batched predict uses it to turn logits into probabilities.
func SoftmaxRows(x []float32, n int) {
	for r := 0; r+n <= len(x); r += n {
		softmaxRow(x[r:r+n], x[r:r+n])
	}
}

// LogSoftmax returns log(softmax(x)) over the last axis.
func (t *Tape) LogSoftmax(a *Var) *Var {
	rows, n := rowsCols(a.Shape())
	out := tensor.New(a.Shape()...)
	A, O := a.Data(), out.Data
	for r := 0; r < rows; r++ {
		logSoftmaxRow(A[r*n:(r+1)*n], O[r*n:(r+1)*n])
	}
	return t.op(out, func(o *Var) {
		G, ga := o.Grad.Data, a.grad()
		for r := 0; r < rows; r++ {
			y, g := O[r*n:(r+1)*n], G[r*n:(r+1)*n]
			var s float32
			for _, v := range g {
				s += v
			}
			for j := range y {
				ga[r*n+j] += g[j] - float32(math.Exp(float64(y[j])))*s
			}
		}
	}, a)
}

func logSoftmaxRow(x, y []float32) {
	m := float32(math.Inf(-1))
	for _, v := range x {
		m = max(m, v)
	}
	var s float64
	for _, v := range x {
		s += math.Exp(float64(v - m))
	}
	lse := m + float32(math.Log(s))
	for j, v := range x {
		y[j] = v - lse
	}
}

// CrossEntropy is the mean negative log-likelihood of labels under
// softmax(logits) for logits [B, C]; weights (optional, length B) weight
// each example and the mean divides by their sum.
func (t *Tape) CrossEntropy(logits *Var, labels []int, weights []float32) *Var {
	b, c := rowsCols(logits.Shape())
	if len(labels) != b {
		panic(fmt.Sprintf("ag.CrossEntropy: %d labels for %d rows", len(labels), b))
	}
	if c >= wideSoftmax {
		return t.crossEntropyWide(logits, labels, weights)
	}
	L := logits.Data()
	logp := make([]float32, b*c)
	var loss, wsum float64
	for r := 0; r < b; r++ {
		if labels[r] < 0 || labels[r] >= c {
			panic(fmt.Sprintf("ag.CrossEntropy: label %d outside %d classes", labels[r], c))
		}
		logSoftmaxRow(L[r*c:(r+1)*c], logp[r*c:(r+1)*c])
		w := 1.0
		if weights != nil {
			w = float64(weights[r])
		}
		loss -= w * float64(logp[r*c+labels[r]])
		wsum += w
	}
	if wsum == 0 {
		wsum = 1
	}
	return t.op(tensor.Scalar(float32(loss/wsum)), func(o *Var) {
		g := o.Grad.Data[0] / float32(wsum)
		gl := logits.grad()
		for r := 0; r < b; r++ {
			w := float32(1)
			if weights != nil {
				w = weights[r]
			}
			for j := 0; j < c; j++ {
				p := float32(math.Exp(float64(logp[r*c+j])))
				if j == labels[r] {
					p--
				}
				gl[r*c+j] += g * w * p
			}
		}
	}, logits)
}

// LayerNorm normalises the last axis to zero mean and unit variance, then
// scales by gamma and shifts by beta (both [n]).
func (t *Tape) LayerNorm(a, gamma, beta *Var, eps float32) *Var {
	rows, n := rowsCols(a.Shape())
	out := tensor.New(a.Shape()...)
	xhat := make([]float32, len(a.Data()))
	rstd := make([]float32, rows)
	A, Gm, Bt := a.Data(), gamma.Data(), beta.Data()
	tensor.ParallelFor(rows, 4*n, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			x := A[r*n : (r+1)*n]
			var mean, v float64
			for _, e := range x {
				mean += float64(e)
			}
			mean /= float64(n)
			for _, e := range x {
				d := float64(e) - mean
				v += d * d
			}
			rs := float32(1 / math.Sqrt(v/float64(n)+float64(eps)))
			rstd[r] = rs
			for j, e := range x {
				h := (e - float32(mean)) * rs
				xhat[r*n+j] = h
				out.Data[r*n+j] = h*Gm[j] + Bt[j]
			}
		}
	})
	return t.op(out, func(o *Var) {
		G := o.Grad.Data
		if t.needs(gamma) || t.needs(beta) {
			gg, gb := gamma.grad(), beta.grad()
			for r := 0; r < rows; r++ {
				for j := 0; j < n; j++ {
					gg[j] += G[r*n+j] * xhat[r*n+j]
					gb[j] += G[r*n+j]
				}
			}
		}
		if !t.needs(a) {
			return
		}
		ga := a.grad()
		tensor.ParallelFor(rows, 6*n, func(lo, hi int) {
			for r := lo; r < hi; r++ {
				// dx = rstd/n · (n·dxhat − Σdxhat − xhat·Σ(dxhat·xhat))
				var s1, s2 float32
				for j := 0; j < n; j++ {
					dh := G[r*n+j] * Gm[j]
					s1 += dh
					s2 += dh * xhat[r*n+j]
				}
				k := rstd[r] / float32(n)
				for j := 0; j < n; j++ {
					dh := G[r*n+j] * Gm[j]
					ga[r*n+j] += k * (float32(n)*dh - s1 - xhat[r*n+j]*s2)
				}
			}
		})
	}, a, gamma, beta)
}

// Concat joins vars along axis; all other axes must agree.
func (t *Tape) Concat(axis int, vs ...*Var) *Var {
	sh0 := vs[0].Shape()
	if axis < 0 {
		axis += len(sh0)
	}
	outer := tensor.Numel(sh0[:axis])
	inner := tensor.Numel(sh0[axis+1:])
	total := 0
	for _, v := range vs {
		sh := v.Shape()
		if len(sh) != len(sh0) || tensor.Numel(sh[:axis]) != outer || tensor.Numel(sh[axis+1:]) != inner {
			panic(fmt.Sprintf("ag.Concat: shape %v does not fit %v on axis %d", sh, sh0, axis))
		}
		total += sh[axis]
	}
	outShape := append([]int(nil), sh0...)
	outShape[axis] = total
	out := tensor.New(outShape...)
	rowOut := total * inner
	off := 0
	offs := make([]int, len(vs))
	for i, v := range vs {
		offs[i] = off
		w := v.Shape()[axis] * inner
		for o := 0; o < outer; o++ {
			copy(out.Data[o*rowOut+off:o*rowOut+off+w], v.Data()[o*w:(o+1)*w])
		}
		off += w
	}
	return t.op(out, func(o *Var) {
		G := o.Grad.Data
		for i, v := range vs {
			if !t.needs(v) {
				continue
			}
			w := v.Shape()[axis] * inner
			gv := v.grad()
			for r := 0; r < outer; r++ {
				src := G[r*rowOut+offs[i] : r*rowOut+offs[i]+w]
				dst := gv[r*w : (r+1)*w]
				for j := range dst {
					dst[j] += src[j]
				}
			}
		}
	}, vs...)
}

// Slice takes indices [from, to) of axis.
func (t *Tape) Slice(a *Var, axis, from, to int) *Var {
	sh := a.Shape()
	if axis < 0 {
		axis += len(sh)
	}
	if from < 0 || to > sh[axis] || from > to {
		panic(fmt.Sprintf("ag.Slice: [%d,%d) of axis %d in %v", from, to, axis, sh))
	}
	outer, inner := tensor.Numel(sh[:axis]), tensor.Numel(sh[axis+1:])
	outShape := append([]int(nil), sh...)
	outShape[axis] = to - from
	out := tensor.New(outShape...)
	rowIn, w := sh[axis]*inner, (to-from)*inner
	for o := 0; o < outer; o++ {
		copy(out.Data[o*w:(o+1)*w], a.Data()[o*rowIn+from*inner:o*rowIn+from*inner+w])
	}
	return t.op(out, func(o *Var) {
		G, ga := o.Grad.Data, a.grad()
		for r := 0; r < outer; r++ {
			dst := ga[r*rowIn+from*inner : r*rowIn+from*inner+w]
			for j, g := range G[r*w : (r+1)*w] {
				dst[j] += g
			}
		}
	}, a)
}

// Gather picks rows of a [R, n...] by index, giving [len(idx), n...]; rows
// may repeat and their gradients add up.
func (t *Tape) Gather(a *Var, idx []int) *Var {
	sh := a.Shape()
	inner := tensor.Numel(sh[1:])
	outShape := append([]int{len(idx)}, sh[1:]...)
	out := tensor.New(outShape...)
	for i, r := range idx {
		if r < 0 || r >= sh[0] {
			panic(fmt.Sprintf("ag.Gather: row %d of %d", r, sh[0]))
		}
		copy(out.Data[i*inner:(i+1)*inner], a.Data()[r*inner:(r+1)*inner])
	}
	return t.op(out, func(o *Var) {
		G, ga := o.Grad.Data, a.grad()
		for i, r := range idx {
			dst := ga[r*inner : (r+1)*inner]
			for j, g := range G[i*inner : (i+1)*inner] {
				dst[j] += g
			}
		}
	}, a)
}

// Norm returns the L2 norm over every axis from `from` on: a [B, n] with
// from=1 gives per-row norms [B]; a [B, L, D] with from=1 gives one norm per
// sequence. eps keeps the gradient finite at zero.
func (t *Tape) Norm(a *Var, from int, eps float32) *Var {
	sh := a.Shape()
	outer, inner := tensor.Numel(sh[:from]), tensor.Numel(sh[from:])
	out := tensor.New(sh[:from]...)
	A := a.Data()
	for r := 0; r < outer; r++ {
		var s float64
		for _, x := range A[r*inner : (r+1)*inner] {
			s += float64(x) * float64(x)
		}
		out.Data[r] = float32(math.Sqrt(s + float64(eps)))
	}
	return t.op(out, func(o *Var) {
		G, ga := o.Grad.Data, a.grad()
		for r := 0; r < outer; r++ {
			k := G[r] / out.Data[r]
			for j := r * inner; j < (r+1)*inner; j++ {
				ga[j] += k * A[j]
			}
		}
	}, a)
}
