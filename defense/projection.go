package defense

import (
	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/tensor"
)

// inputMaps is an encoder seen from its first operation, a linear map of
// each token's vector: the LSTM directions' x·Wx, the convolutions' x·W.
// When the table and the encoder are frozen (ASCC's inner steps, FGPM), the
// map can be applied once to each word that can occur and the encoder
// entered after it, which skips the input GEMM and the input-gradient GEMM
// of every pass.
type inputMaps struct {
	weights []*tensor.Tensor
	// encode returns the sentence representation from each map's outputs
	// [B, L, columns].
	encode func(tp *ag.Tape, in []*ag.Var, lengths []int) *ag.Var
	// reads is how many leading positions of a text of n real tokens
	// encode reads the outputs of: the rest need not be computed.
	reads func(n int) int
}

// inputMapsOf returns m's encoder's input maps; ok is false for encoders
// without them.
func inputMapsOf(m *nn.Classifier) (im inputMaps, ok bool) {
	if m.In != nil {
		// The input layer's ReLU comes first: mixing or differentiating
		// the maps' outputs would no longer be the embedding-space step.
		return im, false
	}
	switch e := m.Enc.(type) {
	case *nn.RNN:
		for _, l := range e.Directions() {
			im.weights = append(im.weights, l.Wx.Value)
		}
		im.encode = func(tp *ag.Tape, in []*ag.Var, lengths []int) *ag.Var {
			_, s := e.EncodeProjected(tp, in, lengths)
			return s
		}
		im.reads = func(n int) int { return n }
	case *nn.CNN:
		for _, c := range e.Convs {
			im.weights = append(im.weights, c.W.Value)
		}
		im.encode = func(tp *ag.Tape, in []*ag.Var, lengths []int) *ag.Var {
			_, s := e.EncodeProjected(tp, in, lengths)
			return s
		}
		// The pooled windows lie inside the real tokens, except a text
		// shorter than a window, which keeps its first window.
		im.reads = func(n int) int { return max(n, e.MinLen()) }
	default:
		return im, false
	}
	return im, true
}

// project returns, for each map, its outputs [len(ids), columns] for the
// embedding rows of ids (mapped by m's id map, as Embed does).
func (im inputMaps) project(m *nn.Classifier, ids []int32) []*tensor.Tensor {
	tp := ag.NewTape()
	tp.NoGrad = true
	vecs := tp.Lookup(m.Emb.W.Var, m.MapIDs(ids), m.Emb.PadID).Value
	d := vecs.Shape[1]
	out := make([]*tensor.Tensor, len(im.weights))
	for i, w := range im.weights {
		c := w.Shape[1]
		out[i] = tensor.New(len(ids), c)
		tensor.Gemm(false, false, len(ids), c, d, 1, vecs.Data, d, w.Data, c, 0, out[i].Data, c)
	}
	return out
}
