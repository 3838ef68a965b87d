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
	b, l, d := xs[0], xs[1], xs[2]
	if weight.Shape()[0] != d || weight.Shape()[1]%width != 0 {
		panic(fmt.Sprintf("ag.Conv1D: input %v, weight %v, width %d", xs, weight.Shape(), width))
	}
	if l < width {
		panic(fmt.Sprintf("ag.Conv1D: sequence length %d shorter than window %d", l, width))
	}
	f := weight.Shape()[1] / width
	lo := l - width + 1
	wf := width * f
	y := tensor.GetScratch(b * l * wf)
	defer tensor.PutScratch(y)
	tensor.Gemm(false, false, b*l, wf, d, 1, x.Data(), d, weight.Data(), wf, 0, y, wf)
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
				src := y[(bi*l+ti+j)*wf+j*f : (bi*l+ti+j)*wf+(j+1)*f]
				for k := range o {
					o[k] += src[k]
				}
			}
		}
	})
	return t.op(out, func(o *Var) {
		G := o.Grad.Data
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
		if t.needs(x) {
			tensor.Gemm(false, true, b*l, d, wf, 1, dy, wf, weight.Data(), wf, 1, x.grad(), d)
		}
		if t.needs(weight) {
			tensor.Gemm(true, false, d, wf, b*l, 1, x.Data(), d, dy, wf, 1, weight.grad(), wf)
		}
		if bias != nil && t.needs(bias) {
			gb := bias.grad()
			for r := 0; r < b*lo; r++ {
				for k, g := range G[r*f : (r+1)*f] {
					gb[k] += g
				}
			}
		}
	}, x, weight, bias)
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
