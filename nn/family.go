package nn

import (
	"fmt"
	"math"
	"slices"
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
	B := len(bases)
	// Items: the bases, starting at the first step, then the edit rows,
	// starting at their first change in the sweep's direction.
	first := 0
	if dc.backward {
		first = n - 1
	}
	starts := make([]int, B+len(rowOf))
	edits := make([][]Swap, B+len(rowOf)) // nil for a base
	for i := range starts {
		starts[i] = first
		if i >= B {
			edits[i] = norm[rowOf[i-B]]
			starts[i] = firstSwap(edits[i], dc.backward).Pos
		}
	}
	order := sweepOrder(starts, dc.backward) // the bases stay first and in order
	cursor := swapCursors(edits, order, dc.backward)
	baseOf := func(r int) int { // the base row an item's row reads its tokens from
		if i := order[r]; i >= B {
			return of[rowOf[i-B]]
		}
		return order[r]
	}
	join := func(r int, hs, cs, acc []float32) {
		if order[r] < B {
			if inc.rnn.Pool == "max" {
				for k := range acc[r*h : (r+1)*h] {
					acc[r*h+k] = float32(math.Inf(-1)) // the empty max
				}
			}
			return // zero state
		}
		b := baseOf(r)
		copy(hs[r*h:(r+1)*h], hs[b*h:(b+1)*h])
		copy(cs[r*h:(r+1)*h], cs[b*h:(b+1)*h])
		copy(acc[r*h:(r+1)*h], acc[b*h:(b+1)*h])
	}
	input := func(r, t int) []float32 {
		id := bases[baseOf(r)][t]
		if sw, ok := cursor.next(edits[order[r]], r, t); ok {
			id = sw
		}
		return inc.proj[id][dc.off : dc.off+g4]
	}
	acc := dc.sweep(inc.rnn, n, permute(starts, order), join, input)
	for r, i := range order {
		inc.finishPool(feat[i*od+at:i*od+at+h], acc[r*h:(r+1)*h], n)
	}
}
