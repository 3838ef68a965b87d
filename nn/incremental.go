package nn

import (
	"fmt"
	"math"
	"slices"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/tensor"
)

// Swap replaces the token at Pos with ID.
type Swap struct {
	Pos int
	ID  int32
}

// Incremental scores sequences that differ from one base sequence in a few
// positions without a full forward pass, the pattern of word-substitution
// attacks (one current text, many one-word changes of it).
//
// For the Kim CNN it caches, per window width, the base's projected rows
// X·W [L, w·F], its window outputs (before the ReLU) and their prefix and
// suffix maxima. A change at position i alters only row i of X·W, so a
// candidate costs one row projection (cached per token id) and the w
// windows covering i, plus O(F) to combine with the untouched windows
// (prefix and suffix maxima outside the changes, the cached outputs of the
// windows between changes). A
// deletion (PredictDeletions) costs the w−1 windows spanning the gap.
//
// For an LSTM it caches the base's input projections, hidden and cell states
// and the prefix (forward direction) or suffix (backward direction) pools.
// The forward direction re-runs from the first changed position, the
// backward one from the last changed position down to 0; the candidates of a
// call are run together, one GEMM per step. A deletion re-runs the steps
// after it (forward) and before it (backward).
//
// Either way a candidate costs less than a full forward pass at any number
// of changes, so every same-length candidate takes this path
// (BenchmarkPredictFarEdits: BiLSTM, length 250, 40 scattered changes,
// 166 ms incremental vs 355 ms full for 64 candidates). PredictFamilies
// scores many bases and their edits in one sweep without caching a base.
//
// Results equal Predict up to float rounding (about 1e-6). Other encoders
// fall back to Predict. An Incremental is not safe for concurrent use; the
// Classifier must not change while it is in use.
type Incremental struct {
	m     *Classifier
	base  []int32
	probs []float32 // the base's probabilities
	// proj caches, per token id, its embedding times every input weight
	// (all CNN widths, or both LSTM directions), concatenated.
	proj    map[int32][]float32
	projDim int
	cnn     *CNN
	convs   []convCache
	rnn     *RNN
	dirs    []*dirCache
}

type convCache struct {
	w, f, off int       // width, filters, offset in a proj row
	lo, valid int       // windows, windows that count for pooling
	y         []float32 // [L, w·F] base rows of X·W
	out       []float32 // [valid, F] the base's window outputs
	pre, suf  []float32 // [(valid+1), F] max over windows [0,t) / [t,valid)
}

type dirCache struct {
	l        *LSTM
	off      int       // offset in a proj row
	gx       []float32 // [n, 4H] base x·Wx
	h, c     []float32 // [n, H] states after step t
	pool     []float32 // [(n+1), H]: fwd over steps [0,t), bwd over [t,n)
	hidden   int
	backward bool
}

// NewIncremental returns an evaluator with no base; call SetBase.
func (m *Classifier) NewIncremental() *Incremental {
	inc := &Incremental{m: m, proj: map[int32][]float32{}}
	switch e := m.Enc.(type) {
	case *CNN:
		inc.cnn = e
		for _, conv := range e.Convs {
			f := conv.W.Value.Shape[1] / conv.Width
			inc.convs = append(inc.convs, convCache{w: conv.Width, f: f, off: inc.projDim})
			inc.projDim += conv.Width * f
		}
	case *RNN:
		if e.Pool == "last" {
			break // the final state moves with every edit before it: full passes
		}
		inc.rnn = e
		for _, l := range []*LSTM{e.Fwd, e.Bwd} {
			if l == nil {
				continue
			}
			h := l.Wh.Value.Shape[0]
			inc.dirs = append(inc.dirs, &dirCache{l: l, off: inc.projDim, hidden: h, backward: l.Reverse})
			inc.projDim += 4 * h
		}
	}
	return inc
}

// Base returns the current base sequence (do not modify it).
func (inc *Incremental) Base() []int32 { return inc.base }

// BaseProbs returns the base's class probabilities.
func (inc *Incremental) BaseProbs() []float32 { return inc.probs }

// fast reports whether the encoder has an incremental path.
func (inc *Incremental) fast() bool {
	return (inc.cnn != nil || inc.rnn != nil) && len(inc.base) > 0
}

// SetBase makes base (copied) the sequence candidates are edits of, and
// computes its caches: about the cost of one forward pass.
func (inc *Incremental) SetBase(base []int32) {
	inc.base = slices.Clone(base)
	inc.probs = nil
	if !inc.fast() {
		if inc.base != nil {
			inc.probs = inc.m.Predict([][]int32{inc.base})[0]
		}
		return
	}
	m := inc.m
	d := m.EncoderInputDim()
	n := len(base)
	var feat []float32
	if inc.cnn != nil {
		l := max(n, m.Enc.MinLen(), 1)
		padded := make([]int32, l)
		copy(padded, base)
		x := inc.embed(padded)
		for ci := range inc.convs {
			cc := &inc.convs[ci]
			conv := inc.cnn.Convs[ci]
			wf := cc.w * cc.f
			cc.y = make([]float32, l*wf)
			tensor.Gemm(false, false, l, wf, d, 1, x, d, conv.W.Value.Data, wf, 0, cc.y, wf)
			cc.lo = l - cc.w + 1
			cc.valid = max(1, min(n-cc.w+1, cc.lo))
			out := make([]float32, cc.valid*cc.f)
			for t := 0; t < cc.valid; t++ {
				cc.window(out[t*cc.f:(t+1)*cc.f], conv.B.Value.Data, t, nil, nil)
			}
			cc.out = out
			cc.pre = make([]float32, (cc.valid+1)*cc.f)
			cc.suf = make([]float32, (cc.valid+1)*cc.f)
			f := cc.f
			ninf := float32(math.Inf(-1))
			for k := 0; k < f; k++ {
				cc.pre[k] = ninf
				cc.suf[cc.valid*f+k] = ninf
			}
			for t := 0; t < cc.valid; t++ {
				for k := 0; k < f; k++ {
					cc.pre[(t+1)*f+k] = max(cc.pre[t*f+k], out[t*f+k])
				}
			}
			for t := cc.valid - 1; t >= 0; t-- {
				for k := 0; k < f; k++ {
					cc.suf[t*f+k] = max(cc.suf[(t+1)*f+k], out[t*f+k])
				}
			}
		}
		feat = make([]float32, m.Enc.OutDim())
		inc.cnnFeatures(feat, nil, nil)
	} else {
		x := inc.embed(base)
		for _, dc := range inc.dirs {
			dc.setBase(x, n, d, inc.rnn)
		}
		feat = make([]float32, m.Enc.OutDim())
		inc.rnnFeatures(feat, [][]Swap{nil})
	}
	inc.probs = inc.head(feat, 1)[0]
}

// embed returns the encoder's input rows [len(ids), EncoderInputDim] for
// ids, the way Forward computes them (id map, embedding, word and group
// masks, input layer); each row depends only on its id.
func (inc *Incremental) embed(ids []int32) []float32 {
	t := ag.NewTape()
	t.NoGrad = true
	m := inc.m
	b := &Batch{IDs: ids, B: 1, L: len(ids), Lengths: []int{len(ids)}}
	return m.InputLayer(t, m.MaskInput(t, m.Embed(t, b), m.MapIDs(ids))).Data()
}

// window writes bias + Σ_j row(t+j)[block j] into o, where row(p) is the
// candidate's projection for changed positions (pos[k] == p → rows[k]) and
// the base's row otherwise. pos is sorted; entries before t are skipped.
func (cc *convCache) window(o, bias []float32, t int, pos []int, rows [][]float32) {
	f, wf := cc.f, cc.w*cc.f
	copy(o, bias)
	next := 0 // pos[next:] are the changes at or after position t+j
	for j := 0; j < cc.w; j++ {
		p := t + j
		for next < len(pos) && pos[next] < p {
			next++
		}
		var src []float32
		if next < len(pos) && pos[next] == p {
			src = rows[next][cc.off+j*f : cc.off+(j+1)*f]
		} else {
			src = cc.y[p*wf+j*f : p*wf+(j+1)*f]
		}
		for k := range o {
			o[k] += src[k]
		}
	}
}

// cnnFeatures writes the ReLU'd pooled features of the base edited at pos
// (sorted, distinct) to the projected rows.
func (inc *Incremental) cnnFeatures(feat []float32, pos []int, rows [][]float32) {
	at := 0
	for ci := range inc.convs {
		cc := &inc.convs[ci]
		f := cc.f
		o := feat[at : at+f]
		at += f
		a, b := 0, -1
		if len(pos) > 0 {
			a, b = max(0, pos[0]-cc.w+1), min(cc.valid-1, pos[len(pos)-1])
		}
		if a > b {
			copy(o, cc.pre[cc.valid*f:(cc.valid+1)*f])
		} else {
			for k := 0; k < f; k++ {
				o[k] = max(cc.pre[a*f+k], cc.suf[(b+1)*f+k])
			}
			var tmp [512]float32
			win := scratch(tmp[:], f)
			bias := inc.cnn.Convs[ci].B.Value.Data
			k := 0 // pos[k:] are the changes at or after window t
			for t := a; t <= b; t++ {
				for k < len(pos) && pos[k] < t {
					k++
				}
				src := cc.out[t*f : (t+1)*f] // a window between changes is the base's
				if k < len(pos) && pos[k] < t+cc.w {
					cc.window(win, bias, t, pos[k:], rows[k:])
					src = win
				}
				for k, v := range src {
					o[k] = max(o[k], v)
				}
			}
		}
		for k, v := range o {
			o[k] = max(v, 0)
		}
	}
}

func (dc *dirCache) setBase(x []float32, n, d int, r *RNN) {
	h, g4 := dc.hidden, 4*dc.hidden
	dc.gx = make([]float32, n*g4)
	tensor.Gemm(false, false, n, g4, d, 1, x, d, dc.l.Wx.Value.Data, g4, 0, dc.gx, g4)
	dc.h, dc.c = make([]float32, n*h), make([]float32, n*h)
	hs, cs := make([]float32, h), make([]float32, h)
	rec, tmp := make([]float32, g4), make([]float32, g4)
	for s := 0; s < n; s++ {
		t := s
		if dc.backward {
			t = n - 1 - s
		}
		tensor.Gemm(false, false, 1, g4, h, 1, hs, h, dc.l.Wh.Value.Data, g4, 0, rec, g4)
		lstmCell(dc.gx[t*g4:(t+1)*g4], rec, dc.l.B.Value.Data, hs, cs, tmp)
		copy(dc.h[t*h:(t+1)*h], hs)
		copy(dc.c[t*h:(t+1)*h], cs)
	}
	dc.pool = make([]float32, (n+1)*h)
	start, ninf := 0, float32(math.Inf(-1))
	if dc.backward {
		start = n
	}
	if r.Pool == "max" {
		for k := 0; k < h; k++ {
			dc.pool[start*h+k] = ninf
		}
	}
	for s := 0; s < n; s++ {
		t, from, to := s, s, s+1 // fwd: pool[t+1] = agg(pool[t], f(h_t))
		if dc.backward {
			t = n - 1 - s
			from, to = t+1, t
		}
		copy(dc.pool[to*h:(to+1)*h], dc.pool[from*h:(from+1)*h])
		poolRow(r, dc.pool[to*h:(to+1)*h], dc.h[t*h:(t+1)*h], tmp)
	}
}

// poolRow folds one step's hidden values into the running max or sum acc
// (tanh first where the encoder has it, into tmp: at least len(h)).
func poolRow(r *RNN, acc, h, tmp []float32) {
	if r.Tanh {
		ag.FastTanhVec(tmp, h)
		h = tmp[:len(h)]
	}
	mean := r.Pool == "mean"
	for k, v := range h {
		if mean {
			acc[k] += v
		} else {
			acc[k] = max(acc[k], v)
		}
	}
}

// lstmCell applies one step: gates = gx + rec + bias (order i, f, g, o);
// updates h and c in place.
func lstmCell(gx, rec, bias, h, c, tmp []float32) {
	// rec + gx + bias equals ag.LSTM's gx + rec + bias (a + b = b + a
	// exactly).
	ag.LSTMStepAdd(rec, gx, bias, c, h, tmp)
}

// rnnFeatures writes the pooled sentence features [len(edits), OutDim] of
// the base under each edit (sorted, distinct positions; nil = the base).
// Each edit's row joins the sweep at its first changed step (going
// forward; its last one going backward) from the base's cached state.
func (inc *Incremental) rnnFeatures(feat []float32, edits [][]Swap) {
	n := len(inc.base)
	out := inc.m.Enc.OutDim()
	at := 0
	for _, dc := range inc.dirs {
		h, g4 := dc.hidden, 4*dc.hidden
		// starts[e]: n (fwd) or -1 (bwd) for an empty edit: it never runs
		// and keeps the base's whole pool.
		starts := make([]int, len(edits))
		for e, ed := range edits {
			switch {
			case len(ed) == 0 && dc.backward:
				starts[e] = -1
			case len(ed) == 0:
				starts[e] = n
			default:
				starts[e] = firstSwap(ed, dc.backward).Pos
			}
		}
		order := sweepOrder(starts, dc.backward)
		cursor := swapCursors(edits, order, dc.backward)
		join := func(r int, hs, cs, acc []float32) { dc.restore(r, starts[order[r]], n, hs, cs, acc) }
		input := func(r, t int) []float32 {
			if id, ok := cursor.next(edits[order[r]], r, t); ok {
				return inc.proj[id][dc.off : dc.off+g4]
			}
			return dc.gx[t*g4 : (t+1)*g4]
		}
		acc := dc.sweep(inc.rnn, n, permute(starts, order), join, input)
		for r, e := range order {
			inc.finishPool(feat[e*out+at:e*out+at+h], acc[r*h:(r+1)*h], n)
		}
		at += h
	}
}

// restore sets row r's state and running pool to the base's around base
// position s, the first one the row changes in the sweep's direction (n
// or −1: none): the state after step s−1 and the pool over [0, s) going
// forward; the state after step s+1 and the pool over (s, n) going
// backward.
func (dc *dirCache) restore(r, s, n int, hs, cs, acc []float32) {
	h := dc.hidden
	prev, pool := s-1, s
	if dc.backward {
		prev, pool = s+1, s+1
	}
	if prev >= 0 && prev < n {
		copy(hs[r*h:(r+1)*h], dc.h[prev*h:(prev+1)*h])
		copy(cs[r*h:(r+1)*h], dc.c[prev*h:(prev+1)*h])
	}
	copy(acc[r*h:(r+1)*h], dc.pool[pool*h:(pool+1)*h])
}

// sweep runs one LSTM direction over n steps for rows that join at their
// own start step (starts in the direction's order, so the running rows are
// always a prefix and each step is one GEMM). join(r, hs, cs, acc) sets row
// r's state and running pool as it joins; it may copy a row that is
// already running. A row whose start lies outside the steps joins after
// the sweep. input(r, t) is row r's input projection x·Wx at step t. It
// returns the running pools [rows, H].
func (dc *dirCache) sweep(rnn *RNN, n int, starts []int, join func(r int, hs, cs, acc []float32), input func(r, t int) []float32) []float32 {
	h, g4, R := dc.hidden, 4*dc.hidden, len(starts)
	hs, cs, acc := make([]float32, R*h), make([]float32, R*h), make([]float32, R*h)
	rec, tmp := make([]float32, R*g4), make([]float32, g4)
	bias, wh := dc.l.B.Value.Data, dc.l.Wh.Value.Data
	step, end := 1, n
	if dc.backward {
		step, end = -1, -1
	}
	active := 0
	for t := firstStart(starts, end); t != end; t += step {
		for active < R && starts[active]*step <= t*step {
			join(active, hs, cs, acc)
			active++
		}
		tensor.Gemm(false, false, active, g4, h, 1, hs, h, wh, g4, 0, rec[:active*g4], g4)
		for r := 0; r < active; r++ {
			hr := hs[r*h : (r+1)*h]
			lstmCell(input(r, t), rec[r*g4:(r+1)*g4], bias, hr, cs[r*h:(r+1)*h], tmp)
			poolRow(rnn, acc[r*h:(r+1)*h], hr, tmp)
		}
	}
	for ; active < R; active++ {
		join(active, hs, cs, acc)
	}
	return acc
}

// firstStart is the step a sweep begins at: the first row's start, or end
// when there are no rows.
func firstStart(starts []int, end int) int {
	if len(starts) == 0 {
		return end
	}
	return starts[0]
}

// sweepOrder returns the indices of starts in the order a sweep meets them
// (ascending going forward, descending going backward; stable).
func sweepOrder(starts []int, backward bool) []int {
	order := make([]int, len(starts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if backward {
			return starts[b] - starts[a]
		}
		return starts[a] - starts[b]
	})
	return order
}

// permute returns v reordered: out[r] = v[order[r]].
func permute(v, order []int) []int {
	out := make([]int, len(order))
	for r, i := range order {
		out[r] = v[i]
	}
	return out
}

// firstSwap is the swap a sweep meets first in an edit (sorted by position).
func firstSwap(ed []Swap, backward bool) Swap {
	if backward {
		return ed[len(ed)-1]
	}
	return ed[0]
}

// cursors walk each row's swaps in the order of the sweep.
type cursors struct {
	at   []int
	step int
}

// swapCursors starts a cursor for each row r, whose edit is edits[order[r]].
func swapCursors(edits [][]Swap, order []int, backward bool) cursors {
	c := cursors{at: make([]int, len(order)), step: 1}
	if backward {
		c.step = -1
		for r, e := range order {
			c.at[r] = len(edits[e]) - 1
		}
	}
	return c
}

// next returns the id row r's edit puts at step t, if any. The sweep asks
// for every step from the row's start in order, so the cursor only moves
// on.
func (c cursors) next(ed []Swap, r, t int) (int32, bool) {
	if k := c.at[r]; k >= 0 && k < len(ed) && ed[k].Pos == t {
		c.at[r] += c.step
		return ed[k].ID, true
	}
	return 0, false
}

// finishPool writes the pooled features of one direction from its running
// max or sum over n steps (the mean's division and the tanh, as the encoder
// applies them).
func (inc *Incremental) finishPool(o, acc []float32, n int) {
	inv := 1 / float32(n)
	for k, v := range acc {
		if inc.rnn.Pool == "mean" {
			v *= inv
		}
		if inc.rnn.Tanh {
			v = ag.FastTanh(v)
		}
		o[k] = v
	}
}

// head maps features [rows, OutDim] to probabilities.
func (inc *Incremental) head(feat []float32, rows int) [][]float32 {
	m := inc.m
	c, in := m.Cfg.NumClasses, m.Enc.OutDim()
	if m.Hid != nil {
		hd := m.Cfg.HeadHidden
		hid := make([]float32, rows*hd)
		for r := 0; r < rows; r++ {
			copy(hid[r*hd:(r+1)*hd], m.Hid.B.Value.Data)
		}
		tensor.Gemm(false, false, rows, hd, in, 1, feat, in, m.Hid.W.Value.Data, hd, 1, hid, hd)
		for i, v := range hid {
			hid[i] = max(v, 0)
		}
		feat, in = hid, hd
	}
	logits := make([]float32, rows*c)
	for r := 0; r < rows; r++ {
		copy(logits[r*c:(r+1)*c], m.Out.B.Value.Data)
	}
	tensor.Gemm(false, false, rows, c, in, 1, feat, in, m.Out.W.Value.Data, c, 1, logits, c)
	ag.SoftmaxRows(logits, c)
	out := make([][]float32, rows)
	for r := range out {
		out[r] = logits[r*c : (r+1)*c : (r+1)*c]
	}
	return out
}

// project fills the projection cache for ids not yet in it.
func (inc *Incremental) project(ids []int32) {
	var todo []int32
	seen := map[int32]bool{}
	for _, id := range ids {
		if _, ok := inc.proj[id]; !ok && !seen[id] {
			seen[id] = true
			todo = append(todo, id)
		}
	}
	if len(todo) == 0 {
		return
	}
	d := inc.m.EncoderInputDim()
	x := inc.embed(todo)
	p := make([]float32, len(todo)*inc.projDim)
	pd := inc.projDim
	if inc.cnn != nil {
		for ci, cc := range inc.convs {
			wf := cc.w * cc.f
			tensor.Gemm(false, false, len(todo), wf, d, 1, x, d, inc.cnn.Convs[ci].W.Value.Data, wf, 0, p[cc.off:], pd)
		}
	} else {
		for _, dc := range inc.dirs {
			g4 := 4 * dc.hidden
			tensor.Gemm(false, false, len(todo), g4, d, 1, x, d, dc.l.Wx.Value.Data, g4, 0, p[dc.off:], pd)
		}
	}
	for i, id := range todo {
		inc.proj[id] = p[i*pd : (i+1)*pd : (i+1)*pd]
	}
}

// normalize sorts an edit of base by position, keeps the last swap of a repeated
// position and drops swaps that leave the base's token.
func (inc *Incremental) normalize(base []int32, ed []Swap) []Swap {
	v := inc.m.Cfg.VocabSize
	out := make([]Swap, 0, len(ed))
	for _, s := range ed {
		if s.Pos < 0 || s.Pos >= len(base) {
			panic(fmt.Sprintf("nn.Incremental: swap position %d outside a base of %d tokens", s.Pos, len(base)))
		}
		if s.ID < 0 || int(s.ID) >= v {
			panic(fmt.Sprintf("nn.Incremental: id %d outside a vocabulary of %d", s.ID, v))
		}
		out = append(out, s)
	}
	slices.SortStableFunc(out, func(a, b Swap) int { return a.Pos - b.Pos })
	k := 0
	for i, s := range out {
		if i+1 < len(out) && out[i+1].Pos == s.Pos {
			continue
		}
		if s.ID == base[s.Pos] {
			continue
		}
		out[k] = s
		k++
	}
	return out[:k]
}

// PredictEdits returns class probabilities for the base under each edit
// (a set of swaps; an empty edit is the base itself), in order.
func (inc *Incremental) PredictEdits(edits [][]Swap) [][]float32 {
	if inc.base == nil {
		panic("nn.Incremental: PredictEdits before SetBase")
	}
	out := make([][]float32, len(edits))
	if !inc.fast() {
		seqs := make([][]int32, len(edits))
		for e, ed := range edits {
			seqs[e] = ApplySwaps(inc.base, ed)
		}
		return inc.m.Predict(seqs)
	}
	norm := make([][]Swap, 0, len(edits))
	idx := make([]int, 0, len(edits))
	var ids []int32
	for e, ed := range edits {
		ed = inc.normalize(inc.base, ed)
		if len(ed) == 0 {
			out[e] = slices.Clone(inc.probs)
			continue
		}
		norm = append(norm, ed)
		idx = append(idx, e)
		for _, s := range ed {
			ids = append(ids, s.ID)
		}
	}
	if len(norm) == 0 {
		return out
	}
	inc.project(ids)
	od := inc.m.Enc.OutDim()
	feat := make([]float32, len(norm)*od)
	if inc.cnn != nil {
		var pos []int
		var rows [][]float32
		for r, ed := range norm {
			pos, rows = pos[:0], rows[:0]
			for _, s := range ed {
				pos = append(pos, s.Pos)
				rows = append(rows, inc.proj[s.ID])
			}
			inc.cnnFeatures(feat[r*od:(r+1)*od], pos, rows)
		}
	} else {
		inc.rnnFeatures(feat, norm)
	}
	for r, p := range inc.head(feat, len(norm)) {
		out[idx[r]] = p
	}
	return out
}

// PredictSwaps returns class probabilities for the base with each single
// swap applied.
func (inc *Incremental) PredictSwaps(cands []Swap) [][]float32 {
	edits := make([][]Swap, len(cands))
	for i := range cands {
		edits[i] = cands[i : i+1 : i+1]
	}
	return inc.PredictEdits(edits)
}

// PredictSwaps returns class probabilities for base with each single swap
// applied; see Incremental to reuse the base's caches across calls.
func (m *Classifier) PredictSwaps(base []int32, cands []Swap) [][]float32 {
	inc := m.NewIncremental()
	inc.SetBase(base)
	return inc.PredictSwaps(cands)
}

// ApplySwaps returns a copy of base with the swaps applied.
func ApplySwaps(base []int32, swaps []Swap) []int32 {
	out := slices.Clone(base)
	for _, s := range swaps {
		out[s.Pos] = s.ID
	}
	return out
}

// Diff returns the swaps that turn base into seq, or ok=false when the
// lengths differ or more than limit positions do.
func Diff(base, seq []int32, limit int) (swaps []Swap, ok bool) {
	if len(base) != len(seq) {
		return nil, false
	}
	for i, id := range seq {
		if id != base[i] {
			if len(swaps) == limit {
				return nil, false
			}
			swaps = append(swaps, Swap{Pos: i, ID: id})
		}
	}
	return swaps, true
}
