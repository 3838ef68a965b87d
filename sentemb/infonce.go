package sentemb

import (
	"fmt"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/tensor"
)

// unitRows is x [N, D] with each row scaled to unit L2 norm.
func unitRows(t *ag.Tape, x *ag.Var) *ag.Var {
	sh := x.Shape()
	return t.Div(x, t.Reshape(t.Norm(x, 1, 1e-12), sh[0], 1))
}

// InfoNCE is the multi-positive contrastive loss of RobustEmbed's Eq. 2,
// averaged over the anchors: for anchor row i of anchors [N, D] with
// positives pos[i] (row indices of cands [M, D]) and every row of cands as
// a candidate,
//
//	ℓ_i = −log( Σ_{p∈pos[i]} e^{sim(a_i, c_p)/τ} / Σ_{c} e^{sim(a_i, c)/τ} ),
//
// sim the cosine similarity. With one positive per anchor it is SimCSE's
// loss (the cross-entropy of the scaled similarities).
func InfoNCE(t *ag.Tape, anchors, cands *ag.Var, pos [][]int, tau float64) (*ag.Var, error) {
	n, m := anchors.Shape()[0], cands.Shape()[0]
	if len(pos) != n {
		return nil, fmt.Errorf("sentemb: %d positive lists for %d anchors", len(pos), n)
	}
	if !(tau > 0) {
		return nil, fmt.Errorf("sentemb: temperature %g must be positive", tau)
	}
	mask := tensor.New(n, m)
	for i, ps := range pos {
		if len(ps) == 0 {
			return nil, fmt.Errorf("sentemb: anchor %d has no positive", i)
		}
		for _, p := range ps {
			if p < 0 || p >= m {
				return nil, fmt.Errorf("sentemb: anchor %d's positive %d is not one of the %d candidates", i, p, m)
			}
			mask.Data[i*m+p] = 1
		}
	}
	s := t.Scale(t.MatMul(unitRows(t, anchors), unitRows(t, cands), true), float32(1/tau))
	logp := t.LogSoftmax(s) // [N, M]
	// log Σ_{p∈P} e^{logp}, shifted by each row's largest positive log-
	// probability (a constant: exact value and gradient, no underflow).
	shift := tensor.New(n, 1)
	lp := logp.Data()
	for i, ps := range pos {
		best := lp[i*m+ps[0]]
		for _, p := range ps[1:] {
			best = max(best, lp[i*m+p])
		}
		shift.Data[i] = best
	}
	sum := t.SumLast(t.Mul(t.Exp(t.Sub(logp, t.Const(shift))), t.Const(mask)))
	lse := t.Add(t.Log(sum), t.Reshape(t.Const(shift), n))
	return t.Scale(t.Sum(lse), -1/float32(n)), nil
}
