// Package lstmlm is a word-level LSTM language model (spgd.md §4.2): an
// embedding, one unidirectional LSTM layer and a full softmax over the
// vocabulary, trained on a corpus concatenated end to end with truncated
// backpropagation through time. SPGD uses it twice: its embedding and LSTM
// initialise the classifier, and its perplexity judges how readable an
// embedding perturbation leaves a text.
package lstmlm

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"slices"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/checkpoint"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/text"
)

// EOS ends every text of the corpus (the vocabulary's last word).
const EOS = "<eos>"

// Config is the model's shape and initialisation.
type Config struct {
	EmbedDim int `json:"embed_dim"`
	Hidden   int `json:"hidden"`
	// InitScale draws every weight from U(−InitScale, InitScale) (spec:
	// 0.1); ForgetBias starts the LSTM's forget-gate bias (spec: 1).
	InitScale  float64 `json:"init_scale"`
	ForgetBias float64 `json:"forget_bias"`
	// Tokenizer says how texts become words (text.NewTokenizer).
	Tokenizer string `json:"tokenizer"`
}

// DefaultConfig is the spec's §10 scale for a CPU: 64-d embeddings, 256
// LSTM units, U(±0.1), forget bias 1.
func DefaultConfig() Config {
	return Config{EmbedDim: 64, Hidden: 256, InitScale: 0.1, ForgetBias: 1, Tokenizer: "flat"}
}

// Model is the language model.
type Model struct {
	Cfg   Config
	Vocab *text.Vocab
	Tok   text.Tokenizer
	Emb   *nn.Embedding
	LSTM  *nn.LSTM
	Out   *nn.Linear
	// Record is the training record Load read (nil for a new model).
	Record any
	eos    int32
}

// Param names, shared with a classifier initialised from the model
// (nn.RNN's "lstm.fwd", nn.Classifier's "embedding").
const (
	embName  = "embedding"
	lstmName = "lstm.fwd"
	outName  = "softmax"
)

// New builds a model over vocab, which must hold EOS.
func New(cfg Config, vocab *text.Vocab, rng *rand.Rand) (*Model, error) {
	if cfg.EmbedDim < 1 || cfg.Hidden < 1 || cfg.EmbedDim > text.MaxVectorDim || cfg.Hidden > text.MaxVectorDim {
		return nil, fmt.Errorf("lstmlm: embedding %d and hidden %d must be in [1, %d]", cfg.EmbedDim, cfg.Hidden, text.MaxVectorDim)
	}
	if !(cfg.InitScale > 0) || math.IsInf(cfg.InitScale, 0) {
		return nil, fmt.Errorf("lstmlm: init scale %g must be positive", cfg.InitScale)
	}
	tok, err := text.NewTokenizer(cfg.Tokenizer)
	if err != nil {
		return nil, err
	}
	if !vocab.Has(EOS) {
		return nil, fmt.Errorf("lstmlm: the vocabulary lacks %s", EOS)
	}
	v := vocab.Len()
	m := &Model{Cfg: cfg, Vocab: vocab, Tok: tok, eos: vocab.ID(EOS),
		Emb:  nn.NewEmbedding(embName, v, cfg.EmbedDim, cfg.InitScale, text.PadID, rng),
		LSTM: nn.NewLSTM(lstmName, cfg.EmbedDim, cfg.Hidden, false, rng),
		Out:  nn.NewLinear(outName, cfg.Hidden, v, rng)}
	for _, p := range []*ag.Param{m.LSTM.Wx, m.LSTM.Wh, m.LSTM.B, m.Out.W, m.Out.B} {
		for i := range p.Value.Data {
			p.Value.Data[i] = float32((2*rng.Float64() - 1) * cfg.InitScale)
		}
	}
	h := cfg.Hidden
	for i := h; i < 2*h; i++ { // gate order: input, forget, cell, output
		m.LSTM.B.Value.Data[i] = float32(cfg.ForgetBias)
	}
	return m, nil
}

// Params are the trained weights.
func (m *Model) Params() []*ag.Param {
	return append([]*ag.Param{m.Emb.W}, append(m.LSTM.Params(), m.Out.Params()...)...)
}

// EOSID is the id of EOS.
func (m *Model) EOSID() int32 { return m.eos }

// Words tokenizes a text as the model reads it: its first maxLen words
// (0: all).
func (m *Model) Words(s string, maxLen int) []string {
	words := text.Texts(m.Tok.Tokenize(s))
	if maxLen > 0 && len(words) > maxLen {
		words = words[:maxLen]
	}
	return words
}

// IDs maps words to ids (unknown words to <unk>), without EOS.
func (m *Model) IDs(words []string) []int32 {
	ids := make([]int32, len(words))
	for i, w := range words {
		ids[i] = m.Vocab.ID(w)
	}
	return ids
}

// Encode is IDs of a whole text's Words.
func (m *Model) Encode(s string) []int32 { return m.IDs(m.Words(s, 0)) }

// Stream concatenates texts (ids) end to end, each followed by EOS: the
// corpus the model trains on.
func (m *Model) Stream(texts [][]int32) []int32 {
	var out []int32
	for _, ids := range texts {
		out = append(append(out, ids...), m.eos)
	}
	return out
}

// forward runs segments x [B, T] (ids) from carry and returns the logits
// [B·T, V]; perturb, when set ([B, T, D]), is added to the embeddings.
func (m *Model) forward(t *ag.Tape, ids []int32, b, steps int, carry *ag.LSTMCarry, perturb *tensor.Tensor) *ag.Var {
	x := m.Emb.Forward(t, ids, b, steps)
	if perturb != nil {
		x = t.Add(x, t.Const(perturb))
	}
	hs := t.LSTMState(x, m.LSTM.Wx.Var, m.LSTM.Wh.Var, m.LSTM.B.Var, nil, carry)
	return m.Out.Forward(t, t.Reshape(hs, b*steps, m.Cfg.Hidden))
}

// NLL is the summed negative log-likelihood of each word of ids after the
// first given the words before it (a text read alone, from a zero state),
// and the number of words predicted. perturb, when set ([len(ids), D]),
// is added to the input embeddings (spgd.md §6: ẽ_t = V[w_t] + d_t).
func (m *Model) NLL(ids []int32, perturb []float32) (sum float64, n int, err error) {
	if len(ids) < 2 {
		return 0, 0, nil
	}
	steps := len(ids) - 1
	var p *tensor.Tensor
	if perturb != nil {
		if len(perturb) < steps*m.Cfg.EmbedDim {
			return 0, 0, fmt.Errorf("lstmlm: a perturbation of %d values for %d words of %d dimensions", len(perturb), steps, m.Cfg.EmbedDim)
		}
		p = tensor.From(slices.Clone(perturb[:steps*m.Cfg.EmbedDim]), 1, steps, m.Cfg.EmbedDim)
	}
	t := ag.NewTape()
	t.NoGrad = true
	logits := m.forward(t, ids[:steps], 1, steps, &ag.LSTMCarry{}, p).Value
	v := m.Vocab.Len()
	for s, lse := range ag.LogSumExpRows(logits.Data, steps, v) {
		sum += float64(lse) - float64(logits.Data[s*v+int(ids[s+1])])
	}
	return sum, steps, nil
}

// Perplexity is exp of the NLL pooled over every predicted word of the
// texts (token-weighted, spgd.md §6), each text read alone.
func (m *Model) Perplexity(texts [][]int32) (float64, error) {
	var sum float64
	var n int
	for _, ids := range texts {
		s, k, err := m.NLL(ids, nil)
		if err != nil {
			return 0, err
		}
		sum, n = sum+s, n+k
	}
	if n == 0 {
		return math.NaN(), fmt.Errorf("lstmlm: no word to predict")
	}
	return math.Exp(sum / float64(n)), nil
}

// savedConfig is the model directory's config.
type savedConfig struct {
	Kind  string `json:"kind"`
	Model Config `json:"model"`
	Info  any    `json:"training,omitempty"`
}

// Save writes the model to dir atomically (config, vocabulary, weights);
// info goes into the config as the training record.
func (m *Model) Save(dir string, info any) error {
	cfg, err := json.Marshal(savedConfig{Kind: "lstm-lm", Model: m.Cfg, Info: info})
	if err != nil {
		return err
	}
	ts := map[string]*tensor.Tensor{}
	for _, p := range m.Params() {
		ts[p.Name] = p.Value
	}
	return checkpoint.Save(dir, &checkpoint.Bundle{Config: cfg, Vocab: m.Vocab.Words(), Tensors: ts})
}

// Load reads a model Save wrote (its weights' checksums verified).
func Load(dir string) (*Model, error) {
	b, err := checkpoint.Load(dir)
	if err != nil {
		return nil, err
	}
	var sc savedConfig
	if err := json.Unmarshal(b.Config, &sc); err != nil {
		return nil, fmt.Errorf("lstmlm: %s: %w", dir, err)
	}
	if sc.Kind != "lstm-lm" {
		return nil, fmt.Errorf("lstmlm: %s holds a %q model, not an LSTM language model", dir, sc.Kind)
	}
	vocab, err := text.NewVocab(b.Vocab)
	if err != nil {
		return nil, fmt.Errorf("lstmlm: %s: %w", dir, err)
	}
	m, err := New(sc.Model, vocab, rand.New(rand.NewSource(1)))
	if err != nil {
		return nil, fmt.Errorf("lstmlm: %s: %w", dir, err)
	}
	for _, p := range m.Params() {
		t, ok := b.Tensors[p.Name]
		if !ok || !slices.Equal(t.Shape, p.Value.Shape) {
			return nil, fmt.Errorf("lstmlm: %s: tensor %s missing or of another shape", dir, p.Name)
		}
		copy(p.Value.Data, t.Data)
	}
	m.Record = sc.Info
	return m, nil
}
