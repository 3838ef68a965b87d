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
			dx := make([]float32, lay.total*d)
			tensor.Gemm(false, true, lay.total, d, g4, 1, dGates, g4, wx.Data(), g4, 0, dx, d)
			fresh := x.Grad == nil && x.param == nil
			lay.unpack(x.grad(), dx, d, fresh)
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
	gates := lay.pack(gx.Data(), 4*h) // a copy: the recurrence overwrites it
	return t.lstm(gates, lay, wh, bias, reverse, func(dGates []float32) {
		if t.needs(gx) {
			fresh := gx.Grad == nil && gx.param == nil
			lay.unpack(gx.grad(), dGates, 4*h, fresh)
		}
	}, gx, wh, bias)
}

// lstmLayout says which cells of a [B, T] batch an LSTM computes: row i runs
// its first n[i] steps. The rows are ranked longest first, so that the rows
// running at any time index, in either direction, are the first running[t]
// of the ranking, and the real cells are packed time index after time index
// in rank order (cell of rank r at ti: start[ti]+r). A step's cells are then
// one contiguous block: its recurrent GEMM and its gate loop stream through
// memory instead of visiting one distant row per text.
type lstmLayout struct {
	b, steps int
	rank     []int // rank → row, longest first
	running  []int // per time index: how many rows have a cell there
	start    []int // per time index: packed index of its first cell
	total    int   // real cells
}

func newLSTMLayout(b, steps int, lengths []int) lstmLayout {
	l := lstmLayout{b: b, steps: steps, rank: make([]int, b), running: make([]int, steps), start: make([]int, steps)}
	n := make([]int, b) // steps each row runs
	count := make([]int, steps+1)
	for i := range n {
		n[i] = steps
		if lengths != nil {
			n[i] = max(0, min(lengths[i], steps))
		}
		l.rank[i] = i
		count[n[i]]++
	}
	slices.SortStableFunc(l.rank, func(a, c int) int { return n[c] - n[a] })
	for ti, longer := steps-1, 0; ti >= 0; ti-- {
		longer += count[ti+1]
		l.running[ti] = longer
	}
	for ti, k := range l.running {
		l.start[ti] = l.total
		l.total += k
	}
	return l
}

// cell returns the row ranked r and the packed index of its cell at time
// index ti.
func (l lstmLayout) cell(r, ti int) (row, packed int) {
	return l.rank[r], l.start[ti] + r
}

// pack returns the real rows of src [B·T, w] as [total, w].
func (l lstmLayout) pack(src []float32, w int) []float32 {
	dst := make([]float32, l.total*w)
	for ti, k := range l.running {
		for r := 0; r < k; r++ {
			i, p := l.cell(r, ti)
			copy(dst[p*w:(p+1)*w], src[(i*l.steps+ti)*w:(i*l.steps+ti+1)*w])
		}
	}
	return dst
}

// unpack adds packed rows src [total, w] to their cells in dst [B·T, w];
// into a fresh (zero) dst it copies them instead, which is the same but
// for the sign of zeros.
func (l lstmLayout) unpack(dst, src []float32, w int, fresh bool) {
	for ti, k := range l.running {
		for r := 0; r < k; r++ {
			i, p := l.cell(r, ti)
			d, s := dst[(i*l.steps+ti)*w:(i*l.steps+ti+1)*w], src[p*w:(p+1)*w]
			if fresh {
				copy(d, s)
			} else {
				tensor.Axpy(1, s, d)
			}
		}
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
	// states are kept in rank order, so a step's rows are their first k.
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
		k, p0 := lay.running[ti], lay.start[ti]
		if k == 0 {
			continue
		}
		copy(hPrevAll[p0*h:(p0+k)*h], hState[:k*h])
		copy(cPrevAll[p0*h:(p0+k)*h], cState[:k*h])
		tensor.Gemm(false, false, k, g4, h, 1, hState, h, wh.Data(), g4, 0, rec, g4)
		tensor.ParallelFor(k, g4*8, func(lo, hi int) {
			tmp := make([]float32, g4)
			for r := lo; r < hi; r++ {
				i, p := lay.cell(r, ti)
				gr := gates[p*g4 : (p+1)*g4]
				rr := rec[r*g4 : (r+1)*g4]
				hp, cp := hState[r*h:(r+1)*h], cState[r*h:(r+1)*h]
				// gr + rr + bs, the order the incremental path adds them;
				// gr becomes the gates, kept for backward.
				LSTMStepAdd(gr, rr, bs, cp, hp, tmp)
				copy(tanhCells[p*h:(p+1)*h], tmp[:h])
				copy(out.Data[(i*steps+ti)*h:(i*steps+ti+1)*h], hp)
			}
		})
	}
	return t.op(out, func(o *Var) {
		G := o.Grad.Data
		dGates := make([]float32, lay.total*g4) // pre-activation gradients
		// dh and dc in rank order; a row that does not run at a step keeps
		// its dh and dc (its state was carried).
		dh, dc := make([]float32, b*h), make([]float32, b*h)
		// dh_{t-1} = dGates·Whᵀ from a transposed copy of Wh: OpenBLAS runs
		// these small GEMMs 12-45% faster untransposed (h 128-300, 8-64 rows).
		whT := make([]float32, g4*h)
		tensor.TransposeInto(whT, wh.Data(), h, g4)
		for s := steps - 1; s >= 0; s-- {
			ti := timeIndex(s)
			k, p0 := lay.running[ti], lay.start[ti]
			if k == 0 {
				continue
			}
			tensor.ParallelFor(k, g4*8, func(lo, hi int) {
				for r := lo; r < hi; r++ {
					i, p := lay.cell(r, ti)
					gr := gates[p*g4 : (p+1)*g4]
					dg := dGates[p*g4 : (p+1)*g4]
					dhi, dci := dh[r*h:(r+1)*h], dc[r*h:(r+1)*h]
					gOut := G[(i*steps+ti)*h : (i*steps+ti+1)*h]
					tc, cPrev := tanhCells[p*h:(p+1)*h], cPrevAll[p*h:(p+1)*h]
					lstmCellBackward(gr, dg, dhi, dci, gOut, tc, cPrev)
				}
			})
			// dh_{t-1} = dGates·Whᵀ for the rows that ran this step: their
			// gate gradients are one block.
			tensor.Gemm(false, false, k, h, g4, 1, dGates[p0*g4:(p0+k)*g4], g4, whT, h, 0, dh, h)
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

// lstmCellBackward is one cell's backward pass for one row: from the gates
// (i, f, g, o blocks of h), the output gradient gOut, the carried dh and dc,
// tanh(c) and the previous cell state it writes the pre-activation
// gradients dg and the dc carried to the previous step. The vector kernels
// take whole blocks of units with this loop's operations in its order.
func lstmCellBackward(gr, dg, dh, dc, gOut, tc, cPrev []float32) {
	h := len(dh)
	for k := lstmBackSIMD(gr, dg, dh, dc, gOut, tc, cPrev); k < h; k++ {
		ig, fg, gg, og := gr[k], gr[h+k], gr[2*h+k], gr[3*h+k]
		dhk := dh[k] + gOut[k]
		dck := dc[k] + dhk*og*(1-tc[k]*tc[k])
		dg[k] = dck * gg * ig * (1 - ig)
		dg[h+k] = dck * cPrev[k] * fg * (1 - fg)
		dg[2*h+k] = dck * ig * (1 - gg*gg)
		dg[3*h+k] = dhk * tc[k] * og * (1 - og)
		dc[k] = dck * fg
	}
}
