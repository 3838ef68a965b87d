package nn

import (
	"fmt"
	"slices"
)

// PredictDeletions returns class probabilities for the base with the token
// at each of pos removed (TextFooler's and the delete order's importance
// queries). On the Kim CNN a deletion keeps every window before it and
// shifts every window after it by one, so only the w−1 windows spanning
// the gap are new: a deletion costs those windows plus O(F) with the
// cached prefix and suffix maxima. On an LSTM a deletion at p keeps the
// base's states before p going forward and after p going backward, so its
// row re-runs the steps from p on (forward) and from p−1 down (backward):
// one direction's pass in all, against two for a full forward pass. Texts
// too short to keep a full CNN window (or any token) after the deletion,
// and other encoders, take a full forward pass.
func (inc *Incremental) PredictDeletions(pos []int) [][]float32 {
	if inc.base == nil {
		panic("nn.Incremental: PredictDeletions before SetBase")
	}
	n := len(inc.base)
	for _, p := range pos {
		if p < 0 || p >= n {
			panic(fmt.Sprintf("nn.Incremental: deletion at %d of a %d-token base", p, n))
		}
	}
	if !inc.FastDeletions() {
		seqs := make([][]int32, len(pos))
		for k, p := range pos {
			seqs[k] = slices.Delete(slices.Clone(inc.base), p, p+1)
		}
		return inc.m.Predict(seqs)
	}
	od := inc.m.Enc.OutDim()
	feat := make([]float32, len(pos)*od)
	if inc.rnn != nil {
		inc.rnnDeletionFeatures(feat, pos)
		return inc.head(feat, len(pos))
	}
	for r, p := range pos {
		inc.cnnDeletionFeatures(feat[r*od:(r+1)*od], p)
	}
	return inc.head(feat, len(pos))
}

// FastDeletions reports whether PredictDeletions has an incremental path
// for the current base (a CNN or an LSTM, and a base at least MinLen+1
// tokens long, and 2 at least).
func (inc *Incremental) FastDeletions() bool {
	return inc.fast() && len(inc.base)-1 >= max(inc.m.Enc.MinLen(), 1)
}

// rnnDeletionFeatures writes the pooled features [len(pos), OutDim] of the
// base with the token at each of pos removed: rows of n−1 steps that join
// the sweep at the deletion from the base's cached state and pool.
func (inc *Incremental) rnnDeletionFeatures(feat []float32, pos []int) {
	n := len(inc.base)
	out := inc.m.Enc.OutDim()
	at := 0
	for _, dc := range inc.dirs {
		h, g4 := dc.hidden, 4*dc.hidden
		starts := make([]int, len(pos))
		for k, p := range pos {
			starts[k] = p // forward: row step p reads base token p+1
			if dc.backward {
				starts[k] = p - 1 // backward: row steps below p read the base's own tokens
			}
		}
		order := sweepOrder(starts, dc.backward)
		join := func(r int, hs, cs, acc []float32) { dc.restore(r, pos[order[r]], n, hs, cs, acc) }
		input := func(r, t int) []float32 {
			if !dc.backward {
				t++
			}
			return dc.gx[t*g4 : (t+1)*g4]
		}
		acc := dc.sweep(inc.rnn, n-1, permute(starts, order), join, input)
		for r, k := range order {
			inc.finishPool(feat[k*out+at:k*out+at+h], acc[r*h:(r+1)*h], n-1)
		}
		at += h
	}
}

// cnnDeletionFeatures writes the ReLU'd pooled features of the base with
// position del removed. The base is at least MinLen+1 tokens long, so it
// has no padding and every window of the shorter text is a real one.
func (inc *Incremental) cnnDeletionFeatures(feat []float32, del int) {
	at := 0
	for ci := range inc.convs {
		cc := &inc.convs[ci]
		f, wf := cc.f, cc.w*cc.f
		o := feat[at : at+f]
		at += f
		// Windows [0, a) are the base's; windows from del on are the
		// base's shifted by one, [del+1, valid); those in [a, del) span
		// the gap and read base row q+1 for text position q ≥ del.
		a := max(0, del-cc.w+1)
		after := min(del+1, cc.valid)
		for k := 0; k < f; k++ {
			o[k] = max(cc.pre[a*f+k], cc.suf[after*f+k])
		}
		bias := inc.cnn.Convs[ci].B.Value.Data
		var tmp [512]float32
		win := scratch(tmp[:], f)
		for t := a; t < min(del, cc.valid-1); t++ {
			copy(win, bias)
			for j := 0; j < cc.w; j++ {
				q := t + j
				if q >= del {
					q++
				}
				src := cc.y[q*wf+j*f : q*wf+(j+1)*f]
				for k := range win {
					win[k] += src[k]
				}
			}
			for k, v := range win {
				o[k] = max(o[k], v)
			}
		}
		for k, v := range o {
			o[k] = max(v, 0)
		}
	}
}

// Deletion reports whether seq is base with exactly one token removed, and
// which position (the first of a run of equal tokens: each gives seq).
func Deletion(base, seq []int32) (pos int, ok bool) {
	if len(seq) != len(base)-1 {
		return 0, false
	}
	i := 0
	for i < len(seq) && seq[i] == base[i] {
		i++
	}
	if !slices.Equal(seq[i:], base[i+1:]) {
		return 0, false
	}
	for i > 0 && base[i-1] == base[i] {
		i--
	}
	return i, true
}

// scratch returns buf[:n] when it fits (a stack array at the call site, so
// the hot loops allocate nothing), a new slice otherwise.
func scratch(buf []float32, n int) []float32 {
	if n <= len(buf) {
		return buf[:n]
	}
	return make([]float32, n)
}
