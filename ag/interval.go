package ag

import (
	"fmt"
	"slices"

	"github.com/textarmor/textarmor/tensor"
)

// IntervalLSTMStep is one step of interval bound propagation through an
// LSTM cell (Jia et al. 2019), fused into one operation: built from generic
// element-wise operations a step records about sixty of them, and interval
// training of an LSTM spent most of its time in their bookkeeping.
//
// Inputs: px [B, T, 4H] lower and upper bounds of the input projection
// x·Wx + b, of which step ti is read; hWm = hMid·Wh and hWr = hRad·|Wh|
// [B, 4H], the recurrent projection of the previous hidden box in centre
// and radius form; the previous cell box cL, cU and hidden box hMid, hRad
// [B, H]; on[b] says whether row b takes this step (false past its length:
// its state is carried over and its output is zero).
//
// The pre-activation box is [pxL + hWm − hWr, pxU + hWm + hWr]. Gates are
// monotone (σ for i, f, o; tanh for g); a product of a gate a ≥ 0 with a
// box b has lower bound min(aL·bL, aU·bL) and upper bound max(aL·bU, aU·bU).
// c' = f·c + i·g and h' = o·tanh(c').
//
// The result is [B, 6H]: blocks c'L, c'U, h'Mid, h'Rad, outL, outU.
func (t *Tape) IntervalLSTMStep(pxL, pxU *Var, ti int, hWm, hWr, cL, cU, hMid, hRad *Var, on []bool) *Var {
	ps := pxL.Shape()
	if len(ps) != 3 || ps[2]%4 != 0 || ti < 0 || ti >= ps[1] {
		panic(fmt.Sprintf("ag.IntervalLSTMStep: px %v, step %d", ps, ti))
	}
	b, steps, h := ps[0], ps[1], ps[2]/4
	if len(on) != b || len(hWm.Data()) != b*4*h || len(cL.Data()) != b*h {
		panic(fmt.Sprintf("ag.IntervalLSTMStep: %d rows, hWm %v, c %v", len(on), hWm.Shape(), cL.Shape()))
	}
	on = slices.Clone(on) // the caller may reuse its slice for the next step
	// Saved for the backward pass: gate bounds and the cell's tanh bounds.
	gates := make([]float32, b*8*h) // per row: iL iU fL fU gL gU oL oU
	tc := make([]float32, b*2*h)    // per row: tanh(c'L), tanh(c'U)
	out := tensor.New(b, 6*h)
	PL, PU, M, R := pxL.Data(), pxU.Data(), hWm.Data(), hWr.Data()
	CL, CU, HM, HR := cL.Data(), cU.Data(), hMid.Data(), hRad.Data()
	for r := 0; r < b; r++ {
		o := out.Data[r*6*h : (r+1)*6*h]
		if !on[r] {
			copy(o[0:h], CL[r*h:(r+1)*h])
			copy(o[h:2*h], CU[r*h:(r+1)*h])
			copy(o[2*h:3*h], HM[r*h:(r+1)*h])
			copy(o[3*h:4*h], HR[r*h:(r+1)*h])
			continue // outputs stay zero
		}
		px := (r*steps + ti) * 4 * h
		g := gates[r*8*h : (r+1)*8*h]
		for q := 0; q < 4; q++ {
			for k := 0; k < h; k++ {
				j := q*h + k
				m, rad := M[r*4*h+j], R[r*4*h+j]
				lo, hi := PL[px+j]+m-rad, PU[px+j]+m+rad
				if q == 2 {
					g[2*q*h+k], g[(2*q+1)*h+k] = tanh32(lo), tanh32(hi)
				} else {
					g[2*q*h+k], g[(2*q+1)*h+k] = sigmoid32(lo), sigmoid32(hi)
				}
			}
		}
		tcr := tc[r*2*h : (r+1)*2*h]
		for k := 0; k < h; k++ {
			iL, iU, fL, fU := g[k], g[h+k], g[2*h+k], g[3*h+k]
			gL, gU, oL, oU := g[4*h+k], g[5*h+k], g[6*h+k], g[7*h+k]
			cl, cu := CL[r*h+k], CU[r*h+k]
			nL := minFirst(fL*cl, fU*cl) + minFirst(iL*gL, iU*gL)
			nU := maxFirst(fL*cu, fU*cu) + maxFirst(iL*gU, iU*gU)
			tl, tu := tanh32(nL), tanh32(nU)
			tcr[k], tcr[h+k] = tl, tu
			hl, hu := minFirst(oL*tl, oU*tl), maxFirst(oL*tu, oU*tu)
			o[k], o[h+k] = nL, nU
			o[2*h+k], o[3*h+k] = 0.5*(hl+hu), 0.5*(hu-hl)
			o[4*h+k], o[5*h+k] = hl, hu
		}
	}
	return t.op(out, func(ov *Var) {
		G := ov.Grad.Data
		gradOf := func(v *Var) []float32 { // nil: v takes no gradient
			if t.needs(v) {
				return v.grad()
			}
			return nil
		}
		gPL, gPU, gM, gR := gradOf(pxL), gradOf(pxU), gradOf(hWm), gradOf(hWr)
		gCL, gCU, gHM, gHR := gradOf(cL), gradOf(cU), gradOf(hMid), gradOf(hRad)
		add := func(dst []float32, i int, v float32) {
			if dst != nil {
				dst[i] += v
			}
		}
		dg := make([]float32, 8*h) // gradients of the gate bounds, per row
		for r := 0; r < b; r++ {
			go_ := G[r*6*h : (r+1)*6*h]
			if !on[r] {
				for k := 0; k < h; k++ {
					add(gCL, r*h+k, go_[k])
					add(gCU, r*h+k, go_[h+k])
					add(gHM, r*h+k, go_[2*h+k])
					add(gHR, r*h+k, go_[3*h+k])
				}
				continue
			}
			g := gates[r*8*h : (r+1)*8*h]
			tcr := tc[r*2*h : (r+1)*2*h]
			clear(dg)
			for k := 0; k < h; k++ {
				iL, iU, fL, fU := g[k], g[h+k], g[2*h+k], g[3*h+k]
				gL, gU, oL, oU := g[4*h+k], g[5*h+k], g[6*h+k], g[7*h+k]
				tl, tu := tcr[k], tcr[h+k]
				// h'Mid = (hl+hu)/2, h'Rad = (hu−hl)/2, out = (hl, hu).
				dhl := 0.5*go_[2*h+k] - 0.5*go_[3*h+k] + go_[4*h+k]
				dhu := 0.5*go_[2*h+k] + 0.5*go_[3*h+k] + go_[5*h+k]
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
				dnL := go_[k] + dtl*(1-tl*tl)
				dnU := go_[h+k] + dtu*(1-tu*tu)
				cl, cu := CL[r*h+k], CU[r*h+k]
				// c'L = min(fL·cl, fU·cl) + min(iL·gL, iU·gL)
				if fL*cl <= fU*cl {
					dg[2*h+k] += dnL * cl
					add(gCL, r*h+k, dnL*fL)
				} else {
					dg[3*h+k] += dnL * cl
					add(gCL, r*h+k, dnL*fU)
				}
				if iL*gL <= iU*gL {
					dg[k] += dnL * gL
					dg[4*h+k] += dnL * iL
				} else {
					dg[h+k] += dnL * gL
					dg[4*h+k] += dnL * iU
				}
				// c'U = max(fL·cu, fU·cu) + max(iL·gU, iU·gU)
				if fU*cu > fL*cu {
					dg[3*h+k] += dnU * cu
					add(gCU, r*h+k, dnU*fU)
				} else {
					dg[2*h+k] += dnU * cu
					add(gCU, r*h+k, dnU*fL)
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
			px := (r*steps + ti) * 4 * h
			for q := 0; q < 4; q++ {
				for k := 0; k < h; k++ {
					yl, yu := g[2*q*h+k], g[(2*q+1)*h+k]
					var dl, du float32
					if q == 2 {
						dl, du = dg[2*q*h+k]*(1-yl*yl), dg[(2*q+1)*h+k]*(1-yu*yu)
					} else {
						dl, du = dg[2*q*h+k]*yl*(1-yl), dg[(2*q+1)*h+k]*yu*(1-yu)
					}
					j := q*h + k
					add(gPL, px+j, dl)
					add(gPU, px+j, du)
					add(gM, r*4*h+j, dl+du)
					add(gR, r*4*h+j, du-dl)
				}
			}
		}
	}, pxL, pxU, hWm, hWr, cL, cU, hMid, hRad)
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
