package mlm

import (
	"errors"
	"fmt"
	"math/rand"
	"slices"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/nn"
)

// Head is a transformer classifier's encoder read through its masked-LM
// head (nn.Reconstructor).
type Head struct {
	Net *nn.Classifier
	tr  *nn.Transformer
	// Unfreeze is how many top layers train with the head; the layers
	// below and the embeddings (the tied decoder's table included) stay
	// fixed.
	Unfreeze int
}

// NewHead wraps net, which needs a transformer encoder and a head
// (nn.Classifier.AddReconstructor, or a checkpoint's cls.predictions.*).
func NewHead(net *nn.Classifier, unfreeze int) (*Head, error) {
	tr, ok := net.Enc.(*nn.Transformer)
	if !ok {
		return nil, fmt.Errorf("a masked-LM head needs a transformer encoder, not %s", net.Cfg.Arch)
	}
	if net.Rec == nil {
		return nil, errors.New("the model has no masked-LM head")
	}
	if unfreeze < 0 || unfreeze > len(tr.Layers) {
		return nil, fmt.Errorf("unfreeze %d: the encoder has %d layers", unfreeze, len(tr.Layers))
	}
	return &Head{Net: net, tr: tr, Unfreeze: unfreeze}, nil
}

// Params are the weights training changes: the head's own and those of
// the top Unfreeze layers.
func (h *Head) Params() []*ag.Param {
	ps := slices.Clone(h.Net.Rec.Params())
	for _, l := range h.tr.Layers[len(h.tr.Layers)-h.Unfreeze:] {
		ps = append(ps, l.Params()...)
	}
	return ps
}

// Logits returns the head's scores [len(pos), V] at the flat positions
// i·L + j of batch b. The fixed layers run on a tape of their own without
// gradients (and without dropout), so a step costs their forward pass
// only; the decoder reads a constant copy of the word embeddings.
func (h *Head) Logits(t *ag.Tape, b *nn.Batch, pos []int) *ag.Var {
	low := ag.NewTape()
	low.NoGrad = true
	n := len(h.tr.Layers)
	s := h.tr.RunLayers(low, h.tr.InputStates(low, h.Net.EmbedInput(low, b), nil), b.Lengths, 0, n-h.Unfreeze)
	states := h.tr.RunLayers(t, t.Const(s.Value), b.Lengths, n-h.Unfreeze, n)
	g := t.Gather(t.Reshape(states, b.B*b.L, h.tr.Hidden), pos)
	return t.LinearT(h.Net.Rec.Transform(t, g), t.Const(h.Net.Emb.W.Value), h.Net.Rec.Bias.Var)
}

// Masked is a corrupted batch: the input, the flat positions the loss
// reads and the pieces that were there (in the model's id space).
type Masked struct {
	Batch   *nn.Batch
	Pos     []int
	Targets []int
}

// Corrupt masks each of seqs with mk and pads them into one batch.
func (h *Head) Corrupt(rng *rand.Rand, seqs [][]int32, mk Masking, p Pieces) Masked {
	in := make([][]int32, len(seqs))
	var rows, cols []int
	var orig []int32
	for i, s := range seqs {
		var pos []int
		var o []int32
		in[i], pos, o = mk.Apply(rng, s, p)
		for range pos {
			rows = append(rows, i)
		}
		cols, orig = append(cols, pos...), append(orig, o...)
	}
	b := nn.MakeBatch(in, nil, h.Net.Enc.MinLen())
	m := Masked{Batch: b, Pos: make([]int, len(cols)), Targets: make([]int, len(cols))}
	for k := range cols {
		m.Pos[k], m.Targets[k] = rows[k]*b.L+cols[k], int(h.Net.MapID(orig[k]))
	}
	return m
}

// TopK returns, for each of the positions, the k pieces the head scores
// highest there, best first (ties to the lower id).
func (h *Head) TopK(b *nn.Batch, pos []int, k int) [][]int32 {
	if len(pos) == 0 {
		return nil
	}
	t := ag.NewTape()
	t.NoGrad = true
	logits := h.Logits(t, b, pos).Value
	v := logits.Shape[1]
	k = min(k, v)
	out := make([][]int32, len(pos))
	for r := range out {
		out[r] = topK(logits.Data[r*v:(r+1)*v], k)
	}
	return out
}

// topK is the indices of the k largest values, largest first, by a
// bounded insertion (k is small next to a 30k vocabulary).
func topK(x []float32, k int) []int32 {
	best := make([]int32, 0, k)
	for i, v := range x {
		if len(best) == k && v <= x[best[k-1]] {
			continue
		}
		j := len(best)
		if j < k {
			best = append(best, 0)
		} else {
			j = k - 1
		}
		for ; j > 0 && v > x[best[j-1]]; j-- {
			best[j] = best[j-1]
		}
		best[j] = int32(i)
	}
	return best
}
