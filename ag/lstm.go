package ag

import (
	"fmt"
	"slices"

	"github.com/textarmor/textarmor/tensor"
)

// LSTM runs one fused LSTM layer over x [B, T, D] and returns the hidden
// states [B, T, H]. Weights: wx [D, 4H], wh [H, 4H], bias [4H], gate order
// input, forget, cell, output. Row b only runs over its first lengths[b]
// steps (nil = all): its outputs past that are zero, and a reverse layer
// starts at its last real token, so padding never leaks into a state.
//
// The input projection for all steps is one GEMM; each step adds one
// [B,H]×[H,4H] GEMM. The backward pass stores gate activations, runs the
// recurrence backwards, and finishes with three large GEMMs.
func (t *Tape) LSTM(x, wx, wh, bias *Var, lengths []int, reverse bool) *Var {
	xs := x.Shape()
	b, steps, d := xs[0], xs[1], xs[2]
	h := wh.Shape()[0]
	g4 := 4 * h
	if wx.Shape()[0] != d || wx.Shape()[1] != g4 || wh.Shape()[1] != g4 || len(bias.Data()) != g4 {
		panic(fmt.Sprintf("ag.LSTM: x %v, wx %v, wh %v, bias %v", xs, wx.Shape(), wh.Shape(), bias.Shape()))
	}
	gates := make([]float32, b*steps*g4)
	tensor.Gemm(false, false, b*steps, g4, d, 1, x.Data(), d, wx.Data(), g4, 0, gates, g4)
	return t.lstm(gates, b, steps, wh, bias, lengths, reverse, func(dGates []float32) {
		if t.needs(x) {
			tensor.Gemm(false, true, b*steps, d, g4, 1, dGates, g4, wx.Data(), g4, 1, x.grad(), d)
		}
		if t.needs(wx) {
			tensor.Gemm(true, false, d, g4, b*steps, 1, x.Data(), d, dGates, g4, 1, wx.grad(), g4)
		}
	}, x, wx, wh, bias)
}

// LSTMProjected is LSTM from the input projections gx = x·Wx [B, T, 4H]
// (without the bias) instead of x and Wx: for inputs whose projection is
// cheaper to build directly, such as ASCC's convex combinations of a few
// candidate words, whose projections are computed once per word.
func (t *Tape) LSTMProjected(gx, wh, bias *Var, lengths []int, reverse bool) *Var {
	gs := gx.Shape()
	h := wh.Shape()[0]
	if len(gs) != 3 || gs[2] != 4*h || wh.Shape()[1] != 4*h || len(bias.Data()) != 4*h {
		panic(fmt.Sprintf("ag.LSTMProjected: gx %v, wh %v, bias %v", gs, wh.Shape(), bias.Shape()))
	}
	gates := slices.Clone(gx.Data())
	return t.lstm(gates, gs[0], gs[1], wh, bias, lengths, reverse, func(dGates []float32) {
		if t.needs(gx) {
			tensor.Axpy(1, dGates, gx.grad())
		}
	}, gx, wh, bias)
}

// lstm runs the recurrence from the input projections in gates [B·T, 4H]
// (overwritten with the activated gates); inputGrad receives the
// pre-activation gradients [B·T, 4H] for the inputs that made gates.
func (t *Tape) lstm(gates []float32, b, steps int, wh, bias *Var, lengths []int, reverse bool, inputGrad func(dGates []float32), parents ...*Var) *Var {
	h := wh.Shape()[0]
	g4 := 4 * h
	n := func(i int) int {
		if lengths == nil {
			return steps
		}
		return min(lengths[i], steps)
	}
	// gates holds, per (b,t) row, the activated i, f, g, o.
	tanhCells := make([]float32, b*steps*h) // tanh(c_t)
	hPrevAll := make([]float32, b*steps*h)  // h_{t-1} seen at (b,t)
	cPrevAll := make([]float32, b*steps*h)
	out := tensor.New(b, steps, h)
	hState, cState := make([]float32, b*h), make([]float32, b*h)
	rec := make([]float32, b*g4)
	bs := bias.Data()
	for s := 0; s < steps; s++ {
		ti := s
		if reverse {
			ti = steps - 1 - s
		}
		tensor.Gemm(false, false, b, g4, h, 1, hState, h, wh.Data(), g4, 0, rec, g4)
		tensor.ParallelFor(b, g4*8, func(lo, hi int) {
			tmp := make([]float32, g4)
			for i := lo; i < hi; i++ {
				if ti >= n(i) {
					continue
				}
				row := (i*steps + ti)
				gr := gates[row*g4 : (row+1)*g4]
				rr := rec[i*g4 : (i+1)*g4]
				hp, cp := hState[i*h:(i+1)*h], cState[i*h:(i+1)*h]
				copy(hPrevAll[row*h:(row+1)*h], hp)
				copy(cPrevAll[row*h:(row+1)*h], cp)
				for k := range gr {
					gr[k] = gr[k] + rr[k] + bs[k] // this order, as the incremental path adds them
				}
				LSTMStep(gr, cp, hp, tmp) // gr becomes the gates, kept for backward
				copy(tanhCells[row*h:(row+1)*h], tmp[:h])
				copy(out.Data[row*h:(row+1)*h], hp)
			}
		})
	}
	return t.op(out, func(o *Var) {
		G := o.Grad.Data
		dGates := make([]float32, b*steps*g4) // pre-activation gradients
		dh, dc := make([]float32, b*h), make([]float32, b*h)
		dgStep := make([]float32, b*g4)
		whT := wh.Data()
		for s := steps - 1; s >= 0; s-- {
			ti := s
			if reverse {
				ti = steps - 1 - s
			}
			clear(dgStep)
			tensor.ParallelFor(b, g4*8, func(lo, hi int) {
				for i := lo; i < hi; i++ {
					if ti >= n(i) {
						continue // state passes through unchanged
					}
					row := i*steps + ti
					gr := gates[row*g4 : (row+1)*g4]
					dg := dgStep[i*g4 : (i+1)*g4]
					dhi, dci := dh[i*h:(i+1)*h], dc[i*h:(i+1)*h]
					for k := 0; k < h; k++ {
						ig, fg, gg, og := gr[k], gr[h+k], gr[2*h+k], gr[3*h+k]
						tc := tanhCells[row*h+k]
						dhk := dhi[k] + G[row*h+k]
						dck := dci[k] + dhk*og*(1-tc*tc)
						dg[k] = dck * gg * ig * (1 - ig)
						dg[h+k] = dck * cPrevAll[row*h+k] * fg * (1 - fg)
						dg[2*h+k] = dck * ig * (1 - gg*gg)
						dg[3*h+k] = dhk * tc * og * (1 - og)
						dci[k] = dck * fg
					}
					copy(dGates[row*g4:(row+1)*g4], dg)
				}
			})
			// dh_{t-1} = dGates·Whᵀ for rows that ran this step; rows that
			// did not keep their incoming dh (their state was carried).
			tmp := rec // reuse: [b, h] fits in [b, 4h]
			tensor.Gemm(false, true, b, h, g4, 1, dgStep, g4, whT, g4, 0, tmp, h)
			for i := 0; i < b; i++ {
				if ti < n(i) {
					copy(dh[i*h:(i+1)*h], tmp[i*h:(i+1)*h])
				}
			}
		}
		inputGrad(dGates)
		if t.needs(wh) {
			tensor.Gemm(true, false, h, g4, b*steps, 1, hPrevAll, h, dGates, g4, 1, wh.grad(), g4)
		}
		if t.needs(bias) {
			gb := bias.grad()
			for r := 0; r < b*steps; r++ {
				for k, v := range dGates[r*g4 : (r+1)*g4] {
					gb[k] += v
				}
			}
		}
	}, parents...)
}
