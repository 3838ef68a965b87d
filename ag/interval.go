package ag

import (
	"fmt"

	"github.com/textarmor/textarmor/tensor"
)

// IntervalLSTM propagates an interval box through one LSTM layer (interval
// bound propagation, Jia et al. 2019), fused into one operation like LSTM:
// built from generic element-wise operations a step records about sixty of
// them, and one taped operation per step still spent a third of interval
// training in per-step weight-gradient products, slices and copies.
//
// Inputs: px [B, T, 4H], lower and upper bounds of the input projection
// x·Wx + b; wh [H, 4H]; row b runs over its first lengths[b] steps (nil =
// all; past that its state is carried and its output is zero), backwards
// when reverse. The hidden box is carried in centre and radius form, so a
// step's pre-activation box is [pxL + hMid·Wh − hRad·|Wh|, pxU + hMid·Wh +
// hRad·|Wh|]: two [B,H]×[H,4H] GEMMs. Gates are monotone (σ for i, f, o;
// tanh for g); a product of a gate a ≥ 0 with a box b has lower bound
// min(aL·bL, aU·bL) and upper bound max(aL·bU, aU·bU); c' = f·c + i·g and
// h' = o·tanh(c'). The state starts at zero.
//
// The result is [B, T, 2H]: the hidden box's lower bounds, then its upper
// bounds. The backward pass runs the recurrence backwards (two GEMMs a
// step) and finishes with one GEMM each for Wh's two uses; |Wh|'s gradient
// reaches Wh through sign(Wh) (0 at 0, as Abs).
func (t *Tape) IntervalLSTM(pxL, pxU, wh *Var, lengths []int, reverse bool) *Var {
	return t.layer(t.intervalLSTM(pxL, pxU, wh, lengths, reverse))
}

// IntervalLSTMPair is IntervalLSTM for a BiLSTM's two directions (each
// given its bounds, Wh and direction), run at once as LSTMPair runs them.
func (t *Tape) IntervalLSTMPair(fL, fU, fWh *Var, bL, bU, bWh *Var, lengths []int) (f, b *Var) {
	return t.pair(func() layerRun { return t.intervalLSTM(fL, fU, fWh, lengths, false) },
		func() layerRun { return t.intervalLSTM(bL, bU, bWh, lengths, true) })
}

// intervalLSTM runs the forward recurrence. Its backward pass writes only
// the gradients of its own bounds and Wh.
func (t *Tape) intervalLSTM(pxL, pxU, wh *Var, lengths []int, reverse bool) layerRun {
	ps := pxL.Shape()
	if len(ps) != 3 || ps[2]%4 != 0 || !equalShape(ps, pxU.Shape()) {
		panic(fmt.Sprintf("ag.IntervalLSTM: px %v and %v", ps, pxU.Shape()))
	}
	b, steps, h := ps[0], ps[1], ps[2]/4
	g4 := 4 * h
	if ws := wh.Shape(); len(ws) != 2 || ws[0] != h || ws[1] != g4 || (lengths != nil && len(lengths) != b) {
		panic(fmt.Sprintf("ag.IntervalLSTM: px %v, wh %v, %d lengths", ps, ws, len(lengths)))
	}
	// Only real cells are computed and saved (lstmLayout): the states are
	// kept in rank order, so a step's GEMMs cover the rows running there.
	lay := newLSTMLayout(b, steps, lengths)
	cells := lay.total
	W := wh.Data()
	absW := make([]float32, len(W))
	for i, v := range W {
		absW[i] = max(v, -v)
	}
	// Saved per (row, step) for the backward pass: the previous state (its
	// cell box and hidden centre and radius), the gate bounds and the
	// cell's tanh bounds.
	prevC := make([]float32, cells*2*h) // cL, cU
	prevH := make([]float32, cells*2*h) // hMid | hRad, as [cells, H] each below
	hMidAll, hRadAll := prevH[:cells*h], prevH[cells*h:]
	gates := make([]float32, cells*8*h) // iL iU fL fU gL gU oL oU
	tc := make([]float32, cells*2*h)    // tanh(c'L), tanh(c'U)
	out := tensor.New(b, steps, 2*h)
	cL, cU := make([]float32, b*h), make([]float32, b*h)
	hMid, hRad := make([]float32, b*h), make([]float32, b*h)
	M, R := make([]float32, b*g4), make([]float32, b*g4)
	o := make([]float32, 6*h)
	PL, PU := pxL.Data(), pxU.Data()
	for s := 0; s < steps; s++ {
		ti := s
		if reverse {
			ti = steps - 1 - s
		}
		k := lay.running[ti]
		tensor.Gemm(false, false, k, g4, h, 1, hMid, h, W, g4, 0, M, g4)
		tensor.Gemm(false, false, k, g4, h, 1, hRad, h, absW, g4, 0, R, g4)
		// Rows ranked k and beyond do not run here: state carried, output zero.
		for r := 0; r < k; r++ {
			i, row := lay.cell(r, ti) // row: the saved cell
			copy(prevC[row*2*h:row*2*h+h], cL[r*h:(r+1)*h])
			copy(prevC[row*2*h+h:(row+1)*2*h], cU[r*h:(r+1)*h])
			copy(hMidAll[row*h:(row+1)*h], hMid[r*h:(r+1)*h])
			copy(hRadAll[row*h:(row+1)*h], hRad[r*h:(r+1)*h])
			p := (i*steps + ti) * g4
			intervalCellForward(PL[p:p+g4], PU[p:p+g4], M[r*g4:(r+1)*g4], R[r*g4:(r+1)*g4],
				cL[r*h:(r+1)*h], cU[r*h:(r+1)*h], gates[row*8*h:(row+1)*8*h], tc[row*2*h:(row+1)*2*h], o)
			copy(cL[r*h:(r+1)*h], o[0:h])
			copy(cU[r*h:(r+1)*h], o[h:2*h])
			copy(hMid[r*h:(r+1)*h], o[2*h:3*h])
			copy(hRad[r*h:(r+1)*h], o[3*h:4*h])
			copy(out.Data[(i*steps+ti)*2*h:(i*steps+ti+1)*2*h], o[4*h:6*h])
		}
	}
	back := func(G []float32) func() {
		// Carried gradients of the state after the current step, and the
		// pre-activation gradients of every step for the weight products.
		dC := make([]float32, b*2*h) // per ranked row: dcL, dcU
		dHM, dHR := make([]float32, b*h), make([]float32, b*h)
		dMAll, dRAll := make([]float32, cells*g4), make([]float32, cells*g4)
		var dPL, dPU []float32
		if t.needs(pxL) {
			dPL = pxL.grad()
		}
		if t.needs(pxU) {
			dPU = pxU.grad()
		}
		scratchP := make([]float32, 2*g4)
		gout, dg := make([]float32, 6*h), make([]float32, 8*h)
		dPrev := make([]float32, 2*h) // a row's gradient of its previous cell box
		// The per-step GEMMs run from transposed copies (faster, see lstm).
		WT, absWT := make([]float32, len(W)), make([]float32, len(W))
		tensor.TransposeInto(WT, W, h, g4)
		tensor.TransposeInto(absWT, absW, h, g4)
		for s := steps - 1; s >= 0; s-- {
			ti := s
			if reverse {
				ti = steps - 1 - s
			}
			k := lay.running[ti]
			if k == 0 {
				continue
			}
			// Rows ranked k and beyond did not run: their carried gradients
			// pass through.
			for r := 0; r < k; r++ {
				i, row := lay.cell(r, ti)
				p, q := (i*steps+ti)*g4, row*g4
				copy(gout[0:2*h], dC[r*2*h:(r+1)*2*h])
				copy(gout[2*h:3*h], dHM[r*h:(r+1)*h])
				copy(gout[3*h:4*h], dHR[r*h:(r+1)*h])
				copy(gout[4*h:6*h], G[(i*steps+ti)*2*h:(i*steps+ti+1)*2*h])
				gl, gu := scratchP[:g4], scratchP[g4:]
				if dPL != nil {
					gl = dPL[p : p+g4]
				}
				if dPU != nil {
					gu = dPU[p : p+g4]
				}
				clear(dPrev)
				pc := prevC[row*2*h : (row+1)*2*h]
				intervalCellBackward(gout, gates[row*8*h:(row+1)*8*h], tc[row*2*h:(row+1)*2*h], pc[:h], pc[h:], dg,
					gl, gu, dMAll[q:q+g4], dRAll[q:q+g4], dPrev[:h], dPrev[h:])
				copy(dC[r*2*h:(r+1)*2*h], dPrev)
			}
			// dhMid_prev = dM·Whᵀ and dhRad_prev = dR·|Wh|ᵀ for the rows
			// that ran this step.
			p0 := lay.start[ti]
			dM, dR := dMAll[p0*g4:(p0+k)*g4], dRAll[p0*g4:(p0+k)*g4]
			tensor.Gemm(false, false, k, h, g4, 1, dM, g4, WT, h, 0, dHM, h)
			tensor.Gemm(false, false, k, h, g4, 1, dR, g4, absWT, h, 0, dHR, h)
		}
		if t.needs(wh) {
			gw := wh.grad()
			tensor.Gemm(true, false, h, g4, cells, 1, hMidAll, h, dMAll, g4, 1, gw, g4)
			dAbs := make([]float32, len(W))
			tensor.Gemm(true, false, h, g4, cells, 1, hRadAll, h, dRAll, g4, 0, dAbs, g4)
			for i, v := range W {
				switch {
				case v > 0:
					gw[i] += dAbs[i]
				case v < 0:
					gw[i] -= dAbs[i]
				}
			}
		}
		return func() {}
	}
	return layerRun{out: out, back: back, parents: []*Var{pxL, pxU, wh}}
}

func equalShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// intervalCellForward runs one row of an interval LSTM step: pre-activation
// box from the input bounds pL, pU and the recurrent centre m and radius
// rad [4H]; previous cell box cl, cu [H]. It writes the gate bounds g [8H]
// (iL iU fL fU gL gU oL oU), the cell's tanh bounds tc [2H] and o [6H]:
// c'L, c'U, h'Mid, h'Rad, h'L, h'U.
func intervalCellForward(pL, pU, m, rad, cl, cu, g, tc, o []float32) {
	h := len(cl)
	for q := 0; q < 4; q++ {
		for k := 0; k < h; k++ {
			j := q*h + k
			g[2*q*h+k], g[(2*q+1)*h+k] = pL[j]+m[j]-rad[j], pU[j]+m[j]+rad[j]
		}
	}
	// The gates' bounds in vector passes (tc is scratch until written
	// below), bit for bit sigmoid32 and tanh32.
	sigmoidInPlace(g[:2*h], tc)
	sigmoidInPlace(g[2*h:4*h], tc)
	tanhInPlace(g[4*h:6*h], tc)
	sigmoidInPlace(g[6*h:8*h], tc)
	for k := 0; k < h; k++ {
		iL, iU, fL, fU := g[k], g[h+k], g[2*h+k], g[3*h+k]
		gL, gU := g[4*h+k], g[5*h+k]
		o[k] = minFirst(fL*cl[k], fU*cl[k]) + minFirst(iL*gL, iU*gL)
		o[h+k] = maxFirst(fL*cu[k], fU*cu[k]) + maxFirst(iL*gU, iU*gU)
	}
	tanhVec(tc[:2*h], o[:2*h])
	for k := 0; k < h; k++ {
		oL, oU := g[6*h+k], g[7*h+k]
		tl, tu := tc[k], tc[h+k]
		hl, hu := minFirst(oL*tl, oU*tl), maxFirst(oL*tu, oU*tu)
		o[2*h+k], o[3*h+k] = 0.5*(hl+hu), 0.5*(hu-hl)
		o[4*h+k], o[5*h+k] = hl, hu
	}
}

// intervalCellBackward takes one row's output gradient gout [6H] (as o of
// intervalCellForward) back through the step, with the saved g and tc and
// the previous cell box cl, cu; dg [8H] is scratch. It adds to the
// gradients of the input bounds dPL, dPU [4H], of the recurrent centre and
// radius dM, dR [4H] and of the previous cell box dCL, dCU [H].
func intervalCellBackward(gout, g, tc, cl, cu, dg, dPL, dPU, dM, dR, dCL, dCU []float32) {
	h := len(cl)
	clear(dg)
	for k := 0; k < h; k++ {
		iL, iU, fL, fU := g[k], g[h+k], g[2*h+k], g[3*h+k]
		gL, gU, oL, oU := g[4*h+k], g[5*h+k], g[6*h+k], g[7*h+k]
		tl, tu := tc[k], tc[h+k]
		// h'Mid = (hl+hu)/2, h'Rad = (hu−hl)/2, out = (hl, hu).
		dhl := 0.5*gout[2*h+k] - 0.5*gout[3*h+k] + gout[4*h+k]
		dhu := 0.5*gout[2*h+k] + 0.5*gout[3*h+k] + gout[5*h+k]
		var dtl, dtu float32
		if oL*tl <= oU*tl { // hl = oL·tl (ties: the first, as the generic min)
			dg[6*h+k] += dhl * tl
			dtl = dhl * oL
		} else {
			dg[7*h+k] += dhl * tl
			dtl = dhl * oU
		}
		if oU*tu > oL*tu { // hu = oU·tu
			dg[7*h+k] += dhu * tu
			dtu = dhu * oU
		} else {
			dg[6*h+k] += dhu * tu
			dtu = dhu * oL
		}
		dnL := gout[k] + dtl*(1-tl*tl)
		dnU := gout[h+k] + dtu*(1-tu*tu)
		c0, c1 := cl[k], cu[k]
		// c'L = min(fL·cl, fU·cl) + min(iL·gL, iU·gL)
		if fL*c0 <= fU*c0 {
			dg[2*h+k] += dnL * c0
			dCL[k] += dnL * fL
		} else {
			dg[3*h+k] += dnL * c0
			dCL[k] += dnL * fU
		}
		if iL*gL <= iU*gL {
			dg[k] += dnL * gL
			dg[4*h+k] += dnL * iL
		} else {
			dg[h+k] += dnL * gL
			dg[4*h+k] += dnL * iU
		}
		// c'U = max(fL·cu, fU·cu) + max(iL·gU, iU·gU)
		if fU*c1 > fL*c1 {
			dg[3*h+k] += dnU * c1
			dCU[k] += dnU * fU
		} else {
			dg[2*h+k] += dnU * c1
			dCU[k] += dnU * fL
		}
		if iU*gU > iL*gU {
			dg[h+k] += dnU * gU
			dg[5*h+k] += dnU * iU
		} else {
			dg[k] += dnU * gU
			dg[5*h+k] += dnU * iL
		}
	}
	// Through the gate functions to the pre-activation bounds.
	for q := 0; q < 4; q++ {
		for k := 0; k < h; k++ {
			yl, yu := g[2*q*h+k], g[(2*q+1)*h+k]
			var dl, du float32
			if q == 2 {
				dl, du = dg[2*q*h+k]*(1-yl*yl), dg[(2*q+1)*h+k]*(1-yu*yu)
			} else {
				dl, du = dg[2*q*h+k]*yl*(1-yl), dg[(2*q+1)*h+k]*yu*(1-yu)
			}
			// Saturated gates give subnormal products here; flushed to
			// zero, they no longer slow the GEMMs they feed tenfold.
			if subnormal(dl) {
				dl = 0
			}
			if subnormal(du) {
				du = 0
			}
			j := q*h + k
			dPL[j] += dl
			dPU[j] += du
			dM[j] += dl + du
			dR[j] += du - dl
		}
	}
}

// minFirst and maxFirst pick a on ties, as the generic a − ReLU(a − b) and
// a + ReLU(b − a) do.
func minFirst(a, b float32) float32 {
	if a <= b {
		return a
	}
	return b
}

func maxFirst(a, b float32) float32 {
	if b > a {
		return b
	}
	return a
}
