package nn

import (
	"sort"

	"github.com/textarmor/textarmor/ag"
)

// Batch is a padded block of token ids.
type Batch struct {
	IDs     []int32 // row-major [B, L], padded with PadID
	B, L    int
	Lengths []int // real tokens per row (at least 1)
	Labels  []int // optional
	// Index holds each row's position in the training set (train.Batches
	// sets it; nil elsewhere): objectives with per-example state (CARL's
	// memory banks) key on it.
	Index []int
}

// MakeBatch pads seqs to the longest one (and to at least minLen). An empty
// sequence becomes a single padding token so every row has length ≥ 1.
func MakeBatch(seqs [][]int32, labels []int, minLen int) *Batch {
	l := max(minLen, 1)
	for _, s := range seqs {
		l = max(l, len(s))
	}
	b := &Batch{IDs: make([]int32, len(seqs)*l), B: len(seqs), L: l, Lengths: make([]int, len(seqs)), Labels: labels}
	for i, s := range seqs {
		copy(b.IDs[i*l:], s)
		b.Lengths[i] = max(len(s), 1)
	}
	return b
}

// PredictBatch is how many sequences Predict runs per forward pass.
const PredictBatch = 256

// Predict returns class probabilities for each sequence. It sorts by length
// so that each forward pass pads little, runs without recording gradients,
// and returns rows in input order.
func (m *Classifier) Predict(seqs [][]int32) [][]float32 {
	return m.PredictOn(seqs, PredictPlan(seqs))
}

// PredictPlan is how Predict groups seqs into forward passes: indices
// sorted by length (stable), cut into blocks of PredictBatch. A row's
// probabilities depend, in their last bits, on the rows it is padded and
// multiplied with, so a sharded evaluation runs some of these blocks
// unchanged (PredictOn) to reproduce the single run exactly.
func PredictPlan(seqs [][]int32) [][]int {
	order := make([]int, len(seqs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return len(seqs[order[a]]) < len(seqs[order[b]]) })
	var plan [][]int
	for start := 0; start < len(order); start += PredictBatch {
		plan = append(plan, order[start:min(start+PredictBatch, len(order)):min(start+PredictBatch, len(order))])
	}
	return plan
}

// PredictOn runs the given blocks of seqs (each a list of indices into
// seqs) and returns the probabilities in input order; rows of no block
// stay nil.
func (m *Classifier) PredictOn(seqs [][]int32, blocks [][]int) [][]float32 {
	out := make([][]float32, len(seqs))
	c := m.Cfg.NumClasses
	t := ag.NewTape()
	t.NoGrad = true
	chunk := make([][]int32, 0, PredictBatch)
	for _, idx := range blocks {
		chunk = chunk[:0]
		for _, i := range idx {
			chunk = append(chunk, seqs[i])
		}
		logits := m.Forward(t, MakeBatch(chunk, nil, m.Enc.MinLen())).Data()
		probs := make([]float32, len(logits))
		copy(probs, logits)
		ag.SoftmaxRows(probs, c)
		for j, i := range idx {
			out[i] = probs[j*c : (j+1)*c : (j+1)*c]
		}
	}
	return out
}

// Argmax returns the index of the largest value.
func Argmax(p []float32) int {
	best := 0
	for i, v := range p {
		if v > p[best] {
			best = i
		}
	}
	return best
}
