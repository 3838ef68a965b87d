package ag

import (
	"fmt"
	"math"

	"github.com/textarmor/textarmor/internal/seeded"
	"github.com/textarmor/textarmor/tensor"
)

// SelfAttention is multi-head scaled dot-product attention restricted to
// each row's real tokens: q, k and v are [B, L, H] with head h in columns
// h·dh … (h+1)·dh, dh = H/heads. Row b attends from and to its first
// lengths[b] positions only; its padded positions come out zero. With p > 0
// on a training tape the attention probabilities are dropped out (BERT's
// attention_probs_dropout_prob), drawing from t.Rng in a fixed order.
//
// It is one fused op rather than reshapes, transposes, a masked softmax and
// two batched products: heads are strided views of q, k, v (GEMMs with a
// leading dimension H), masking never pads a score matrix, and the work is
// split over (row, head) pairs that write disjoint columns, so results do
// not depend on the worker count and a row gives the same values alone or
// in any batch.
func (t *Tape) SelfAttention(q, k, v *Var, heads int, lengths []int, p float32) *Var {
	qs := q.Shape()
	if len(qs) != 3 || !tensor.SameShape(qs, k.Shape()) || !tensor.SameShape(qs, v.Shape()) {
		panic(fmt.Sprintf("ag.SelfAttention: shapes %v, %v, %v", qs, k.Shape(), v.Shape()))
	}
	h := qs[2]
	return t.selfAttention([3]*Var{q, k, v}, [3]int{}, h, qs[0], qs[1], h, heads, lengths, nil, p)
}

// SelfAttentionPacked is SelfAttention with q, k and v side by side in one
// [B, L, 3H] tensor (columns [0, H), [H, 2H), [2H, 3H)): what one matrix
// product with the three projections stacked gives, a larger and faster
// GEMM than three.
func (t *Tape) SelfAttentionPacked(qkv *Var, heads int, lengths []int, p float32) *Var {
	return t.SelfAttentionPackedKeys(qkv, heads, lengths, nil, p)
}

// SelfAttentionPackedKeys is SelfAttentionPacked that also removes keys:
// keep [B·L] (row-major over [B, L]) marks the positions every query of
// its row may attend to; a real position with keep false gets probability
// 0 from every query (its score leaves the softmax), as FLAT's sampled word
// masks remove dropped tokens from a transformer's attention. Queries are
// not affected: a removed position still computes its own output. A row
// whose real positions are all removed keeps them all instead (no row is
// left with an empty softmax, so none can produce NaN). keep nil removes
// nothing and costs nothing. The key mask is not differentiable (it is
// data); the backward pass is exact for the probabilities it gives.
func (t *Tape) SelfAttentionPackedKeys(qkv *Var, heads int, lengths []int, keep []bool, p float32) *Var {
	sh := qkv.Shape()
	if len(sh) != 3 || sh[2]%3 != 0 {
		panic(fmt.Sprintf("ag.SelfAttentionPacked: shape %v is not [B, L, 3H]", sh))
	}
	if keep != nil && len(keep) != sh[0]*sh[1] {
		panic(fmt.Sprintf("ag.SelfAttentionPackedKeys: %d key flags for %d×%d positions", len(keep), sh[0], sh[1]))
	}
	h := sh[2] / 3
	return t.selfAttention([3]*Var{qkv, qkv, qkv}, [3]int{0, h, 2 * h}, sh[2], sh[0], sh[1], h, heads, lengths, keep, p)
}

// selfAttention reads q, k and v as strided views: in[i] holds row (b, j)
// of its operand at (b·l + j)·ld + off[i], h columns wide. keep, when not
// nil, marks the keys each row may attend to (SelfAttentionPackedKeys).
func (t *Tape) selfAttention(in [3]*Var, off [3]int, ld, nb, l, h, heads int, lengths []int, keep []bool, p float32) *Var {
	if heads < 1 || h%heads != 0 || len(lengths) != nb {
		panic(fmt.Sprintf("ag.SelfAttention: %d heads for width %d, %d lengths for %d rows", heads, h, len(lengths), nb))
	}
	dh := h / heads
	scale := float32(1 / math.Sqrt(float64(dh)))
	// Row b's probabilities for all heads start at start[b] in probs.
	n := make([]int, nb)
	start := make([]int, nb+1)
	for b, m := range lengths {
		n[b] = min(max(m, 0), l)
		start[b+1] = start[b] + heads*n[b]*n[b]
	}
	keys := rowKeys(keep, n, l)
	probs := make([]float32, start[nb])
	var drop []float32 // kept probabilities times 1/(1-p); nil without dropout
	if t.Train && p > 0 {
		drop = dropoutMask(t.Rng.Uint64(), len(probs), p)
	}
	Q, K, V := in[0].Data(), in[1].Data(), in[2].Data()
	out := tensor.New(nb, l, h)
	O := out.Data
	pairs := nb * heads
	tensor.ParallelGemmFor(pairs, 4*l*l*dh, func(lo, hi int) {
		for pr := lo; pr < hi; pr++ {
			b, hd := pr/heads, pr%heads
			m := n[b]
			if m == 0 {
				continue
			}
			row, col := b*l*ld, hd*dh
			P := probs[start[b]+hd*m*m : start[b]+(hd+1)*m*m]
			tensor.Gemm(false, true, m, m, dh, scale, Q[row+off[0]+col:], ld, K[row+off[1]+col:], ld, 0, P, m)
			if keys != nil && keys[b] != nil {
				ks := keys[b]
				for r := 0; r < m; r++ {
					softmaxRowKeys(P[r*m:(r+1)*m], ks)
				}
			} else {
				for r := 0; r < m; r++ {
					softmaxRowInPlace(P[r*m : (r+1)*m])
				}
			}
			use := P
			if drop != nil {
				use = tensor.GetScratch(m * m)
				D := drop[start[b]+hd*m*m:]
				for i := range use {
					use[i] = P[i] * D[i]
				}
			}
			tensor.Gemm(false, false, m, dh, m, 1, use, m, V[row+off[2]+col:], ld, 0, O[b*l*h+col:], h)
			if drop != nil {
				tensor.PutScratch(use)
			}
		}
	})
	return t.op(out, func(o *Var) {
		G := o.Grad.Data
		var grads [3][]float32
		for i, x := range in {
			if t.needs(x) {
				grads[i] = x.grad()
			}
		}
		gq, gk, gv := grads[0], grads[1], grads[2]
		tensor.ParallelGemmFor(pairs, 8*l*l*dh, func(lo, hi int) {
			for pr := lo; pr < hi; pr++ {
				b, hd := pr/heads, pr%heads
				m := n[b]
				if m == 0 {
					continue
				}
				row, col := b*l*ld, hd*dh
				g := G[b*l*h+col:]
				P := probs[start[b]+hd*m*m : start[b]+(hd+1)*m*m]
				used := P
				if drop != nil {
					used = tensor.GetScratch(m * m)
					D := drop[start[b]+hd*m*m:]
					for i := range used {
						used[i] = P[i] * D[i]
					}
				}
				if gv != nil { // dV += usedᵀ · G
					tensor.Gemm(true, false, m, dh, m, 1, used, m, g, h, 1, gv[row+off[2]+col:], ld)
				}
				if drop != nil {
					tensor.PutScratch(used)
				}
				if gq == nil && gk == nil {
					continue
				}
				// dP = G · Vᵀ, through the dropout mask, then the softmax's
				// Jacobian: dS = P ⊙ (dP − Σ_j dP·P). Removed keys have
				// P = 0, so their dS is 0: they get no gradient.
				dS := tensor.GetScratch(m * m)
				tensor.Gemm(false, true, m, m, dh, 1, g, h, V[row+off[2]+col:], ld, 0, dS, m)
				if drop != nil {
					D := drop[start[b]+hd*m*m:]
					for i := range dS[:m*m] {
						dS[i] *= D[i]
					}
				}
				for r := 0; r < m; r++ {
					pr, dr := P[r*m:(r+1)*m], dS[r*m:(r+1)*m]
					var s float32
					for j, x := range pr {
						s += x * dr[j]
					}
					for j, x := range pr {
						dr[j] = x * (dr[j] - s)
					}
				}
				if gq != nil { // dQ += scale · dS · K
					tensor.Gemm(false, false, m, dh, m, scale, dS, m, K[row+off[1]+col:], ld, 1, gq[row+off[0]+col:], ld)
				}
				if gk != nil { // dK += scale · dSᵀ · Q
					tensor.Gemm(true, false, m, dh, m, scale, dS, m, Q[row+off[0]+col:], ld, 1, gk[row+off[1]+col:], ld)
				}
				tensor.PutScratch(dS)
			}
		})
	}, in[0], in[1], in[2])
}

// softmaxRowInPlace is softmaxRow with the vector exponential, for the
// many short rows of attention scores.
func softmaxRowInPlace(x []float32) {
	m := float32(math.Inf(-1))
	for _, v := range x {
		m = max(m, v)
	}
	for j := range x {
		x[j] -= m
	}
	expVec(x)
	var s float32
	for _, v := range x {
		s += v
	}
	inv := 1 / s
	for j := range x {
		x[j] *= inv
	}
}

// rowKeys splits a key mask [nb·l] into each row's flags over its n[b]
// real positions: nil for a row whose real keys are all kept or all
// removed (it keeps them all). keep nil gives nil.
func rowKeys(keep []bool, n []int, l int) [][]bool {
	if keep == nil {
		return nil
	}
	out := make([][]bool, len(n))
	for b, m := range n {
		ks := keep[b*l : b*l+m]
		kept := 0
		for _, k := range ks {
			if k {
				kept++
			}
		}
		if kept > 0 && kept < m {
			out[b] = ks
		}
	}
	return out
}

// softmaxRowKeys is softmaxRowInPlace over the entries keep marks; the
// others come out exactly 0. At least one entry must be kept.
func softmaxRowKeys(x []float32, keep []bool) {
	m := float32(math.Inf(-1))
	for j, v := range x {
		if keep[j] {
			m = max(m, v)
		}
	}
	for j := range x {
		if keep[j] {
			x[j] -= m
		} else {
			x[j] = 0 // a finite placeholder, zeroed after the exponential
		}
	}
	expVec(x)
	var s float32
	for j, v := range x {
		if keep[j] {
			s += v
		} else {
			x[j] = 0
		}
	}
	inv := 1 / s
	for j := range x {
		x[j] *= inv
	}
}

// dropoutMask returns n values, each 0 with probability p and 1/(1−p)
// otherwise, from a splitmix64 stream started at seed: one draw of the
// tape's source per mask (so resumes count draws as before) instead of one
// per value, which at length 256 cost more than the attention itself.
// Mask i depends only on seed and i, so the chunks are filled in parallel.
func dropoutMask(seed uint64, n int, p float32) []float32 {
	mask := make([]float32, n)
	keep := 1 / (1 - p)
	threshold := uint64(float64(p) * (1 << 32)) // drop when the 32-bit draw is below it
	tensor.ParallelFor(n, 4, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			z := seeded.Mix(seed + uint64(i+1)*0x9E3779B97F4A7C15)
			if z>>32 >= threshold {
				mask[i] = keep
			}
		}
	})
	return mask
}
