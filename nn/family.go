package nn

import (
	"fmt"
	"math"
	"slices"

	"github.com/textarmor/textarmor/tensor"
)

// FamilySweep reports whether PredictFamilies has a batched path for this
// encoder (the LSTMs). The Kim CNN scores edits locally around a single
// base already, so attacks keep PredictEdits for it.
func (inc *Incremental) FamilySweep() bool { return inc.rnn != nil }

// PredictFamilies returns the class probabilities of every base and of every
// edit, edits[e] being a set of swaps applied to bases[of[e]] (the pattern
// of a genetic attack's perturbation step: each child and its one-word
// substitutes). It does not use or change the Incremental's own base.
//
// For an LSTM it is one batched sweep per direction: each base runs as a
// row from the first step, and an edit's row forks from its base's row at
// its first changed step (going forward; its last one going backward). An
// edit therefore costs the steps from its change on in each direction,
// about half a full pass, against two for the same edit measured from a
// distant shared base, and nothing is cached between calls. Other encoders
// score the sequences with Predict. Results equal Predict up to float
// rounding. Bases must share one length.
func (inc *Incremental) PredictFamilies(bases [][]int32, of []int, edits [][]Swap) (baseProbs, editProbs [][]float32) {
	if len(of) != len(edits) {
		panic(fmt.Sprintf("nn.PredictFamilies: %d edits but %d base indices", len(edits), len(of)))
	}
	if len(bases) == 0 {
		if len(edits) > 0 {
			panic("nn.PredictFamilies: edits without bases")
		}
		return nil, nil
	}
	n := len(bases[0])
	for _, b := range bases {
		if len(b) != n {
			panic(fmt.Sprintf("nn.PredictFamilies: bases of lengths %d and %d", n, len(b)))
		}
	}
	norm := make([][]Swap, len(edits))
	for e, ed := range edits {
		if of[e] < 0 || of[e] >= len(bases) {
			panic(fmt.Sprintf("nn.PredictFamilies: edit %d refers to base %d of %d", e, of[e], len(bases)))
		}
		norm[e] = inc.normalize(bases[of[e]], ed)
	}
	if inc.rnn == nil || n == 0 {
		seqs := slices.Clone(bases)
		for e, ed := range norm {
			seqs = append(seqs, ApplySwaps(bases[of[e]], ed))
		}
		p := inc.m.Predict(seqs)
		return p[:len(bases)], p[len(bases):]
	}
	// Rows: the bases, then the edits that change something (an empty edit
	// is its base).
	var rowOf []int // edit index of row B+j
	var ids []int32
	for _, b := range bases {
		ids = append(ids, b...)
	}
	for e, ed := range norm {
		if len(ed) > 0 {
			rowOf = append(rowOf, e)
			for _, s := range ed {
				ids = append(ids, s.ID)
			}
		}
	}
	inc.project(ids)
	B, od := len(bases), inc.m.Enc.OutDim()
	feat := make([]float32, (B+len(rowOf))*od)
	at := 0
	for _, dc := range inc.dirs {
		inc.familyDirection(dc, feat, od, at, bases, of, norm, rowOf)
		at += dc.hidden
	}
	probs := inc.head(feat, B+len(rowOf))
	baseProbs = probs[:B]
	editProbs = make([][]float32, len(edits))
	for j, e := range rowOf {
		editProbs[e] = probs[B+j]
	}
	for e, ed := range norm {
		if len(ed) == 0 {
			editProbs[e] = slices.Clone(baseProbs[of[e]])
		}
	}
	return baseProbs, editProbs
}

// familyDirection runs one LSTM direction over the bases and the forking
// edit rows and writes the pooled features at column at of feat.
func (inc *Incremental) familyDirection(dc *dirCache, feat []float32, od, at int, bases [][]int32, of []int, norm [][]Swap, rowOf []int) {
	n, h, g4 := len(bases[0]), dc.hidden, 4*dc.hidden
	B, E := len(bases), len(rowOf)
	// fork[j] is the step at which edit row j leaves its base's row; rows
	// are kept ordered by it so the active rows are always a prefix.
	order := make([]int, E)
	fork := make([]int, E)
	for j, e := range rowOf {
		order[j] = j
		ed := norm[e]
		if dc.backward {
			fork[j] = ed[len(ed)-1].Pos
		} else {
			fork[j] = ed[0].Pos
		}
	}
	step, first, end := 1, 0, n
	if dc.backward {
		step, first, end = -1, n-1, -1
	}
	slices.SortStableFunc(order, func(a, b int) int { return (fork[a] - fork[b]) * step })
	R := B + E
	hs, cs, acc := make([]float32, R*h), make([]float32, R*h), make([]float32, R*h)
	if inc.rnn.Pool == "max" {
		for i := range acc[:B*h] {
			acc[i] = float32(math.Inf(-1)) // the empty max
		}
	}
	// next[r] is the index into the row's swaps of its next change.
	next := make([]int, E)
	for r, j := range order {
		if dc.backward {
			next[r] = len(norm[rowOf[j]]) - 1
		}
	}
	rec, tmp := make([]float32, R*g4), make([]float32, g4)
	bias, wh := dc.l.B.Value.Data, dc.l.Wh.Value.Data
	forked := 0
	for t := first; t != end; t += step {
		for forked < E && fork[order[forked]] == t {
			r, b := B+forked, of[rowOf[order[forked]]]
			copy(hs[r*h:(r+1)*h], hs[b*h:(b+1)*h])
			copy(cs[r*h:(r+1)*h], cs[b*h:(b+1)*h])
			copy(acc[r*h:(r+1)*h], acc[b*h:(b+1)*h])
			forked++
		}
		active := B + forked
		tensor.Gemm(false, false, active, g4, h, 1, hs, h, wh, g4, 0, rec[:active*g4], g4)
		for r := 0; r < active; r++ {
			var id int32
			if r < B {
				id = bases[r][t]
			} else {
				k := r - B
				e := rowOf[order[k]]
				id = bases[of[e]][t]
				if ed := norm[e]; next[k] >= 0 && next[k] < len(ed) && ed[next[k]].Pos == t {
					id = ed[next[k]].ID
					next[k] += step
				}
			}
			gx := inc.proj[id][dc.off : dc.off+g4]
			hr := hs[r*h : (r+1)*h]
			lstmCell(gx, rec[r*g4:(r+1)*g4], bias, hr, cs[r*h:(r+1)*h], tmp)
			poolRow(inc.rnn, acc[r*h:(r+1)*h], hr)
		}
	}
	for r := 0; r < R; r++ {
		dst := r
		if r >= B {
			dst = B + order[r-B]
		}
		inc.finishPool(feat[dst*od+at:dst*od+at+h], acc[r*h:(r+1)*h], n)
	}
}
