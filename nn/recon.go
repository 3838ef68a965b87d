package nn

import (
	"errors"
	"fmt"
	"math/rand"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/tensor"
)

// Reconstructor is RAR's token decoder (carl-rar.md §3.3), shaped like
// BERT's and ALBERT's masked-LM head: for each token state h, logits =
// LayerNorm(act(h·W_dᵀ + b_d))·W_embᵀ + b_out, where W_emb is the
// classifier's own word-embedding table (tied: the same parameter, so
// the decoder adds only H·e + e + 2e + V weights and its gradient joins
// the lookup's in Emb.W's).
//
// The decoder's gradient reaches every row of W_emb, the padding row
// included (as in the paper's PyTorch model); only encoders that read no
// padding (transformer, LSTMs) can have a head.
type Reconstructor struct {
	// Dense maps token states [..., H] to [..., e] (Hugging Face layout:
	// W [e, H], so the head exports as cls.predictions.transform.dense).
	Dense *Dense
	// Norm is the LayerNorm over e after the activation.
	Norm *LayerNorm
	// Bias is b_out [V].
	Bias *ag.Param
	// Act is the activation after Dense: the transformer's feed-forward
	// activation (gelu, gelu_new, ...; Hugging Face's masked-LM head takes
	// hidden_act too), gelu for an LSTM.
	Act string
}

// reconstructorShape is the head's activation, LayerNorm epsilon and
// input width for an encoder of cfg, or why cfg's encoder cannot have one.
func reconstructorShape(cfg Config) (act string, eps float64, in int, err error) {
	switch cfg.Arch {
	case "transformer":
		if cfg.Transformer == nil {
			return "", 0, 0, errors.New("transformer: no encoder shape in the config")
		}
		return cfg.Transformer.Act, cfg.Transformer.LayerNormEps, cfg.EmbedDim, nil
	case "lstm":
		return "gelu", 1e-12, cfg.Hidden, nil
	case "bilstm":
		return "gelu", 1e-12, 2 * cfg.Hidden, nil
	}
	// Kim's CNN gives window features (L−w+1 per width), not one state per
	// token to reconstruct it from.
	return "", 0, 0, fmt.Errorf("a reconstruction head decodes each position's token state, which the %s encoder does not give (transformer, lstm or bilstm)", cfg.Arch)
}

// newReconstructor initialises a head (ambiguity 13, no masked-LM head to
// start from): N(0, 0.02) for W_d, zero biases, LayerNorm (1, 0).
func newReconstructor(cfg Config, rng *rand.Rand) (*Reconstructor, error) {
	act, eps, in, err := reconstructorShape(cfg)
	if err != nil {
		return nil, err
	}
	e := cfg.EmbedDim
	return &Reconstructor{
		Dense: newDense("reconstructor.dense", in, e, 0.02, rng),
		Norm:  newNamedLayerNorm("reconstructor.norm", e, eps),
		Bias:  ag.NewParam("reconstructor.bias", tensor.New(cfg.VocabSize)),
		Act:   act,
	}, nil
}

// reconstructorParamCount is how many weights the head adds to a model of
// cfg (assumed valid, with a head): H·e + e + 2e + V.
func reconstructorParamCount(cfg Config) float64 {
	_, _, in, err := reconstructorShape(cfg)
	if err != nil {
		return 0
	}
	e := float64(cfg.EmbedDim)
	return float64(in)*e + e + 2*e + float64(cfg.VocabSize)
}

// Params lists the head's own weights (W_emb is the classifier's):
// W_d, b_d, the LayerNorm's scale and shift, b_out.
func (r *Reconstructor) Params() []*ag.Param {
	return append(r.Dense.Params(), r.Norm.Gamma, r.Norm.Beta, r.Bias)
}

// AddReconstructor attaches a freshly initialised reconstruction head to
// m (say, a classifier imported from a checkpoint without a masked-LM
// head) and records it in m.Cfg, so that the model saves and loads with
// it. Its parameters come last in Params.
func (m *Classifier) AddReconstructor(rng *rand.Rand) error {
	if m.Rec != nil {
		return errors.New("the model already has a reconstruction head")
	}
	r, err := newReconstructor(m.Cfg, rng)
	if err != nil {
		return err
	}
	m.Rec, m.Cfg.Reconstructor = r, true
	return nil
}

// RealPositions lists the flat indices b·l + j of the real tokens of a
// [b, l] batch with the given lengths, row after row.
func RealPositions(lengths []int, l int) []int {
	var pos []int
	for i, n := range lengths {
		for j := range min(n, l) {
			pos = append(pos, i*l+j)
		}
	}
	return pos
}

// Reconstruct returns the head's logits [N, V] at the N real positions of
// token states [B, L, H] (padding excluded before the decoder: it would
// be a large share of the rows, and the product with a 30k-word table
// costs as much as the encoder), and those positions' flat indices b·L +
// j. It panics when m has no head (check m.Rec first).
func (m *Classifier) Reconstruct(t *ag.Tape, tokens *ag.Var, lengths []int) (logits *ag.Var, positions []int) {
	r := m.Rec
	if r == nil {
		panic("nn.Reconstruct: the model has no reconstruction head")
	}
	sh := tokens.Shape()
	if len(sh) != 3 || sh[2] != r.Dense.W.Value.Shape[1] || len(lengths) != sh[0] {
		panic(fmt.Sprintf("nn.Reconstruct: token states %v with %d lengths for a head reading width %d", sh, len(lengths), r.Dense.W.Value.Shape[1]))
	}
	positions = RealPositions(lengths, sh[1])
	h := t.Gather(t.Reshape(tokens, sh[0]*sh[1], sh[2]), positions)
	// The tied decoder: W_emb [V, e] is LinearT's [out, in].
	return t.LinearT(r.Transform(t, h), m.Emb.W.Var, r.Bias.Var), positions
}

// Transform is the head before its decoder: LayerNorm(act(h·W_dᵀ + b_d))
// for token states h [N, H]. A caller that keeps the word embeddings
// fixed decodes it with a constant copy of them.
func (r *Reconstructor) Transform(t *ag.Tape, h *ag.Var) *ag.Var {
	return r.Norm.Forward(t, activate(t, r.Act, r.Dense.Forward(t, h)))
}

// ReconstructionLoss is RAR's L_R on token states [B, L, H] of b: the
// mean cross-entropy, over every real position (special tokens
// included), of the token the model read there (after MapIDs), with how
// many positions the arg-max gets right out of how many.
func (m *Classifier) ReconstructionLoss(t *ag.Tape, tokens *ag.Var, b *Batch) (loss *ag.Var, correct, n int) {
	logits, pos := m.Reconstruct(t, tokens, b.Lengths)
	ids := m.MapIDs(b.IDs)
	targets := make([]int, len(pos))
	for k, p := range pos {
		targets[k] = int(ids[p])
	}
	for k, id := range ArgmaxRows(logits.Data(), m.Cfg.VocabSize) {
		if int(id) == targets[k] {
			correct++
		}
	}
	return t.CrossEntropy(logits, targets, nil), correct, len(pos)
}

// ArgmaxRows returns the arg-max of each row of x [rows, n].
func ArgmaxRows(x []float32, n int) []int32 {
	out := make([]int32, len(x)/n)
	for r := range out {
		out[r] = int32(Argmax(x[r*n : (r+1)*n]))
	}
	return out
}
