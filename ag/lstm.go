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
	return t.lstm(t.lstmInputJob(x, wx, wh, bias, lengths, reverse))
}

// LSTMPair is LSTM for a BiLSTM's two directions, fwd and bwd being each
// one's (wx, wh, bias) and reverse flag: the same outputs, bit for bit, but
// with the two recurrences run at once on two goroutines, forward and
// backward. A recurrence is a chain of small steps that more cores do not
// speed up; two independent chains keep two cores busy.
func (t *Tape) LSTMPair(x *Var, fwd, bwd LSTMWeights, lengths []int) (f, b *Var) {
	return t.lstmPair(t.lstmInputJob(x, fwd.Wx, fwd.Wh, fwd.Bias, lengths, fwd.Reverse),
		t.lstmInputJob(x, bwd.Wx, bwd.Wh, bwd.Bias, lengths, bwd.Reverse))
}

// LSTMWeights is one LSTM direction's weights for LSTMPair and
// LSTMProjectedPair (Wx unused by the latter).
type LSTMWeights struct {
	Wx, Wh, Bias *Var
	Reverse      bool
}

func (t *Tape) lstmInputJob(x, wx, wh, bias *Var, lengths []int, reverse bool) lstmJob {
	xs := x.Shape()
	b, steps, d := xs[0], xs[1], xs[2]
	h := wh.Shape()[0]
	g4 := 4 * h
	if wx.Shape()[0] != d || wx.Shape()[1] != g4 || wh.Shape()[1] != g4 || len(bias.Data()) != g4 {
		panic(fmt.Sprintf("ag.LSTM: x %v, wx %v, wh %v, bias %v", xs, wx.Shape(), wh.Shape(), bias.Shape()))
	}
	lay := newLSTMLayout(b, steps, lengths)
	var xp []float32
	return lstmJob{
		lay: lay, wh: wh, bias: bias, reverse: reverse,
		project: func() []float32 {
			xp = lay.pack(x.Data(), d)
			gates := make([]float32, lay.total*g4)
			tensor.Gemm(false, false, lay.total, g4, d, 1, xp, d, wx.Data(), g4, 0, gates, g4)
			return gates
		},
		inputGrad: func(dGates []float32) {
			if t.needs(x) {
				dx := make([]float32, lay.total*d)
				tensor.Gemm(false, true, lay.total, d, g4, 1, dGates, g4, wx.Data(), g4, 0, dx, d)
				fresh := x.Grad == nil && x.param == nil
				lay.unpack(x.grad(), dx, d, fresh)
			}
			if t.needs(wx) {
				tensor.Gemm(true, false, d, g4, lay.total, 1, xp, d, dGates, g4, 1, wx.grad(), g4)
			}
		},
		parents: []*Var{x, wx, wh, bias},
	}
}

// LSTMProjected is LSTM from the input projections gx = x·Wx [B, T, 4H]
// (without the bias) instead of x and Wx: for inputs whose projection is
// cheaper to build directly, such as ASCC's convex combinations of a few
// candidate words, whose projections are computed once per word.
func (t *Tape) LSTMProjected(gx, wh, bias *Var, lengths []int, reverse bool) *Var {
	return t.lstm(t.lstmProjectedJob(gx, wh, bias, lengths, reverse))
}

// LSTMProjectedPair is LSTMProjected for a BiLSTM's two directions, run at
// once as LSTMPair runs them (gxF for fwd, gxB for bwd).
func (t *Tape) LSTMProjectedPair(gxF, gxB *Var, fwd, bwd LSTMWeights, lengths []int) (f, b *Var) {
	return t.lstmPair(t.lstmProjectedJob(gxF, fwd.Wh, fwd.Bias, lengths, fwd.Reverse),
		t.lstmProjectedJob(gxB, bwd.Wh, bwd.Bias, lengths, bwd.Reverse))
}

func (t *Tape) lstmProjectedJob(gx, wh, bias *Var, lengths []int, reverse bool) lstmJob {
	gs := gx.Shape()
	h := wh.Shape()[0]
	if len(gs) != 3 || gs[2] != 4*h || wh.Shape()[1] != 4*h || len(bias.Data()) != 4*h {
		panic(fmt.Sprintf("ag.LSTMProjected: gx %v, wh %v, bias %v", gs, wh.Shape(), bias.Shape()))
	}
	lay := newLSTMLayout(gs[0], gs[1], lengths)
	return lstmJob{
		lay: lay, wh: wh, bias: bias, reverse: reverse,
		project: func() []float32 { return lay.pack(gx.Data(), 4*h) }, // a copy: the recurrence overwrites it
		inputGrad: func(dGates []float32) {
			if t.needs(gx) {
				fresh := gx.Grad == nil && gx.param == nil
				lay.unpack(gx.grad(), dGates, 4*h, fresh)
			}
		},
		parents: []*Var{gx, wh, bias},
	}
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

// lstmJob is one LSTM layer ready to run: project returns the input
// projections of its real cells [total, 4H] (its own buffer, which the
// recurrence overwrites with the activated gates), and inputGrad takes
// their pre-activation gradients to the inputs and the input weights.
type lstmJob struct {
	lay       lstmLayout
	wh, bias  *Var
	reverse   bool
	project   func() []float32
	inputGrad func(dGates []float32)
	parents   []*Var
	// state, when set, holds the initial h and c ([B, H] each, row order;
	// constants) and receives the final ones (LSTMState).
	state *LSTMCarry
}

// LSTMCarry is the state an LSTM layer starts from and ends with, for a
// recurrence cut into segments (truncated backpropagation through time):
// H and C are [B, H] in row order; nil starts from zeros. The gradient
// stops at the segment's start.
type LSTMCarry struct{ H, C []float32 }

// LSTMState is LSTM starting from carry's states (zeros when they are
// nil) and leaving the final states in carry: a row's state after its last
// real step. The gradient does not flow into the initial states.
func (t *Tape) LSTMState(x, wx, wh, bias *Var, lengths []int, carry *LSTMCarry) *Var {
	j := t.lstmInputJob(x, wx, wh, bias, lengths, false)
	j.state = carry
	return t.lstm(j)
}

// lstmRun is a job's forward pass with what its backward pass needs.
type lstmRun struct {
	job   lstmJob
	out   *tensor.Tensor // hidden states [B, T, H]
	gates []float32      // activated gates [total, 4H]
	// Per real cell: tanh(c_t) and the h_{t-1}, c_{t-1} it saw.
	tanhCells, hPrevAll, cPrevAll []float32
}

// layerRun is a recurrent layer whose forward pass has run: its output,
// and back, which takes the output gradient through the layer's own state
// and returns the rest of its backward pass, the part that writes
// gradients another layer may share (a no-op if none).
type layerRun struct {
	out     *tensor.Tensor
	back    func(G []float32) (shared func())
	parents []*Var
}

// layer records one run layer on the tape.
func (t *Tape) layer(l layerRun) *Var {
	return t.op(l.out, func(o *Var) { l.back(o.Grad.Data)() }, l.parents...)
}

// lstm records one LSTM layer.
func (t *Tape) lstm(j lstmJob) *Var { return t.layer(j.run(t)) }

// run runs the job's forward recurrence.
func (j lstmJob) run(t *Tape) layerRun {
	r := j.forward()
	return layerRun{out: r.out, parents: j.parents, back: func(G []float32) func() {
		dGates := r.backward(t, G)
		return func() { j.inputGrad(dGates) }
	}}
}

// lstmPair records two independent LSTM layers run at once (pair).
func (t *Tape) lstmPair(a, b lstmJob) (*Var, *Var) {
	return t.pair(func() layerRun { return a.run(t) }, func() layerRun { return b.run(t) })
}

// pair runs two independent layers' forward passes on two goroutines and
// records them. The second's backward pass runs both layers' own backward
// passes at once: every op that reads either output was recorded after
// both, so by then both gradients are complete. The shared parts follow
// one after the other, the second layer's first, which is the order two
// separate layers would take (they may share their input).
func (t *Tape) pair(runA, runB func() layerRun) (*Var, *Var) {
	var la, lb layerRun
	concurrently(func() { la = runA() }, func() { lb = runB() })
	aDone := false
	va := t.op(la.out, func(o *Var) {
		if aDone {
			// b's backward ran a's too; reset so that another backward
			// pass on this tape (Tape.ResetGrads) runs it again.
			aDone = false
			return
		}
		la.back(o.Grad.Data)()
	}, la.parents...)
	vb := t.op(lb.out, func(o *Var) {
		if va.back == nil || va.Grad == nil || aDone {
			lb.back(o.Grad.Data)()
			return
		}
		var sa, sb func()
		concurrently(func() { sb = lb.back(o.Grad.Data) }, func() { sa = la.back(va.Grad.Data) })
		aDone = true
		sb()
		sa()
	}, lb.parents...)
	return va, vb
}

// concurrently runs f and g on two goroutines, or one after the other when
// tensor.Workers is 1.
func concurrently(f, g func()) {
	if tensor.Workers() <= 1 {
		f()
		g()
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		g()
	}()
	f()
	<-done
}

// forward runs the recurrence; the running states are kept in rank order,
// so a step's rows are their first k.
func (j lstmJob) forward() *lstmRun {
	lay := j.lay
	h := j.wh.Shape()[0]
	g4 := 4 * h
	b, steps := lay.b, lay.steps
	r := &lstmRun{
		job: j, out: tensor.New(b, steps, h), gates: j.project(),
		tanhCells: make([]float32, lay.total*h),
		hPrevAll:  make([]float32, lay.total*h),
		cPrevAll:  make([]float32, lay.total*h),
	}
	gates, out := r.gates, r.out
	hState, cState := make([]float32, b*h), make([]float32, b*h)
	if st := j.state; st != nil && st.H != nil {
		for rk, row := range lay.rank {
			copy(hState[rk*h:(rk+1)*h], st.H[row*h:(row+1)*h])
			copy(cState[rk*h:(rk+1)*h], st.C[row*h:(row+1)*h])
		}
	}
	rec := make([]float32, b*g4)
	bs, wh := j.bias.Data(), j.wh.Data()
	for s := 0; s < steps; s++ {
		ti := j.timeIndex(s)
		k, p0 := lay.running[ti], lay.start[ti]
		if k == 0 {
			continue
		}
		copy(r.hPrevAll[p0*h:(p0+k)*h], hState[:k*h])
		copy(r.cPrevAll[p0*h:(p0+k)*h], cState[:k*h])
		tensor.Gemm(false, false, k, g4, h, 1, hState, h, wh, g4, 0, rec, g4)
		tensor.ParallelFor(k, g4*8, func(lo, hi int) {
			tmp := make([]float32, g4)
			for rk := lo; rk < hi; rk++ {
				i, p := lay.cell(rk, ti)
				gr := gates[p*g4 : (p+1)*g4]
				rr := rec[rk*g4 : (rk+1)*g4]
				hp, cp := hState[rk*h:(rk+1)*h], cState[rk*h:(rk+1)*h]
				// gr + rr + bs, the order the incremental path adds them;
				// gr becomes the gates, kept for backward.
				LSTMStepAdd(gr, rr, bs, cp, hp, tmp)
				copy(r.tanhCells[p*h:(p+1)*h], tmp[:h])
				copy(out.Data[(i*steps+ti)*h:(i*steps+ti+1)*h], hp)
			}
		})
	}
	if st := j.state; st != nil {
		st.H, st.C = make([]float32, b*h), make([]float32, b*h)
		for rk, row := range lay.rank {
			copy(st.H[row*h:(row+1)*h], hState[rk*h:(rk+1)*h])
			copy(st.C[row*h:(row+1)*h], cState[rk*h:(rk+1)*h])
		}
	}
	return r
}

func (j lstmJob) timeIndex(s int) int {
	if j.reverse {
		return j.lay.steps - 1 - s
	}
	return s
}

// backward runs the recurrence backwards from the output gradient G
// [B, T, H], adds the recurrent weights' and the bias's gradients, and
// returns the gates' pre-activation gradients [total, 4H].
func (r *lstmRun) backward(t *Tape, G []float32) []float32 {
	j, lay := r.job, r.job.lay
	h := j.wh.Shape()[0]
	g4 := 4 * h
	b, steps := lay.b, lay.steps
	gates := r.gates
	dGates := make([]float32, lay.total*g4)
	// dh and dc in rank order; a row that does not run at a step keeps its
	// dh and dc (its state was carried).
	dh, dc := make([]float32, b*h), make([]float32, b*h)
	// dh_{t-1} = dGates·Whᵀ from a transposed copy of Wh: OpenBLAS runs
	// these small GEMMs 12-45% faster untransposed (h 128-300, 8-64 rows).
	whT := make([]float32, g4*h)
	tensor.TransposeInto(whT, j.wh.Data(), h, g4)
	for s := steps - 1; s >= 0; s-- {
		ti := j.timeIndex(s)
		k, p0 := lay.running[ti], lay.start[ti]
		if k == 0 {
			continue
		}
		tensor.ParallelFor(k, g4*8, func(lo, hi int) {
			for rk := lo; rk < hi; rk++ {
				i, p := lay.cell(rk, ti)
				gr := gates[p*g4 : (p+1)*g4]
				dg := dGates[p*g4 : (p+1)*g4]
				dhi, dci := dh[rk*h:(rk+1)*h], dc[rk*h:(rk+1)*h]
				gOut := G[(i*steps+ti)*h : (i*steps+ti+1)*h]
				tc, cPrev := r.tanhCells[p*h:(p+1)*h], r.cPrevAll[p*h:(p+1)*h]
				lstmCellBackward(gr, dg, dhi, dci, gOut, tc, cPrev)
			}
		})
		// dh_{t-1} = dGates·Whᵀ for the rows that ran this step: their
		// gate gradients are one block.
		tensor.Gemm(false, false, k, h, g4, 1, dGates[p0*g4:(p0+k)*g4], g4, whT, h, 0, dh, h)
	}
	if t.needs(j.wh) {
		tensor.Gemm(true, false, h, g4, lay.total, 1, r.hPrevAll, h, dGates, g4, 1, j.wh.grad(), g4)
	}
	if t.needs(j.bias) {
		gb := j.bias.grad()
		for p := 0; p < lay.total; p++ {
			for k, v := range dGates[p*g4 : (p+1)*g4] {
				gb[k] += v
			}
		}
	}
	return dGates
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
