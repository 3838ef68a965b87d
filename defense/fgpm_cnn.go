package defense

import (
	"math"

	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/tensor"
)

// fgpmCNN is FGPM for a Kim CNN without word or group masks, one text at a
// time with the forward pass kept up to date instead of recomputed. A
// substitution changes one row of X·W, so only the w windows covering it
// change; under max pooling the input gradient is non-zero only in each
// filter's winning window, so it costs one axpy per filter and tap instead
// of a backward GEMM. A step then costs O(L·F + F·w·D + candidates·D)
// instead of a forward and backward pass over the batch. The substitutions
// are those of the taped path up to float rounding (a near-tie between two
// candidates may break the other way); TestFGPMCNNMatchesTaped compares
// them.
type fgpmCNN struct {
	a     *ATFL
	m     *nn.Classifier
	cnn   *nn.CNN
	wt    [][]float32 // per conv, Wᵀ [w·F, D]: a filter tap's weights, contiguous
	table []float32
	d     int
}

func newFGPMCNN(a *ATFL, m *nn.Classifier) (*fgpmCNN, bool) {
	cnn, ok := m.Enc.(*nn.CNN)
	if !ok || m.Mask != nil || m.GroupMask != nil || !m.Plain() {
		return nil, false
	}
	f := &fgpmCNN{a: a, m: m, cnn: cnn, table: m.Emb.W.Value.Data, d: m.Emb.Dim()}
	for _, conv := range cnn.Convs {
		W := conv.W.Value.Data
		wf := conv.W.Value.Shape[1]
		wt := make([]float32, wf*f.d)
		tensor.TransposeInto(wt, W, f.d, wf)
		f.wt = append(f.wt, wt)
	}
	return f, true
}

func (f *fgpmCNN) row(id int32) []float32 {
	id = f.m.MapID(id)
	return f.table[int(id)*f.d : int(id+1)*f.d]
}

// convState is one convolution's running forward pass over one text.
type convState struct {
	w, nf  int
	y      []float32 // [L, w·F] rows of X·W
	out    []float32 // [valid, F] window outputs
	valid  int
	pooled []float32
	arg    []int
}

func (cs *convState) window(t int, bias []float32) {
	f, wf := cs.nf, cs.w*cs.nf
	o := cs.out[t*f : (t+1)*f]
	copy(o, bias)
	for j := 0; j < cs.w; j++ {
		src := cs.y[(t+j)*wf+j*f : (t+j)*wf+(j+1)*f]
		for k := range o {
			o[k] += src[k]
		}
	}
}

func (cs *convState) pool() {
	f := cs.nf
	copy(cs.pooled, cs.out[:f])
	for k := range cs.arg {
		cs.arg[k] = 0
	}
	for t := 1; t < cs.valid; t++ {
		for k, v := range cs.out[t*f : (t+1)*f] {
			if v > cs.pooled[k] {
				cs.pooled[k], cs.arg[k] = v, t
			}
		}
	}
}

// attack runs FGPM on one text (ids: its padded row, changed in place).
func (f *fgpmCNN) attack(ids, orig []int32, n, label int) {
	d, L := f.d, len(ids)
	head := f.m.Out
	c := head.B.Value.Shape[0]
	states := make([]convState, len(f.cnn.Convs))
	x := make([]float32, L*d)
	for i, id := range ids {
		copy(x[i*d:(i+1)*d], f.row(id))
	}
	for ci, conv := range f.cnn.Convs {
		nf := conv.W.Value.Shape[1] / conv.Width
		cs := convState{w: conv.Width, nf: nf, y: make([]float32, L*conv.Width*nf)}
		tensor.Gemm(false, false, L, conv.Width*nf, d, 1, x, d, conv.W.Value.Data, conv.Width*nf, 0, cs.y, conv.Width*nf)
		cs.valid = max(1, min(n-conv.Width+1, L-conv.Width+1))
		cs.out = make([]float32, cs.valid*nf)
		for t := 0; t < cs.valid; t++ {
			cs.window(t, conv.B.Value.Data)
		}
		cs.pooled, cs.arg = make([]float32, nf), make([]int, nf)
		states[ci] = cs
	}
	feat := make([]float32, f.m.Enc.OutDim())
	logits := make([]float32, c)
	dfeat := make([]float32, len(feat))
	dx := make([]float32, n*d)
	hasGrad := make([]bool, n)
	changed := make([]bool, n)
	W, B := head.W.Value.Data, head.B.Value.Data
	for step := 0; step <= f.a.MaxSteps; step++ {
		at := 0
		for ci := range states {
			cs := &states[ci]
			cs.pool()
			for k, v := range cs.pooled {
				feat[at+k] = max(v, 0)
			}
			at += cs.nf
		}
		copy(logits, B)
		for i, v := range feat {
			for j := 0; j < c; j++ {
				logits[j] += v * W[i*c+j]
			}
		}
		if nn.Argmax(logits) != label || step == f.a.MaxSteps {
			return
		}
		// ∂CE/∂logits = softmax − onehot, then back to the pooled features.
		logSoftmaxInPlace(logits)
		for j, v := range logits {
			logits[j] = float32(math.Exp(float64(v)))
		}
		logits[label]--
		for i := range dfeat {
			var s float32
			for j := 0; j < c; j++ {
				s += W[i*c+j] * logits[j]
			}
			dfeat[i] = s
		}
		clear(dx)
		clear(hasGrad)
		at = 0
		for ci := range states {
			cs := &states[ci]
			for k := 0; k < cs.nf; k++ {
				g := dfeat[at+k]
				if g == 0 || cs.pooled[k] <= 0 {
					continue
				}
				t := cs.arg[k]
				for j := 0; j < cs.w; j++ {
					p := t + j
					if p >= n {
						continue // padding: never substituted
					}
					tensor.Axpy(g, f.wt[ci][(j*cs.nf+k)*d:(j*cs.nf+k+1)*d], dx[p*d:(p+1)*d])
					hasGrad[p] = true
				}
			}
			at += cs.nf
		}
		// The best (position, synonym) by projected gradient, first on
		// ties, as the generic path scans them; a position without gradient
		// scores exactly 0 for every synonym.
		bestPos, bestID, best := -1, int32(0), float32(0)
		for i := 0; i < n; i++ {
			if changed[i] {
				continue
			}
			syn := f.a.Syn.Of(orig[i])
			if len(syn) > f.a.K {
				syn = syn[:f.a.K]
			}
			if len(syn) == 0 {
				continue
			}
			if !hasGrad[i] {
				if bestPos < 0 || best < 0 {
					bestPos, bestID, best = i, syn[0], 0
				}
				continue
			}
			g := dx[i*d : (i+1)*d]
			base := tensor.Dot(f.row(ids[i]), g)
			for _, w := range syn {
				if sc := tensor.Dot(f.row(w), g) - base; bestPos < 0 || sc > best {
					bestPos, bestID, best = i, w, sc
				}
			}
		}
		if bestPos < 0 {
			return
		}
		ids[bestPos], changed[bestPos] = bestID, true
		v := f.row(bestID)
		for ci, conv := range f.cnn.Convs {
			cs := &states[ci]
			wf := cs.w * cs.nf
			tensor.Gemm(false, false, 1, wf, d, 1, v, d, conv.W.Value.Data, wf, 0, cs.y[bestPos*wf:(bestPos+1)*wf], wf)
			for t := max(0, bestPos-cs.w+1); t <= min(bestPos, cs.valid-1); t++ {
				cs.window(t, conv.B.Value.Data)
			}
		}
	}
}
