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
// Only real tokens are computed (see lstmLayout): on IMDB a batch is padded
// to its longest review, and about half of its cells are padding. The input
// projection of all real tokens is one GEMM; each step adds one
// [running rows, H]×[H, 4H] GEMM. The backward pass stores gate
// activations, runs the recurrence backwards, and finishes with three large
// GEMMs over the real tokens.
func (t *Tape) LSTM(x, wx, wh, bias *Var, lengths []int, reverse bool) *Var {
	xs := x.Shape()
	b, steps, d := xs[0], xs[1], xs[2]
	h := wh.Shape()[0]
	g4 := 4 * h
	if wx.Shape()[0] != d || wx.Shape()[1] != g4 || wh.Shape()[1] != g4 || len(bias.Data()) != g4 {
		panic(fmt.Sprintf("ag.LSTM: x %v, wx %v, wh %v, bias %v", xs, wx.Shape(), wh.Shape(), bias.Shape()))
	}
	lay := newLSTMLayout(b, steps, lengths)
	xp := lay.pack(x.Data(), d)
	gates := make([]float32, lay.total*g4)
	tensor.Gemm(false, false, lay.total, g4, d, 1, xp, d, wx.Data(), g4, 0, gates, g4)
	return t.lstm(gates, lay, wh, bias, reverse, func(dGates []float32) {
		if t.needs(x) {
			if lay.dense() {
				tensor.Gemm(false, true, lay.total, d, g4, 1, dGates, g4, wx.Data(), g4, 1, x.grad(), d)
			} else {
				dx := make([]float32, lay.total*d)
				tensor.Gemm(false, true, lay.total, d, g4, 1, dGates, g4, wx.Data(), g4, 0, dx, d)
				lay.unpackAdd(x.grad(), dx, d)
			}
		}
		if t.needs(wx) {
			tensor.Gemm(true, false, d, g4, lay.total, 1, xp, d, dGates, g4, 1, wx.grad(), g4)
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
	lay := newLSTMLayout(gs[0], gs[1], lengths)
	gates := lay.pack(gx.Data(), 4*h)
	if lay.dense() {
		gates = slices.Clone(gates) // the recurrence overwrites it
	}
	return t.lstm(gates, lay, wh, bias, reverse, func(dGates []float32) {
		if t.needs(gx) {
			switch {
			case lay.dense() && gx.Grad == nil && gx.param == nil:
				// The first gradient gx receives: it takes the buffer over
				// (read-only from here on) instead of a zeroed copy.
				gx.Grad = tensor.From(dGates, gs...)
			case lay.dense():
				tensor.Axpy(1, dGates, gx.grad())
			default:
				lay.unpackAdd(gx.grad(), dGates, 4*h)
			}
		}
	}, gx, wh, bias)
}

// lstmLayout says which cells of a [B, T] batch an LSTM computes: row i runs
// its first n[i] steps. Those real cells are packed row after row (cell
// (i, t) at off[i]+t), and the rows are ranked longest first, so that the
// rows running at any time index, in either direction, are the first
// running[t] of the ranking: each step's recurrent GEMM covers only them.
type lstmLayout struct {
	b, steps int
	n, off   []int
	rank     []int // rank → row, longest first
	running  []int // per time index: how many rows have a cell there
	total    int   // real cells
}

func newLSTMLayout(b, steps int, lengths []int) lstmLayout {
	l := lstmLayout{b: b, steps: steps, n: make([]int, b), off: make([]int, b), rank: make([]int, b), running: make([]int, steps)}
	count := make([]int, steps+1)
	for i := range l.n {
		l.n[i] = steps
		if lengths != nil {
			l.n[i] = max(0, min(lengths[i], steps))
		}
		l.off[i] = l.total
		l.total += l.n[i]
		l.rank[i] = i
		count[l.n[i]]++
	}
	slices.SortStableFunc(l.rank, func(a, c int) int { return l.n[c] - l.n[a] })
	for ti, longer := steps-1, 0; ti >= 0; ti-- {
		longer += count[ti+1]
		l.running[ti] = longer
	}
	return l
}

// cell returns the row ranked r and the packed index of its cell at time
// index ti.
func (l lstmLayout) cell(r, ti int) (row, packed int) {
	row = l.rank[r]
	return row, l.off[row] + ti
}

// dense reports that every cell is real, so the packed layout is [B·T].
func (l lstmLayout) dense() bool { return l.total == l.b*l.steps }

// pack returns the real rows of src [B·T, w] as [total, w] (src itself when
// dense).
func (l lstmLayout) pack(src []float32, w int) []float32 {
	if l.dense() {
		return src
	}
	dst := make([]float32, l.total*w)
	for i, n := range l.n {
		copy(dst[l.off[i]*w:(l.off[i]+n)*w], src[i*l.steps*w:(i*l.steps+n)*w])
	}
	return dst
}

// unpackAdd adds packed rows src [total, w] to their cells in dst [B·T, w].
func (l lstmLayout) unpackAdd(dst, src []float32, w int) {
	for i, n := range l.n {
		tensor.Axpy(1, src[l.off[i]*w:(l.off[i]+n)*w], dst[i*l.steps*w:(i*l.steps+n)*w])
	}
}

// lstm runs the recurrence from the input projections of the real cells in
// gates [total, 4H] (overwritten with the activated gates); inputGrad
// receives their pre-activation gradients [total, 4H].
func (t *Tape) lstm(gates []float32, lay lstmLayout, wh, bias *Var, reverse bool, inputGrad func(dGates []float32), parents ...*Var) *Var {
	h := wh.Shape()[0]
	g4 := 4 * h
	b, steps := lay.b, lay.steps
	// Per real cell: tanh(c_t) and the h_{t-1}, c_{t-1} it saw. The running
	// states are kept in rank order.
	tanhCells := make([]float32, lay.total*h)
	hPrevAll := make([]float32, lay.total*h)
	cPrevAll := make([]float32, lay.total*h)
	out := tensor.New(b, steps, h)
	hState, cState := make([]float32, b*h), make([]float32, b*h)
	rec := make([]float32, b*g4)
	bs := bias.Data()
	timeIndex := func(s int) int {
		if reverse {
			return steps - 1 - s
		}
		return s
	}
	for s := 0; s < steps; s++ {
		ti := timeIndex(s)
		k := lay.running[ti]
		if k == 0 {
			continue
		}
		tensor.Gemm(false, false, k, g4, h, 1, hState, h, wh.Data(), g4, 0, rec, g4)
		tensor.ParallelFor(k, g4*8, func(lo, hi int) {
			tmp := make([]float32, g4)
			for r := lo; r < hi; r++ {
				i, p := lay.cell(r, ti)
				gr := gates[p*g4 : (p+1)*g4]
				rr := rec[r*g4 : (r+1)*g4]
				hp, cp := hState[r*h:(r+1)*h], cState[r*h:(r+1)*h]
				copy(hPrevAll[p*h:(p+1)*h], hp)
				copy(cPrevAll[p*h:(p+1)*h], cp)
				for k := range gr {
					gr[k] = gr[k] + rr[k] + bs[k] // this order, as the incremental path adds them
				}
				LSTMStep(gr, cp, hp, tmp) // gr becomes the gates, kept for backward
				copy(tanhCells[p*h:(p+1)*h], tmp[:h])
				copy(out.Data[(i*steps+ti)*h:(i*steps+ti+1)*h], hp)
			}
		})
	}
	return t.op(out, func(o *Var) {
		G := o.Grad.Data
		dGates := make([]float32, lay.total*g4) // pre-activation gradients
		// dh, dc and each step's gate gradients in rank order; a row that
		// does not run at a step keeps its dh and dc (its state was carried).
		dh, dc := make([]float32, b*h), make([]float32, b*h)
		dgStep := make([]float32, b*g4)
		dhPrev := make([]float32, b*h)
		whT := wh.Data()
		for s := steps - 1; s >= 0; s-- {
			ti := timeIndex(s)
			k := lay.running[ti]
			if k == 0 {
				continue
			}
			tensor.ParallelFor(k, g4*8, func(lo, hi int) {
				for r := lo; r < hi; r++ {
					i, p := lay.cell(r, ti)
					gr := gates[p*g4 : (p+1)*g4]
					dg := dgStep[r*g4 : (r+1)*g4]
					dhi, dci := dh[r*h:(r+1)*h], dc[r*h:(r+1)*h]
					gOut := G[(i*steps+ti)*h : (i*steps+ti+1)*h]
					for k := 0; k < h; k++ {
						ig, fg, gg, og := gr[k], gr[h+k], gr[2*h+k], gr[3*h+k]
						tc := tanhCells[p*h+k]
						dhk := dhi[k] + gOut[k]
						dck := dci[k] + dhk*og*(1-tc*tc)
						dg[k] = dck * gg * ig * (1 - ig)
						dg[h+k] = dck * cPrevAll[p*h+k] * fg * (1 - fg)
						dg[2*h+k] = dck * ig * (1 - gg*gg)
						dg[3*h+k] = dhk * tc * og * (1 - og)
						dci[k] = dck * fg
					}
					copy(dGates[p*g4:(p+1)*g4], dg)
				}
			})
			// dh_{t-1} = dGates·Whᵀ for the rows that ran this step.
			tensor.Gemm(false, true, k, h, g4, 1, dgStep, g4, whT, g4, 0, dhPrev, h)
			copy(dh[:k*h], dhPrev[:k*h])
		}
		inputGrad(dGates)
		if t.needs(wh) {
			tensor.Gemm(true, false, h, g4, lay.total, 1, hPrevAll, h, dGates, g4, 1, wh.grad(), g4)
		}
		if t.needs(bias) {
			gb := bias.grad()
			for r := 0; r < lay.total; r++ {
				for k, v := range dGates[r*g4 : (r+1)*g4] {
					gb[k] += v
				}
			}
		}
	}, parents...)
}
