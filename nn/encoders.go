package nn

import (
	"fmt"
	"math/rand"
	"slices"

	"github.com/textarmor/textarmor/ag"
)

// CNN is Kim's (2014) sentence CNN: one narrow convolution per window width,
// ReLU, max over time, concatenated.
type CNN struct {
	Convs   []*Conv1D
	filters int
}

// NewCNN builds one convolution per width.
func NewCNN(in, filters int, widths []int, rng *rand.Rand) *CNN {
	c := &CNN{filters: filters}
	for _, w := range widths {
		c.Convs = append(c.Convs, NewConv1D(fmt.Sprintf("conv%d", w), in, filters, w, rng))
	}
	return c
}

// Encode returns the feature maps of the first width (before the ReLU) as
// token representations and the pooled features [B, widths·F] as the
// sentence. ReLU is monotone, so it is applied after max pooling: the same
// values and gradients for a fraction of the work.
func (c *CNN) Encode(t *ag.Tape, x *ag.Var, lengths []int) (tokens, sentence *ag.Var) {
	return c.encodeWith(t, lengths, func(i int, conv *Conv1D) *ag.Var { return conv.Forward(t, x) })
}

// EncodeWords is Encode for a batch [B, L] whose position p reads row
// rows[p] of x [U, D] (one row per distinct word): each convolution's X·W
// then costs the distinct words instead of the positions.
func (c *CNN) EncodeWords(t *ag.Tape, x *ag.Var, rows []int, b, l int, lengths []int) (tokens, sentence *ag.Var) {
	return c.encodeWith(t, lengths, func(i int, conv *Conv1D) *ag.Var {
		return t.Conv1DRows(x, rows, b, l, conv.W.Var, conv.B.Var, conv.Width)
	})
}

// EncodeWordsScaled is EncodeWords with position p's input row times
// scale[p] (scale holds B·L values, FLAT's masks).
func (c *CNN) EncodeWordsScaled(t *ag.Tape, x *ag.Var, rows []int, scale *ag.Var, b, l int, lengths []int) (tokens, sentence *ag.Var) {
	return c.encodeWith(t, lengths, func(i int, conv *Conv1D) *ag.Var {
		return t.Conv1DRowsScaled(x, rows, scale, b, l, conv.W.Var, conv.B.Var, conv.Width)
	})
}

// EncodeProjected is Encode from each convolution's projected rows x·W
// [B, L, width·F] (y[i] for Convs[i]) instead of x.
func (c *CNN) EncodeProjected(t *ag.Tape, y []*ag.Var, lengths []int) (tokens, sentence *ag.Var) {
	return c.encodeWith(t, lengths, func(i int, conv *Conv1D) *ag.Var { return t.Conv1DProjected(y[i], conv.B.Var, conv.Width) })
}

// encodeWith pools the window outputs that run gives for each convolution.
func (c *CNN) encodeWith(t *ag.Tape, lengths []int, run func(int, *Conv1D) *ag.Var) (tokens, sentence *ag.Var) {
	pooled := make([]*ag.Var, len(c.Convs))
	for i, conv := range c.Convs {
		h := run(i, conv)
		if i == 0 {
			tokens = h
		}
		// Only windows that start inside the real tokens count.
		valid := make([]int, len(lengths))
		for b, n := range lengths {
			valid[b] = n - conv.Width + 1
		}
		pooled[i] = t.ReLU(t.MaxOverTime(h, valid))
	}
	if len(pooled) == 1 {
		return tokens, pooled[0]
	}
	return tokens, t.Concat(-1, pooled...)
}

// OutDim is widths·filters.
func (c *CNN) OutDim() int { return len(c.Convs) * c.filters }

// MinLen is the widest window.
func (c *CNN) MinLen() int {
	m := 1
	for _, conv := range c.Convs {
		m = max(m, conv.Width)
	}
	return m
}

// Params lists the convolution weights.
func (c *CNN) Params() []*ag.Param {
	var ps []*ag.Param
	for _, conv := range c.Convs {
		ps = append(ps, conv.W, conv.B)
	}
	return ps
}

// RNN is a one-layer LSTM, optionally bidirectional, pooled over time.
type RNN struct {
	Fwd, Bwd *LSTM // Bwd is nil for a unidirectional LSTM
	Pool     string
	Tanh     bool
	hidden   int
}

// NewRNN builds the layer.
func NewRNN(in, hidden int, bidirectional bool, pool string, tanh bool, rng *rand.Rand) *RNN {
	r := &RNN{Fwd: NewLSTM("lstm.fwd", in, hidden, false, rng), Pool: pool, Tanh: tanh, hidden: hidden}
	if bidirectional {
		r.Bwd = NewLSTM("lstm.bwd", in, hidden, true, rng)
	}
	return r
}

// Encode returns the hidden states [B, L, H·dirs] and their pool over the
// real tokens.
func (r *RNN) Encode(t *ag.Tape, x *ag.Var, lengths []int) (tokens, sentence *ag.Var) {
	if r.Bwd == nil {
		return r.pool(t, lengths, r.Fwd.Forward(t, x, lengths))
	}
	f, b := t.LSTMPair(x, r.Fwd.weights(), r.Bwd.weights(), lengths)
	return r.pool(t, lengths, t.Concat(-1, f, b))
}

// Directions lists the LSTM layers, forward first.
func (r *RNN) Directions() []*LSTM {
	if r.Bwd == nil {
		return []*LSTM{r.Fwd}
	}
	return []*LSTM{r.Fwd, r.Bwd}
}

// EncodeProjected is Encode from each direction's input projections x·Wx
// [B, T, 4H] (gx[i] for Directions()[i]) instead of x.
func (r *RNN) EncodeProjected(t *ag.Tape, gx []*ag.Var, lengths []int) (tokens, sentence *ag.Var) {
	if r.Bwd == nil {
		return r.pool(t, lengths, t.LSTMProjected(gx[0], r.Fwd.Wh.Var, r.Fwd.B.Var, lengths, r.Fwd.Reverse))
	}
	f, b := t.LSTMProjectedPair(gx[0], gx[1], r.Fwd.weights(), r.Bwd.weights(), lengths)
	return r.pool(t, lengths, t.Concat(-1, f, b))
}

// pool pools the hidden states over the real tokens.
func (r *RNN) pool(t *ag.Tape, lengths []int, tokens *ag.Var) (_, sentence *ag.Var) {
	h := tokens
	if r.Tanh {
		h = t.Tanh(h)
	}
	switch r.Pool {
	case "mean":
		sentence = t.MeanOverTime(h, lengths)
	case "last": // the state after the last real word (spgd.md §4.1)
		sentence = t.LastOverTime(h, lengths)
	default:
		sentence = t.MaxOverTime(h, lengths)
	}
	if r.Tanh {
		sentence = t.Tanh(sentence)
	}
	return tokens, sentence
}

// OutDim is hidden × directions.
func (r *RNN) OutDim() int {
	if r.Bwd != nil {
		return 2 * r.hidden
	}
	return r.hidden
}

// MinLen is 1: an LSTM takes any length.
func (r *RNN) MinLen() int { return 1 }

// Params lists both directions' weights.
func (r *RNN) Params() []*ag.Param {
	ps := slices.Clone(r.Fwd.Params())
	if r.Bwd != nil {
		ps = append(ps, r.Bwd.Params()...)
	}
	return ps
}
