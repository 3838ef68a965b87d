package nn

import (
	"math"
	"math/rand"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/tensor"
)

// uniform returns a tensor with values drawn from U(-a, a).
func uniform(rng *rand.Rand, a float64, shape ...int) *tensor.Tensor {
	x := tensor.New(shape...)
	for i := range x.Data {
		x.Data[i] = float32((2*rng.Float64() - 1) * a)
	}
	return x
}

// Embedding maps token ids to rows of a [V, D] table. Row PadID stays zero
// and never receives a gradient from the lookup (a decoder tied to the
// table, Reconstructor, trains every row).
type Embedding struct {
	W     *ag.Param
	PadID int32
}

// NewEmbedding draws rows from U(-scale, scale) (Kim 2014 uses 0.25 for
// randomly initialised words) and zeroes the padding row.
func NewEmbedding(name string, vocab, dim int, scale float64, padID int32, rng *rand.Rand) *Embedding {
	w := uniform(rng, scale, vocab, dim)
	clear(w.Data[int(padID)*dim : int(padID+1)*dim])
	p := ag.NewParam(name, w)
	p.SetRowSparse()
	return &Embedding{W: p, PadID: padID}
}

// Dim is the embedding width.
func (e *Embedding) Dim() int { return e.W.Value.Shape[1] }

// Forward looks up ids (row-major [b, l]) and returns [b, l, D].
func (e *Embedding) Forward(t *ag.Tape, ids []int32, b, l int) *ag.Var {
	return t.Reshape(t.Lookup(e.W.Var, ids, e.PadID), b, l, e.Dim())
}

// Linear is y = x·W + b with W [in, out].
type Linear struct {
	W, B *ag.Param
}

// NewLinear initialises like PyTorch: U(±1/√in) for weights and bias.
func NewLinear(name string, in, out int, rng *rand.Rand) *Linear {
	a := 1 / math.Sqrt(float64(in))
	return &Linear{
		W: ag.NewParam(name+".weight", uniform(rng, a, in, out)),
		B: ag.NewParam(name+".bias", uniform(rng, a, out)),
	}
}

// Forward applies the layer to x [..., in].
func (l *Linear) Forward(t *ag.Tape, x *ag.Var) *ag.Var { return t.Linear(x, l.W.Var, l.B.Var) }

// Params lists the weight and bias.
func (l *Linear) Params() []*ag.Param { return []*ag.Param{l.W, l.B} }

// Conv1D is a narrow convolution over time with one window width.
type Conv1D struct {
	Width int
	W, B  *ag.Param // W [D, Width·F]
}

// NewConv1D initialises like PyTorch's Conv: U(±1/√(width·in)).
func NewConv1D(name string, in, filters, width int, rng *rand.Rand) *Conv1D {
	a := 1 / math.Sqrt(float64(in*width))
	return &Conv1D{
		Width: width,
		W:     ag.NewParam(name+".weight", uniform(rng, a, in, width*filters)),
		B:     ag.NewParam(name+".bias", uniform(rng, a, filters)),
	}
}

// Forward maps [B, L, D] to [B, L-Width+1, F].
func (c *Conv1D) Forward(t *ag.Tape, x *ag.Var) *ag.Var {
	return t.Conv1D(x, c.W.Var, c.B.Var, c.Width)
}

// LSTM is one direction of a fused LSTM layer.
type LSTM struct {
	Reverse    bool
	Wx, Wh, B  *ag.Param
	hiddenSize int
}

// NewLSTM initialises like PyTorch: U(±1/√hidden) for every weight.
func NewLSTM(name string, in, hidden int, reverse bool, rng *rand.Rand) *LSTM {
	a := 1 / math.Sqrt(float64(hidden))
	return &LSTM{
		Reverse:    reverse,
		Wx:         ag.NewParam(name+".wx", uniform(rng, a, in, 4*hidden)),
		Wh:         ag.NewParam(name+".wh", uniform(rng, a, hidden, 4*hidden)),
		B:          ag.NewParam(name+".bias", uniform(rng, a, 4*hidden)),
		hiddenSize: hidden,
	}
}

// Forward maps [B, T, D] to hidden states [B, T, H].
func (l *LSTM) Forward(t *ag.Tape, x *ag.Var, lengths []int) *ag.Var {
	return t.LSTM(x, l.Wx.Var, l.Wh.Var, l.B.Var, lengths, l.Reverse)
}

func (l *LSTM) weights() ag.LSTMWeights {
	return ag.LSTMWeights{Wx: l.Wx.Var, Wh: l.Wh.Var, Bias: l.B.Var, Reverse: l.Reverse}
}

// Params lists the layer's weights.
func (l *LSTM) Params() []*ag.Param { return []*ag.Param{l.Wx, l.Wh, l.B} }

// LayerNorm normalises the last axis with a learned scale and shift.
type LayerNorm struct {
	Gamma, Beta *ag.Param
	Eps         float32
}

// NewLayerNorm starts at the identity (gamma 1, beta 0).
func NewLayerNorm(name string, dim int, eps float32) *LayerNorm {
	g := tensor.New(dim)
	for i := range g.Data {
		g.Data[i] = 1
	}
	return &LayerNorm{Gamma: ag.NewParam(name+".gamma", g), Beta: ag.NewParam(name+".beta", tensor.New(dim)), Eps: eps}
}

// Forward normalises x [..., dim].
func (l *LayerNorm) Forward(t *ag.Tape, x *ag.Var) *ag.Var {
	return t.LayerNorm(x, l.Gamma.Var, l.Beta.Var, l.Eps)
}
