package nn

import (
	"fmt"
	"math/rand"
	"strings"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/tensor"
)

// TransformerConfig is the shape of a BERT-architecture encoder, as a
// Hugging Face config.json gives it. The word-embedding table is the
// classifier's Embedding (Config.VocabSize × Config.EmbedDim), and the
// hidden size is EmbedDim; everything after the word lookup is the
// Transformer.
type TransformerConfig struct {
	Layers       int `json:"layers"`
	Heads        int `json:"heads"`
	Intermediate int `json:"intermediate"`
	// Act is the feed-forward activation: gelu (erf form), gelu_new (tanh
	// form; gelu_pytorch_tanh is the same function) or relu.
	Act          string  `json:"act"`
	MaxPositions int     `json:"max_positions"`
	TypeVocab    int     `json:"type_vocab"`
	LayerNormEps float64 `json:"layer_norm_eps"`
	// HiddenDropout follows the embeddings and each sublayer; AttnDropout
	// acts on the attention probabilities (BERT: 0.1 each).
	HiddenDropout float64 `json:"hidden_dropout"`
	AttnDropout   float64 `json:"attention_dropout"`
	// Pool makes the sentence representation: cls (the first token's last
	// hidden state), mean (over the real tokens, as sentence-transformers'
	// mean pooling) or pooler (BERT's tanh layer on the first token, what
	// BertForSequenceClassification classifies).
	Pool string `json:"pool"`
	// Pooler holds the tanh pooler's weights (a checkpoint may have none);
	// Pool "pooler" needs it.
	Pooler bool `json:"pooler,omitempty"`
}

// TransformerActs and TransformerPools list the accepted settings.
var (
	TransformerActs  = []string{"gelu", "gelu_new", "gelu_pytorch_tanh", "relu"}
	TransformerPools = []string{"cls", "mean", "pooler"}
)

// DefaultTransformerConfig is a small BERT for training from scratch on a
// CPU (the generated tasks, tests): with the default width of 128, two heads
// of 64, BERT's head size. Real work starts from a checkpoint.
func DefaultTransformerConfig() TransformerConfig {
	return TransformerConfig{Layers: 2, Heads: 2, Intermediate: 512, Act: "gelu",
		MaxPositions: 512, TypeVocab: 2, LayerNormEps: 1e-12, HiddenDropout: 0.1, AttnDropout: 0.1, Pool: "mean"}
}

// Validate reports the first impossible setting for an encoder of width
// hidden.
func (c TransformerConfig) Validate(hidden int) error {
	switch {
	case c.Layers < 1 || c.Heads < 1 || hidden < 1 || c.Intermediate < 1:
		return fmt.Errorf("transformer: layers %d, heads %d, hidden %d and intermediate %d must be positive", c.Layers, c.Heads, hidden, c.Intermediate)
	case hidden%c.Heads != 0:
		return fmt.Errorf("transformer: hidden size %d is not a multiple of %d heads", hidden, c.Heads)
	case c.MaxPositions < 2 || c.TypeVocab < 1:
		return fmt.Errorf("transformer: max positions %d (need ≥ 2) and token types %d (need ≥ 1)", c.MaxPositions, c.TypeVocab)
	case !(c.LayerNormEps > 0):
		return fmt.Errorf("transformer: layer-norm epsilon %g must be positive", c.LayerNormEps)
	case c.HiddenDropout < 0 || c.HiddenDropout >= 1 || c.AttnDropout < 0 || c.AttnDropout >= 1:
		return fmt.Errorf("transformer: dropouts %g and %g must be in [0, 1)", c.HiddenDropout, c.AttnDropout)
	}
	if !contains(TransformerActs, c.Act) {
		return fmt.Errorf("transformer: activation %q (valid: %s)", c.Act, strings.Join(TransformerActs, ", "))
	}
	if !contains(TransformerPools, c.Pool) {
		return fmt.Errorf("transformer: pooling %q (valid: %s)", c.Pool, strings.Join(TransformerPools, ", "))
	}
	if c.Pool == "pooler" && !c.Pooler {
		return fmt.Errorf("transformer: pooling %q needs pooler weights, which this model has none of (use cls or mean)", c.Pool)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Dense is a linear layer stored as Hugging Face stores it: W [out, in],
// so checkpoints load and export without transposing.
type Dense struct {
	W, B *ag.Param
}

// newDense draws W from N(0, std²) (BERT's initializer_range) with a zero
// bias.
func newDense(name string, in, out int, std float64, rng *rand.Rand) *Dense {
	w := tensor.New(out, in)
	for i := range w.Data {
		w.Data[i] = float32(rng.NormFloat64() * std)
	}
	return &Dense{W: ag.NewParam(name+".weight", w), B: ag.NewParam(name+".bias", tensor.New(out))}
}

// Forward applies the layer to x [..., in].
func (d *Dense) Forward(t *ag.Tape, x *ag.Var) *ag.Var {
	return t.LinearT(x, d.W.Var, d.B.Var)
}

// Params lists W and B.
func (d *Dense) Params() []*ag.Param { return []*ag.Param{d.W, d.B} }

// newNamedLayerNorm is a LayerNorm with Hugging Face's parameter names.
func newNamedLayerNorm(name string, dim int, eps float64) *LayerNorm {
	l := NewLayerNorm(name, dim, float32(eps))
	l.Gamma.Name, l.Beta.Name = name+".weight", name+".bias"
	return l
}

// TransformerLayer is one post-LayerNorm BERT layer: self-attention, output
// projection, residual and LayerNorm; feed-forward, residual and LayerNorm.
type TransformerLayer struct {
	Query, Key, Value, AttnOut *Dense
	AttnNorm                   *LayerNorm
	Inter, Out                 *Dense
	OutNorm                    *LayerNorm
}

// Params lists the layer's weights in Hugging Face's order.
func (l *TransformerLayer) Params() []*ag.Param {
	var ps []*ag.Param
	for _, d := range []*Dense{l.Query, l.Key, l.Value, l.AttnOut} {
		ps = append(ps, d.Params()...)
	}
	ps = append(ps, l.AttnNorm.Gamma, l.AttnNorm.Beta)
	ps = append(ps, l.Inter.Params()...)
	ps = append(ps, l.Out.Params()...)
	return append(ps, l.OutNorm.Gamma, l.OutNorm.Beta)
}

// Transformer is a BERT encoder after the word lookup: position and token
// type embeddings, LayerNorm and dropout, then the layers, then pooling.
// Parameter names are Hugging Face's without the "bert." prefix.
type Transformer struct {
	Cfg       TransformerConfig
	Hidden    int
	Positions *ag.Param // [MaxPositions, Hidden]
	Types     *ag.Param // [TypeVocab, Hidden]
	EmbNorm   *LayerNorm
	Layers    []*TransformerLayer
	Pooler    *Dense // nil without pooler weights
}

// NewTransformer initialises an encoder of width hidden as BERT does
// (N(0, 0.02) weights, zero biases, identity LayerNorms).
func NewTransformer(cfg TransformerConfig, hidden int, rng *rand.Rand) *Transformer {
	const std = 0.02
	h := hidden
	normal := func(name string, rows int) *ag.Param {
		w := tensor.New(rows, h)
		for i := range w.Data {
			w.Data[i] = float32(rng.NormFloat64() * std)
		}
		return ag.NewParam(name, w)
	}
	tr := &Transformer{
		Cfg:       cfg,
		Hidden:    h,
		Positions: normal("embeddings.position_embeddings.weight", cfg.MaxPositions),
		Types:     normal("embeddings.token_type_embeddings.weight", cfg.TypeVocab),
		EmbNorm:   newNamedLayerNorm("embeddings.LayerNorm", h, cfg.LayerNormEps),
	}
	for i := 0; i < cfg.Layers; i++ {
		p := fmt.Sprintf("encoder.layer.%d.", i)
		tr.Layers = append(tr.Layers, &TransformerLayer{
			Query:    newDense(p+"attention.self.query", h, h, std, rng),
			Key:      newDense(p+"attention.self.key", h, h, std, rng),
			Value:    newDense(p+"attention.self.value", h, h, std, rng),
			AttnOut:  newDense(p+"attention.output.dense", h, h, std, rng),
			AttnNorm: newNamedLayerNorm(p+"attention.output.LayerNorm", h, cfg.LayerNormEps),
			Inter:    newDense(p+"intermediate.dense", h, cfg.Intermediate, std, rng),
			Out:      newDense(p+"output.dense", cfg.Intermediate, h, std, rng),
			OutNorm:  newNamedLayerNorm(p+"output.LayerNorm", h, cfg.LayerNormEps),
		})
	}
	if cfg.Pooler {
		tr.Pooler = newDense("pooler.dense", h, h, std, rng)
	}
	return tr
}

// Encode runs the encoder on word embeddings x [B, L, Hidden] (Hugging
// Face's inputs_embeds: what embedding-space attacks perturb), all of token
// type 0. It returns the last hidden states [B, L, Hidden] (rows beyond a
// sentence's length hold values that nothing reads) and the pooled
// sentence [B, Hidden].
func (tr *Transformer) Encode(t *ag.Tape, x *ag.Var, lengths []int) (tokens, sentence *ag.Var) {
	return tr.EncodeTyped(t, x, lengths, nil)
}

// EncodeTyped is Encode with token types [B·L] (sentence pairs: 0 for the
// first segment, 1 for the second); nil means all 0.
func (tr *Transformer) EncodeTyped(t *ag.Tape, x *ag.Var, lengths []int, types []int32) (tokens, sentence *ag.Var) {
	return tr.EncodeScaled(t, x, lengths, types, nil, nil)
}

// EncodeScaled is EncodeTyped with FLAT's word mask where a transformer
// takes it (spec flat.md §2.4): the input states (the embedding layer's
// output, word + position + token type, after its LayerNorm and dropout)
// are multiplied position by position by scale [B·L, 1] (row-major over
// [B, L]; nil: not scaled), and the attention of every layer reads only
// the keys keep [B·L] marks (nil: all real tokens; see
// ag.Tape.SelfAttentionPackedKeys, which keeps every key of a row whose
// real keys would all be removed).
func (tr *Transformer) EncodeScaled(t *ag.Tape, x *ag.Var, lengths []int, types []int32, scale *ag.Var, keep []bool) (tokens, sentence *ag.Var) {
	h := tr.InputStates(t, x, types)
	if scale != nil {
		sh := h.Shape()
		h = t.Mul(h, t.Reshape(scale, sh[0], sh[1], 1))
	}
	h = tr.RunLayersKeys(t, h, lengths, keep, 0, len(tr.Layers))
	return h, tr.pool(t, h, lengths)
}

// InputStates is what the first layer reads: word embeddings x [B, L,
// Hidden] plus the position and token-type embeddings, normalised, with
// dropout. Types as in EncodeTyped.
func (tr *Transformer) InputStates(t *ag.Tape, x *ag.Var, types []int32) *ag.Var {
	sh := x.Shape()
	b, l := sh[0], sh[1]
	if l > tr.Cfg.MaxPositions {
		panic(fmt.Sprintf("nn.Transformer: %d positions, the model has %d (truncate before encoding)", l, tr.Cfg.MaxPositions))
	}
	h := t.Add(x, t.Slice(tr.Positions.Var, 0, 0, l))
	if types == nil {
		h = t.Add(h, t.Reshape(t.Slice(tr.Types.Var, 0, 0, 1), tr.Hidden))
	} else {
		h = t.Add(h, t.Reshape(t.Lookup(tr.Types.Var, types), b, l, tr.Hidden))
	}
	return t.Dropout(tr.EmbNorm.Forward(t, h), float32(tr.Cfg.HiddenDropout))
}

// RunLayers runs layers [from, to) on states h [B, L, Hidden]: a caller
// that trains only the top layers runs the others on a tape without
// gradients.
func (tr *Transformer) RunLayers(t *ag.Tape, h *ag.Var, lengths []int, from, to int) *ag.Var {
	return tr.RunLayersKeys(t, h, lengths, nil, from, to)
}

// RunLayersKeys is RunLayers whose attention reads only the keys keep
// [B·L] marks (nil: all real tokens), as in EncodeScaled.
func (tr *Transformer) RunLayersKeys(t *ag.Tape, h *ag.Var, lengths []int, keep []bool, from, to int) *ag.Var {
	for _, layer := range tr.Layers[from:to] {
		h = tr.layer(t, layer, h, lengths, keep)
	}
	return h
}

func (tr *Transformer) layer(t *ag.Tape, l *TransformerLayer, h *ag.Var, lengths []int, keep []bool) *ag.Var {
	drop := float32(tr.Cfg.HiddenDropout)
	// One product with the three projections stacked ([3H, H]) instead of
	// three: a larger GEMM runs faster, and the stacking is a copy of the
	// weights (its backward splits the gradient back).
	w := t.Concat(0, l.Query.W.Var, l.Key.W.Var, l.Value.W.Var)
	b := t.Concat(0, l.Query.B.Var, l.Key.B.Var, l.Value.B.Var)
	ctx := t.SelfAttentionPackedKeys(t.LinearT(h, w, b), tr.Cfg.Heads, lengths, keep, float32(tr.Cfg.AttnDropout))
	h = l.AttnNorm.Forward(t, t.Add(h, t.Dropout(l.AttnOut.Forward(t, ctx), drop)))
	f := activate(t, tr.Cfg.Act, l.Inter.Forward(t, h))
	return l.OutNorm.Forward(t, t.Add(h, t.Dropout(l.Out.Forward(t, f), drop)))
}

// activate applies a Hugging Face hidden_act by name: relu, the tanh
// approximation of GELU (gelu_new, gelu_pytorch_tanh), else exact GELU.
func activate(t *ag.Tape, act string, x *ag.Var) *ag.Var {
	switch act {
	case "relu":
		return t.ReLU(x)
	case "gelu_new", "gelu_pytorch_tanh":
		return t.GELUTanh(x)
	}
	return t.GELU(x)
}

// pool makes the sentence representation from the last hidden states.
func (tr *Transformer) pool(t *ag.Tape, h *ag.Var, lengths []int) *ag.Var {
	if tr.Cfg.Pool == "mean" {
		return t.MeanOverTime(h, lengths)
	}
	cls := t.Reshape(t.Slice(h, 1, 0, 1), h.Shape()[0], tr.Hidden)
	if tr.Cfg.Pool == "pooler" {
		return t.Tanh(tr.Pooler.Forward(t, cls))
	}
	return cls
}

// Pool returns the sentence representation of hidden states h [B, L,
// Hidden] by another pooling than the configured one (cls, mean or
// pooler): sentence-embedding users pick theirs.
func (tr *Transformer) Pool(t *ag.Tape, h *ag.Var, lengths []int, pool string) (*ag.Var, error) {
	if pool == "pooler" && tr.Pooler == nil {
		return nil, fmt.Errorf("the model has no pooler weights")
	}
	if !contains(TransformerPools, pool) {
		return nil, fmt.Errorf("pooling %q (valid: %s)", pool, strings.Join(TransformerPools, ", "))
	}
	c := *tr
	c.Cfg.Pool = pool
	return c.pool(t, h, lengths), nil
}

// OutDim is the hidden size.
func (tr *Transformer) OutDim() int { return tr.Hidden }

// MinLen is 1.
func (tr *Transformer) MinLen() int { return 1 }

// Params lists the weights in Hugging Face's order.
func (tr *Transformer) Params() []*ag.Param {
	ps := []*ag.Param{tr.Positions, tr.Types, tr.EmbNorm.Gamma, tr.EmbNorm.Beta}
	for _, l := range tr.Layers {
		ps = append(ps, l.Params()...)
	}
	if tr.Pooler != nil {
		ps = append(ps, tr.Pooler.Params()...)
	}
	return ps
}

// MiniLMConfig is all-MiniLM-L6-v2's shape (6 layers, width 384, 12 heads,
// feed-forward 1,536, vocabulary 30,522, 512 positions, tanh pooler) with
// a head of classes outputs: the benchmark workload, random weights
// sufficing to time it.
func MiniLMConfig(classes int) Config {
	cfg := DefaultConfig("transformer")
	tc := *cfg.Transformer
	tc.Layers, tc.Heads, tc.Intermediate, tc.Pool, tc.Pooler = 6, 12, 1536, "pooler", true
	cfg.Transformer, cfg.EmbedDim, cfg.VocabSize, cfg.NumClasses = &tc, 384, 30522, classes
	return cfg
}
