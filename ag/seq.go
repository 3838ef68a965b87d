package ag

import (
	"fmt"

	"github.com/textarmor/textarmor/tensor"
)

// Conv1D is a narrow ("valid") convolution over time of x [B, L, D] with a
// window of width w, giving [B, L-w+1, F].
//
// The weight is stored as [D, w·F], column block j holding the filter taps
// at offset j, so the whole batch needs one GEMM (X·W, [B·L, w·F]) followed
// by a shifted sum; the backward pass is again two GEMMs. Sequences must be
// padded to at least w positions.
func (t *Tape) Conv1D(x, weight, bias *Var, width int) *Var {
	xs := x.Shape()
	if len(xs) != 3 {
		panic(fmt.Sprintf("ag.Conv1D: input %v, want [B, L, D]", xs))
	}
	return t.conv1D(x, nil, nil, xs[0], xs[1], weight, bias, width)
}

// Conv1DRows is Conv1D of the [B, L] positions whose input vectors are rows
// of x [U, D]: position p reads x[rows[p]]. A text's vector depends only on
// its word, so x can hold one row per distinct word of a batch: the
// projection X·W then costs the distinct words instead of the positions,
// and the sparse backward pass adds into the words' rows.
func (t *Tape) Conv1DRows(x *Var, rows []int, b, l int, weight, bias *Var, width int) *Var {
	if xs := x.Shape(); len(xs) != 2 || len(rows) != b*l {
		panic(fmt.Sprintf("ag.Conv1DRows: input %v, %d rows for %d×%d positions", xs, len(rows), b, l))
	}
	checkRows("ag.Conv1DRows", rows, x.Shape()[0])
	return t.conv1D(x, rows, nil, b, l, weight, bias, width)
}

// Conv1DRowsScaled is Conv1DRows of the positions' rows times a scalar per
// position: position p's input is scale[p]·x[rows[p]] (scale holds B·L
// values). FLAT's word masks scale each word's embedding; by linearity the
// windows scale each position's projected taps instead, so the projection
// still costs the distinct words. The gradient reaches x, weight, bias and
// scale.
func (t *Tape) Conv1DRowsScaled(x *Var, rows []int, scale *Var, b, l int, weight, bias *Var, width int) *Var {
	if xs := x.Shape(); len(xs) != 2 || len(rows) != b*l || len(scale.Data()) != b*l {
		panic(fmt.Sprintf("ag.Conv1DRowsScaled: input %v, %d rows and %d scales for %d×%d positions", xs, len(rows), len(scale.Data()), b, l))
	}
	checkRows("ag.Conv1DRowsScaled", rows, x.Shape()[0])
	return t.conv1D(x, rows, scale, b, l, weight, bias, width)
}

// checkRows panics when a position's row lies outside an input of n rows.
func checkRows(op string, rows []int, n int) {
	for _, r := range rows {
		if r < 0 || r >= n {
			panic(fmt.Sprintf("%s: row %d outside an input of %d", op, r, n))
		}
	}
}

// conv1D is Conv1D with position p's input row rows[p] of x (nil: row p),
// times scale[p] when scale is not nil.
func (t *Tape) conv1D(x *Var, rows []int, scale *Var, b, l int, weight, bias *Var, width int) *Var {
	d := x.Shape()[len(x.Shape())-1]
	if weight.Shape()[0] != d || weight.Shape()[1]%width != 0 {
		panic(fmt.Sprintf("ag.Conv1D: input %v, weight %v, width %d", x.Shape(), weight.Shape(), width))
	}
	if l < width {
		panic(fmt.Sprintf("ag.Conv1D: sequence length %d shorter than window %d", l, width))
	}
	f := weight.Shape()[1] / width
	lo := l - width + 1
	wf := width * f
	n := len(x.Data()) / d // rows of x
	y := tensor.GetScratch(n * wf)
	defer tensor.PutScratch(y)
	tensor.Gemm(false, false, n, wf, d, 1, x.Data(), d, weight.Data(), wf, 0, y, wf)
	var sc []float32
	if scale != nil {
		sc = scale.Data()
	}
	out := convWindows(y, rows, sc, bias, b, l, f, width)
	return t.op(out, func(o *Var) {
		G := o.Grad.Data
		if nz := conv1DNonzeros(G, lo, f, b*l*f/sparseConvWork); nz != nil {
			conv1DBackwardSparse(t, x, rows, scale, weight, nz, b, l, d, f, width)
		} else {
			conv1DBackwardDense(t, x, rows, scale, weight, G, b, l, lo, d, f, width)
		}
		if bias != nil && t.needs(bias) {
			gb := bias.grad()
			for r := 0; r < b*lo; r++ {
				for k, g := range G[r*f : (r+1)*f] {
					gb[k] += g
				}
			}
		}
	}, x, weight, bias, scale)
}

// convWindows sums the taps of every window from the projected rows y
// (position p's row is rows[p], or p when rows is nil; its block j is
// x_p·W_j), each times scale[p] when scale is not nil, and adds the bias.
func convWindows(y []float32, rows []int, scale []float32, bias *Var, b, l, f, width int) *tensor.Tensor {
	lo, wf := l-width+1, width*f
	out := tensor.New(b, lo, f)
	var B []float32
	if bias != nil {
		B = bias.Data()
	}
	O := out.Data
	tensor.ParallelFor(b*lo, wf, func(s, e int) {
		for r := s; r < e; r++ {
			bi, ti := r/lo, r%lo
			o := O[r*f : (r+1)*f]
			if B != nil {
				copy(o, B)
			}
			for j := 0; j < width; j++ {
				p := bi*l + ti + j
				s := float32(1) // 1·v is exact: unscaled sums are unchanged
				if scale != nil {
					s = scale[p]
				}
				if rows != nil {
					p = rows[p]
				}
				src := y[p*wf+j*f : p*wf+(j+1)*f]
				for k := range o {
					o[k] += s * src[k]
				}
			}
		}
	})
	return out
}

// Conv1DProjected is Conv1D from the projected rows y = x·W [B, L,
// width·F] instead of x and W (for inputs whose projection is cheaper to
// build directly: ASCC's convex combinations of candidate words, each
// candidate projected once). The gradient reaches y and the bias.
func (t *Tape) Conv1DProjected(y, bias *Var, width int) *Var {
	ys := y.Shape()
	if len(ys) != 3 || ys[2]%width != 0 || ys[1] < width {
		panic(fmt.Sprintf("ag.Conv1DProjected: rows %v, width %d", ys, width))
	}
	return t.conv1DProjected(y, nil, ys[0], ys[1], bias, width)
}

// Conv1DProjectedRows is Conv1DProjected of the [B, L] positions whose
// projected rows are rows of y [U, width·F]: position p reads y[rows[p]].
// IBP bounds each distinct word's taps once; the windows then read the
// words' rows directly instead of a [B, L, width·F] copy per bound.
func (t *Tape) Conv1DProjectedRows(y *Var, rows []int, b, l int, bias *Var, width int) *Var {
	ys := y.Shape()
	if len(ys) != 2 || ys[1]%width != 0 || l < width || len(rows) != b*l {
		panic(fmt.Sprintf("ag.Conv1DProjectedRows: rows %v, %d positions for %d×%d, width %d", ys, len(rows), b, l, width))
	}
	checkRows("ag.Conv1DProjectedRows", rows, ys[0])
	return t.conv1DProjected(y, rows, b, l, bias, width)
}

// conv1DProjected is Conv1DProjected with position p's row rows[p] of y
// (nil: row p). The backward pass skips zero output gradients, so under
// max-over-time pooling it costs the pooled windows, not every position.
func (t *Tape) conv1DProjected(y *Var, rows []int, b, l int, bias *Var, width int) *Var {
	wf := y.Shape()[len(y.Shape())-1]
	f, lo := wf/width, l-width+1
	out := convWindows(y.Data(), rows, nil, bias, b, l, f, width)
	return t.op(out, func(o *Var) {
		G := o.Grad.Data
		if t.needs(y) {
			gy := y.grad()
			for r := 0; r < b*lo; r++ {
				bi, ti := r/lo, r%lo
				for k, v := range G[r*f : (r+1)*f] {
					if v == 0 {
						continue
					}
					for j := 0; j < width; j++ {
						p := bi*l + ti + j
						if rows != nil {
							p = rows[p]
						}
						gy[p*wf+j*f+k] += v
					}
				}
			}
		}
		if bias != nil && t.needs(bias) {
			gb := bias.grad()
			for r := 0; r < b*lo; r++ {
				for k, v := range G[r*f : (r+1)*f] {
					gb[k] += v
				}
			}
		}
	}, y, bias)
}

// sparseConvWork is how many GEMM multiply-adds one multiply-add of the
// sparse backward is taken to cost (row-wise axpy against a blocked GEMM
// kernel); the sparse path runs when it is cheaper by that measure.
const sparseConvWork = 24

// conv1DNonzero is one non-zero output gradient: text bi, window ti, filter k.
type conv1DNonzero struct {
	bi, ti, k int
	g         float32
}

// conv1DNonzeros lists the non-zero entries of the output gradient G
// [B, lo, F] in (text, window, filter) order, or returns nil once there are
// more than limit. Under max-over-time pooling at most one window per text
// and filter has a gradient, so the list is short and the backward pass
// costs O(nonzeros·w·D) instead of two GEMMs over every position.
func conv1DNonzeros(G []float32, lo, f, limit int) []conv1DNonzero {
	if limit <= 0 {
		return nil
	}
	nz := []conv1DNonzero{} // non-nil: an all-zero gradient takes the sparse path
	for i, g := range G {
		if g != 0 {
			if len(nz) == limit {
				return nil
			}
			nz = append(nz, conv1DNonzero{g: g, bi: i / (lo * f), ti: i / f % lo, k: i % f})
		}
	}
	return nz
}

// conv1DBackwardDense is the general backward pass: the output gradient is
// spread back to the rows of Y = X·W, then two GEMMs.
func conv1DBackwardDense(t *Tape, x *Var, rows []int, scale, weight *Var, G []float32, b, l, lo, d, f, width int) {
	wf := width * f
	dy := tensor.GetScratch(b * l * wf)
	defer tensor.PutScratch(dy)
	// Row s of Y fed output t = s-j through block j.
	tensor.ParallelFor(b*l, wf, func(s, e int) {
		for r := s; r < e; r++ {
			bi, si := r/l, r%l
			for j := 0; j < width; j++ {
				ti := si - j
				if ti < 0 || ti >= lo {
					clear(dy[r*wf+j*f : r*wf+(j+1)*f])
					continue
				}
				copy(dy[r*wf+j*f:r*wf+(j+1)*f], G[(bi*lo+ti)*f:(bi*lo+ti+1)*f])
			}
		}
	})
	if scale != nil {
		// Position p's projected taps were scaled by scale[p]: its scale's
		// gradient is their dot product with dy's row, and dy's row is
		// scaled for x and W.
		sc := scale.Data()
		if t.needs(scale) {
			n := len(x.Data()) / d
			y := tensor.GetScratch(n * wf)
			defer tensor.PutScratch(y)
			tensor.Gemm(false, false, n, wf, d, 1, x.Data(), d, weight.Data(), wf, 0, y, wf)
			gs := scale.grad()
			for p := 0; p < b*l; p++ {
				r := p
				if rows != nil {
					r = rows[p]
				}
				gs[p] += tensor.Dot(y[r*wf:(r+1)*wf], dy[p*wf:(p+1)*wf])
			}
		}
		for p := 0; p < b*l; p++ {
			row := dy[p*wf : (p+1)*wf]
			for k := range row {
				row[k] *= sc[p]
			}
		}
	}
	n := b * l
	if rows != nil {
		// Sum the positions' gradients into their rows of x.
		n = len(x.Data()) / d
		dr := tensor.GetScratch(n * wf)
		defer tensor.PutScratch(dr)
		clear(dr)
		for p, r := range rows {
			tensor.Axpy(1, dy[p*wf:(p+1)*wf], dr[r*wf:(r+1)*wf])
		}
		dy = dr
	}
	if t.needs(x) {
		tensor.Gemm(false, true, n, d, wf, 1, dy, wf, weight.Data(), wf, 1, x.grad(), d)
	}
	if t.needs(weight) {
		tensor.Gemm(true, false, d, wf, n, 1, x.Data(), d, dy, wf, 1, weight.grad(), wf)
	}
}

// conv1DBackwardSparse accumulates the same gradients from the listed
// non-zero output gradients only: output (bi, ti, k) with gradient g adds
// g·W[:, j·F+k] to the input gradient at position ti+j and g·x[bi, ti+j] to
// the weight column j·F+k. Texts (input gradient) and filters (weight
// gradient) are split across workers, each summing in a fixed order, so
// the result does not depend on the number of workers.
func conv1DBackwardSparse(t *Tape, x *Var, rows []int, scale, weight *Var, nz []conv1DNonzero, b, l, d, f, width int) {
	wf := width * f
	W, X := weight.Data(), x.Data()
	row := func(p int) int { // x's row for position p
		if rows != nil {
			return rows[p] * d
		}
		return p * d
	}
	// scaled is g times position p's scale (g itself without scales).
	scaled := func(g float32, p int) float32 { return g }
	if scale != nil {
		sc := scale.Data()
		scaled = func(g float32, p int) float32 { return g * sc[p] }
	}
	var wt []float32 // Wᵀ: one contiguous row per column of W
	if t.needs(x) || (scale != nil && t.needs(scale)) {
		wt = tensor.GetScratch(wf * d)
		defer tensor.PutScratch(wt)
		tensor.TransposeInto(wt, W, d, wf)
	}
	if scale != nil && t.needs(scale) {
		// Output (bi, ti, k) took scale[p]·(x_p·W[:, j·F+k]) from position
		// p = ti+j.
		gs := scale.grad()
		for _, n := range nz {
			for j := 0; j < width; j++ {
				p := n.bi*l + n.ti + j
				r := row(p)
				gs[p] += n.g * tensor.Dot(X[r:r+d], wt[(j*f+n.k)*d:(j*f+n.k+1)*d])
			}
		}
	}
	if t.needs(x) {
		// nz is in text order: find each text's run.
		start := make([]int, b+1)
		for _, n := range nz {
			start[n.bi+1]++
		}
		for i := 0; i < b; i++ {
			start[i+1] += start[i]
		}
		dx := x.grad()
		// With shared rows, texts can write the same row: one worker (a
		// cost of 0 keeps ParallelFor on the caller).
		cost := len(nz)/max(b, 1)*width*d + 1
		if rows != nil {
			cost = 0
		}
		tensor.ParallelFor(b, cost, func(s, e int) {
			for _, n := range nz[start[s]:start[e]] {
				for j := 0; j < width; j++ {
					p := n.bi*l + n.ti + j
					r := row(p)
					tensor.Axpy(scaled(n.g, p), wt[(j*f+n.k)*d:(j*f+n.k+1)*d], dx[r:r+d])
				}
			}
		})
	}
	if t.needs(weight) {
		// Bucket by filter, keeping text and window order inside a bucket.
		start := make([]int, f+1)
		for _, n := range nz {
			start[n.k+1]++
		}
		for k := 0; k < f; k++ {
			start[k+1] += start[k]
		}
		byFilter := make([]conv1DNonzero, len(nz))
		next := append([]int(nil), start[:f]...)
		for _, n := range nz {
			byFilter[next[n.k]] = n
			next[n.k]++
		}
		dwt := tensor.GetScratch(wf * d) // gradient of Wᵀ
		defer tensor.PutScratch(dwt)
		clear(dwt)
		tensor.ParallelFor(f, len(nz)/max(f, 1)*width*d+1, func(s, e int) {
			for _, n := range byFilter[start[s]:start[e]] {
				for j := 0; j < width; j++ {
					p := n.bi*l + n.ti + j
					r := row(p)
					tensor.Axpy(scaled(n.g, p), X[r:r+d], dwt[(j*f+n.k)*d:(j*f+n.k+1)*d])
				}
			}
		})
		dw := weight.grad()
		for e := 0; e < d; e++ {
			g := dw[e*wf : (e+1)*wf]
			for c := range g {
				g[c] += dwt[c*d+e]
			}
		}
	}
}

// validSteps returns how many leading time steps of row i count; nil
// lengths mean all of them. Every row keeps at least one step.
func validSteps(lengths []int, i, steps int) int {
	if lengths == nil {
		return steps
	}
	return max(1, min(lengths[i], steps))
}

// MaxOverTime takes, per row and feature, the maximum over the first
// lengths[b] steps of x [B, T, F] (all steps when lengths is nil).
func (t *Tape) MaxOverTime(x *Var, lengths []int) *Var {
	xs := x.Shape()
	b, steps, f := xs[0], xs[1], xs[2]
	out := tensor.New(b, f)
	arg := make([]int32, b*f)
	X := x.Data()
	for i := 0; i < b; i++ {
		n := validSteps(lengths, i, steps)
		o, a := out.Data[i*f:(i+1)*f], arg[i*f:(i+1)*f]
		copy(o, X[i*steps*f:i*steps*f+f])
		for s := 1; s < n; s++ {
			row := X[(i*steps+s)*f : (i*steps+s+1)*f]
			for k, v := range row {
				if v > o[k] {
					o[k], a[k] = v, int32(s)
				}
			}
		}
	}
	return t.op(out, func(o *Var) {
		G, gx := o.Grad.Data, x.grad()
		for i := 0; i < b; i++ {
			for k := 0; k < f; k++ {
				gx[(i*steps+int(arg[i*f+k]))*f+k] += G[i*f+k]
			}
		}
	}, x)
}

// MeanOverTime averages x [B, T, F] over the first lengths[b] steps of each
// row (all steps when lengths is nil).
func (t *Tape) MeanOverTime(x *Var, lengths []int) *Var {
	xs := x.Shape()
	b, steps, f := xs[0], xs[1], xs[2]
	out := tensor.New(b, f)
	X := x.Data()
	for i := 0; i < b; i++ {
		n := validSteps(lengths, i, steps)
		o := out.Data[i*f : (i+1)*f]
		for s := 0; s < n; s++ {
			for k, v := range X[(i*steps+s)*f : (i*steps+s+1)*f] {
				o[k] += v
			}
		}
		inv := 1 / float32(n)
		for k := range o {
			o[k] *= inv
		}
	}
	return t.op(out, func(o *Var) {
		G, gx := o.Grad.Data, x.grad()
		for i := 0; i < b; i++ {
			n := validSteps(lengths, i, steps)
			inv := 1 / float32(n)
			for s := 0; s < n; s++ {
				dst := gx[(i*steps+s)*f : (i*steps+s+1)*f]
				for k, g := range G[i*f : (i+1)*f] {
					dst[k] += g * inv
				}
			}
		}
	}, x)
}

// MaskTime zeroes the steps of x [B, T, F] at or after lengths[b]; the
// gradient of those steps is zero too.
func (t *Tape) MaskTime(x *Var, lengths []int) *Var {
	xs := x.Shape()
	b, steps, f := xs[0], xs[1], xs[2]
	mask := make([]float32, b*steps*f)
	for i := 0; i < b; i++ {
		n := min(lengths[i], steps)
		for j := i * steps * f; j < (i*steps+n)*f; j++ {
			mask[j] = 1
		}
	}
	return t.Mul(x, t.Const(tensor.From(mask, xs...)))
}

// LastOverTime is x's last real step per row: [B, T, F] → [B, F], row i
// at step lengths[i]−1 (the first step for a length of 0, as the other
// poolings over time count it).
func (t *Tape) LastOverTime(x *Var, lengths []int) *Var {
	xs := x.Shape()
	b, steps, f := xs[0], xs[1], xs[2]
	out := tensor.New(b, f)
	X := x.Data()
	at := make([]int, b)
	for i := range b {
		at[i] = (i*steps + validSteps(lengths, i, steps) - 1) * f
		copy(out.Data[i*f:(i+1)*f], X[at[i]:at[i]+f])
	}
	return t.op(out, func(o *Var) {
		g := x.grad()
		for i, p := range at {
			for j, v := range o.Grad.Data[i*f : (i+1)*f] {
				g[p+j] += v
			}
		}
	}, x)
}
