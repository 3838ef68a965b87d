package nn

import (
	"fmt"
	"math"
	"math/rand"
	"sort"
	"strings"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/tensor"
)

// PadID is the padding token id every vocabulary reserves (row 0).
const PadID int32 = 0

// Config describes a classifier; it is saved with the model.
type Config struct {
	Arch       string  `json:"arch"` // cnn | bilstm | lstm | transformer
	VocabSize  int     `json:"vocab_size"`
	EmbedDim   int     `json:"embed_dim"`
	NumClasses int     `json:"num_classes"`
	Filters    int     `json:"filters,omitempty"` // cnn: filters per width
	Widths     []int   `json:"widths,omitempty"`  // cnn: window widths
	Hidden     int     `json:"hidden,omitempty"`  // lstm: units per direction
	Pool       string  `json:"pool,omitempty"`    // lstm: max | mean over time
	Tanh       bool    `json:"tanh,omitempty"`    // lstm: tanh before and after pooling (FLAT's LSTM)
	Dropout    float64 `json:"dropout"`           // before the output layer
	// EmbedDropout drops embedding entries in training mode, after the
	// masks (SPGD's and Miyato et al.'s classifiers: 0.5); 0 = none.
	EmbedDropout float64 `json:"embed_dropout,omitempty"`
	EmbedInit    float64 `json:"embed_init"` // U(±a) for random embedding rows
	FreezeEmb    bool    `json:"freeze_embeddings,omitempty"`
	MaxLen       int     `json:"max_len"` // truncation length in tokens (0 = none)
	// IDMap, when set, replaces every input id by IDMap[id] before the
	// embedding lookup (SEM's synonym encoding); saved with the model so
	// Forward, Predict and every attack see it.
	IDMap []int32 `json:"id_map,omitempty"`
	// Mask adds FLAT's variational word mask (nn/mask.go) between the
	// embedding and the encoder; MaskHidden is its hidden width (400).
	// On a transformer φ is still computed from the word-embedding row
	// (global), but it scales the input states of the first layer (spec
	// flat.md §2.4; Transformer.EncodeScaled).
	Mask       bool `json:"mask,omitempty"`
	MaskHidden int  `json:"mask_hidden,omitempty"`
	// MaskAttendAll keeps a transformer's tokens whose sampled mask is 0
	// among the attention keys of training passes; by default they are
	// removed from the keys for that pass (spec §2.2, the reference's
	// choice). Inference never removes keys; other encoders ignore it.
	MaskAttendAll bool `json:"mask_attend_all,omitempty"`
	// Groups, when set, adds FLAT's trivial group-mask baseline
	// (nn/groupmask.go): Groups[id] is the group of word id (after IDMap),
	// in [0, NumGroups); each group shares one learnable scale, initialised
	// to 1, on its words' embeddings.
	Groups    []int32 `json:"groups,omitempty"`
	NumGroups int     `json:"num_groups,omitempty"`
	// InputLayer, when > 0, maps each word vector through a linear layer
	// of this width and a ReLU before the encoder; HeadHidden, when > 0,
	// adds a linear layer of this width and a ReLU between the pooled
	// sentence and the output layer. Together they are Jia et al.'s (2019)
	// IBP models (100 and 100), whose certified training needs them.
	InputLayer int `json:"input_layer,omitempty"`
	HeadHidden int `json:"head_hidden,omitempty"`
	// Transformer is the encoder's shape when Arch is transformer
	// (EmbedDim must equal its Hidden).
	Transformer *TransformerConfig `json:"transformer,omitempty"`
	// Reconstructor adds RAR's token reconstruction head (nn/recon.go),
	// its decoder tied to the word embeddings.
	Reconstructor bool `json:"reconstructor,omitempty"`
	// Pairs makes a transformer read sentence pairs as BERT does, "[CLS]
	// a [SEP] b [SEP]": every position after a row's first SepID has
	// token type 1 (b and its [SEP]), the others type 0 (TypeIDs). The
	// types follow from the ids, so every path that feeds ids (training,
	// Predict, the attacks) reads a pair as it was encoded. Off, every
	// position has type 0.
	Pairs bool  `json:"pairs,omitempty"`
	SepID int32 `json:"sep_id,omitempty"`
}

// Archs lists the encoder architectures.
var Archs = []string{"cnn", "bilstm", "lstm", "transformer"}

// DefaultConfig returns the defaults for an architecture: Kim CNN with
// widths 3,4,5 and 100 filters each, dropout 0.5; LSTMs with 150 units per
// direction and max pooling.
func DefaultConfig(arch string) Config {
	c := Config{Arch: arch, EmbedDim: 300, NumClasses: 2, Dropout: 0.5, EmbedInit: 0.25}
	switch arch {
	case "cnn":
		c.Filters, c.Widths = 100, []int{3, 4, 5}
	case "bilstm", "lstm":
		c.Hidden, c.Pool = 150, "max"
	case "transformer":
		tc := DefaultTransformerConfig()
		c.Transformer, c.EmbedDim, c.Dropout, c.EmbedInit = &tc, 128, 0.1, 0.02*math.Sqrt(3)
	}
	return c
}

// Validate reports the first impossible setting.
func (c Config) Validate() error {
	switch {
	case c.VocabSize < 2:
		return fmt.Errorf("vocabulary size %d: need at least <pad> and <unk>", c.VocabSize)
	case c.EmbedDim < 1:
		return fmt.Errorf("embedding size %d must be positive", c.EmbedDim)
	case c.NumClasses < 2:
		return fmt.Errorf("%d classes: need at least 2", c.NumClasses)
	case c.Dropout < 0 || c.Dropout >= 1:
		return fmt.Errorf("dropout %g must be in [0, 1)", c.Dropout)
	case c.EmbedDropout < 0 || c.EmbedDropout >= 1:
		return fmt.Errorf("embedding dropout %g must be in [0, 1)", c.EmbedDropout)
	case c.InputLayer < 0 || c.HeadHidden < 0:
		return fmt.Errorf("input layer %d and head hidden layer %d must not be negative", c.InputLayer, c.HeadHidden)
	case c.IDMap != nil && len(c.IDMap) != c.VocabSize:
		return fmt.Errorf("id map has %d entries, the vocabulary %d", len(c.IDMap), c.VocabSize)
	}
	for i, id := range c.IDMap {
		if id < 0 || int(id) >= c.VocabSize {
			return fmt.Errorf("id map entry %d is %d, not a word id (the vocabulary has %d)", i, id, c.VocabSize)
		}
	}
	if err := c.validateGroups(); err != nil {
		return err
	}
	switch c.Arch {
	case "cnn":
		if c.Filters < 1 || len(c.Widths) == 0 {
			return fmt.Errorf("cnn needs filters > 0 and at least one width (have %d, %v)", c.Filters, c.Widths)
		}
		for _, w := range c.Widths {
			if w < 1 {
				return fmt.Errorf("cnn window width %d must be positive", w)
			}
		}
	case "bilstm", "lstm":
		if c.Hidden < 1 {
			return fmt.Errorf("%s needs hidden > 0", c.Arch)
		}
		if c.Pool != "max" && c.Pool != "mean" && c.Pool != "last" {
			return fmt.Errorf("pool %q: want max, mean or last", c.Pool)
		}
		if c.Pool == "last" && c.Arch != "lstm" {
			return fmt.Errorf("pool last (the final hidden state) is for the unidirectional lstm, not %s", c.Arch)
		}
	case "transformer":
		if c.Transformer == nil {
			return fmt.Errorf("transformer: no encoder shape in the config")
		}
		if err := c.Transformer.Validate(c.EmbedDim); err != nil {
			return err
		}
		if c.InputLayer > 0 {
			return fmt.Errorf("transformer: an input layer (%d) is not supported", c.InputLayer)
		}
		if c.MaxLen > c.Transformer.MaxPositions {
			return fmt.Errorf("transformer: max length %d exceeds the model's %d positions", c.MaxLen, c.Transformer.MaxPositions)
		}
	default:
		return fmt.Errorf("unknown architecture %q (valid: %s)", c.Arch, strings.Join(Archs, ", "))
	}
	if c.Reconstructor {
		if _, _, _, err := reconstructorShape(c); err != nil {
			return err
		}
	}
	if c.Pairs {
		switch {
		case c.Arch != "transformer":
			return fmt.Errorf("sentence pairs need a transformer (token types), not %s", c.Arch)
		case c.Transformer.TypeVocab < 2:
			return fmt.Errorf("sentence pairs need 2 token types, the transformer has %d", c.Transformer.TypeVocab)
		case c.SepID < 0 || int(c.SepID) >= c.VocabSize:
			return fmt.Errorf("separator id %d is not a token id (the vocabulary has %d)", c.SepID, c.VocabSize)
		}
	}
	return nil
}

// TypeIDs returns the token types of a batch's ids [B·L] (rows of width
// l) as Config.Pairs defines them, or nil (every position type 0) for a
// model that does not read pairs.
func (m *Classifier) TypeIDs(ids []int32, l int) []int32 {
	if !m.Cfg.Pairs || l <= 0 {
		return nil
	}
	types := make([]int32, len(ids))
	for r := 0; r+l <= len(ids); r += l {
		for j, id := range ids[r : r+l] {
			if id == m.Cfg.SepID {
				for k := r + j + 1; k < r+l; k++ {
					types[k] = 1
				}
				break
			}
		}
	}
	return types
}

// Encoder turns embedded tokens into representations.
type Encoder interface {
	// Encode maps x [B, L, D] to token representations [B, L', H] and a
	// sentence representation [B, H]; lengths count each row's real tokens.
	Encode(t *ag.Tape, x *ag.Var, lengths []int) (tokens, sentence *ag.Var)
	OutDim() int
	// MinLen is the shortest padded length the encoder accepts.
	MinLen() int
	Params() []*ag.Param
}

// Classifier is embedding → [input layer] → encoder → [hidden layer] →
// dropout → linear head.
type Classifier struct {
	Cfg Config
	Emb *Embedding
	// In is the optional per-word input layer (ReLU after it), Hid the
	// optional hidden layer of the head (ReLU after it); nil when absent.
	In  *Linear
	Enc Encoder
	Hid *Linear
	Out *Linear
	// Mask, when non-nil, scales (inference) or samples (training) each
	// word embedding by its global importance before the encoder.
	Mask *WordMask
	// GroupMask, when non-nil, scales each word embedding by its group's
	// learnt scalar (after Mask, before the encoder).
	GroupMask *GroupMask
	// Rec, when non-nil, is RAR's reconstruction head; nothing but
	// Reconstruct reads it.
	Rec *Reconstructor
}

// New builds a randomly initialised classifier.
func New(cfg Config, rng *rand.Rand) (*Classifier, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m := &Classifier{Cfg: cfg}
	m.Emb = NewEmbedding("embedding", cfg.VocabSize, cfg.EmbedDim, cfg.EmbedInit, PadID, rng)
	m.Emb.W.Frozen = cfg.FreezeEmb
	in := cfg.EmbedDim
	if cfg.InputLayer > 0 {
		m.In = NewLinear("input", cfg.EmbedDim, cfg.InputLayer, rng)
		in = cfg.InputLayer
	}
	switch cfg.Arch {
	case "cnn":
		m.Enc = NewCNN(in, cfg.Filters, cfg.Widths, rng)
	case "bilstm", "lstm":
		m.Enc = NewRNN(in, cfg.Hidden, cfg.Arch == "bilstm", cfg.Pool, cfg.Tanh, rng)
	case "transformer":
		m.Emb.W.Name = "embeddings.word_embeddings.weight"
		m.Enc = NewTransformer(*cfg.Transformer, cfg.EmbedDim, rng)
	}
	out := m.Enc.OutDim()
	if cfg.HeadHidden > 0 {
		m.Hid = NewLinear("hidden", out, cfg.HeadHidden, rng)
		out = cfg.HeadHidden
	}
	m.Out = NewLinear("head", out, cfg.NumClasses, rng)
	if cfg.Mask {
		m.Mask = NewWordMask(cfg.EmbedDim, cfg.MaskHidden, rng)
	}
	if cfg.Groups != nil {
		m.GroupMask = NewGroupMask(cfg.Groups, cfg.NumGroups)
	}
	if cfg.Reconstructor {
		var err error
		if m.Rec, err = newReconstructor(cfg, rng); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Params lists every parameter, embedding first, in a fixed order; the
// reconstruction head's come last, so that the order of the others does
// not depend on it.
func (m *Classifier) Params() []*ag.Param {
	ps := []*ag.Param{m.Emb.W}
	if m.In != nil {
		ps = append(ps, m.In.Params()...)
	}
	ps = append(ps, m.Enc.Params()...)
	if m.Hid != nil {
		ps = append(ps, m.Hid.Params()...)
	}
	ps = append(ps, m.Out.Params()...)
	if m.Mask != nil {
		ps = append(ps, m.Mask.Params()...)
	}
	if m.GroupMask != nil {
		ps = append(ps, m.GroupMask.Params()...)
	}
	if m.Rec != nil {
		ps = append(ps, m.Rec.Params()...)
	}
	return ps
}

// Embed looks up a batch's ids: [B, L, D], through Cfg.IDMap when set.
func (m *Classifier) Embed(t *ag.Tape, b *Batch) *ag.Var {
	return m.Emb.Forward(t, m.MapIDs(b.IDs), b.B, b.L)
}

// MapIDs applies Cfg.IDMap to ids (ids itself when there is no map; ids
// outside the map are kept).
func (m *Classifier) MapIDs(ids []int32) []int32 {
	if m.Cfg.IDMap == nil {
		return ids
	}
	out := make([]int32, len(ids))
	for i, id := range ids {
		out[i] = m.MapID(id)
	}
	return out
}

// MapID is MapIDs for one id.
func (m *Classifier) MapID(id int32) int32 {
	if int(id) >= 0 && int(id) < len(m.Cfg.IDMap) {
		return m.Cfg.IDMap[id]
	}
	return id
}

// Encode runs the input layer, if any, and the encoder on embedded
// vectors. A model that reads sentence pairs needs its batch's token
// types, which lengths do not give: it panics (use EncodeInput).
func (m *Classifier) Encode(t *ag.Tape, x *ag.Var, lengths []int) (tokens, sentence *ag.Var) {
	if m.Cfg.Pairs {
		panic("nn.Classifier.Encode: a model that reads sentence pairs needs the token types of its batch (EncodeInput, EncodeBatch)")
	}
	return m.Enc.Encode(t, m.InputLayer(t, x), lengths)
}

// encodeBatch is Encode of batch b's embedded input x with b's token
// types (TypeIDs).
func (m *Classifier) encodeBatch(t *ag.Tape, x *ag.Var, b *Batch) (tokens, sentence *ag.Var) {
	if types := m.TypeIDs(b.IDs, b.L); types != nil {
		return m.Enc.(*Transformer).EncodeTyped(t, m.InputLayer(t, x), b.Lengths, types)
	}
	return m.Encode(t, x, b.Lengths)
}

// InputLayer maps word vectors [..., D] to the encoder's inputs: through
// the input layer and its ReLU, or x itself without one.
func (m *Classifier) InputLayer(t *ag.Tape, x *ag.Var) *ag.Var {
	if m.In == nil {
		return x
	}
	return t.ReLU(m.In.Forward(t, x))
}

// EncoderInputDim is the width of the encoder's input rows.
func (m *Classifier) EncoderInputDim() int {
	if m.In == nil {
		return m.Emb.Dim()
	}
	return m.Cfg.InputLayer
}

// Plain reports whether the model has neither an input layer nor a hidden
// head layer: the shortcuts that read the embedding table and the output
// layer directly apply only then.
func (m *Classifier) Plain() bool { return m.In == nil && m.Hid == nil }

// Head maps sentence representations [B, H] to logits [B, C], with dropout
// before the output layer (and before the hidden layer, as Jia et al.'s
// models) in training mode.
func (m *Classifier) Head(t *ag.Tape, sentence *ag.Var) *ag.Var {
	if m.Hid != nil {
		sentence = t.ReLU(m.Hid.Forward(t, t.Dropout(sentence, float32(m.Cfg.Dropout))))
	}
	return m.Out.Forward(t, t.Dropout(sentence, float32(m.Cfg.Dropout)))
}

// Forward returns the logits of a batch.
func (m *Classifier) Forward(t *ag.Tape, b *Batch) *ag.Var {
	return m.Head(t, m.EncodeBatch(t, b, true))
}

// perWordInputs turns EncodeBatch's per-word path on (a test turns it off
// to compare).
var perWordInputs = true

// EncodeBatch returns the sentence representations of b, the encoder's
// output for the embedded (and masked) batch; embedGrad false stops the
// gradient into the embedding table.
//
// Without word or group masks each encoder starts with a map of each word
// alone: the LSTMs' input weights x·Wx, the convolutions' x·W. So the
// encoder reads one row per distinct word of the batch: the same values,
// but the input GEMM (and, for the LSTM, its two gradient GEMMs) costs the
// batch's distinct words instead of its positions (an IMDB batch of 64
// reviews has a few thousand distinct words in about 15,000 positions).
// The CNN keeps its sparse backward under max pooling, adding into the
// words' rows.
//
// Input masks (FLAT's word mask, the group mask) scale each position's
// embedding, and the convolutions are linear in it, so the CNN applies the
// factor to each position's taps instead (Conv1DRowsScaled; FLAT CNN steps
// 2–3× faster). A masked LSTM keeps the position-wise path: scaling its
// [positions, 4H] projections costs more than the input GEMM it saves.
func (m *Classifier) EncodeBatch(t *ag.Tape, b *Batch, embedGrad bool) *ag.Var {
	s, _ := m.EncodeMasked(t, b, embedGrad)
	return s
}

// EncodeMasked is EncodeBatch that also returns the word mask's MaskOut
// (φ and, on training tapes, the sampled mask; X nil), for FLAT's
// regularisers; without a word mask MaskOut is empty.
func (m *Classifier) EncodeMasked(t *ag.Tape, b *Batch, embedGrad bool) (*ag.Var, MaskOut) {
	// Embedding dropout draws per position: the per-word paths below
	// would share one draw among a word's positions.
	if perWordInputs && !m.embedDropping(t) {
		switch e := m.Enc.(type) {
		case *CNN:
			if m.In != nil && (m.Mask != nil || m.GroupMask != nil) {
				break // the masks scale the embedding, before the input layer
			}
			ids := m.MapIDs(b.IDs)
			uniq, at := UniqueIDs(ids)
			xu := m.InputLayer(t, m.wordRows(t, uniq, embedGrad))
			factor, mo := m.InputFactor(t, ids)
			if factor == nil {
				_, s := e.EncodeWords(t, xu, at, b.B, b.L, b.Lengths)
				return s, mo
			}
			if !embedGrad {
				factor = t.StopGradient(factor) // as the masked input is stopped below
			}
			_, s := e.EncodeWordsScaled(t, xu, at, factor, b.B, b.L, b.Lengths)
			return s, mo
		case *RNN:
			if m.Mask != nil || m.GroupMask != nil {
				break
			}
			uniq, at := UniqueIDs(m.MapIDs(b.IDs))
			xu := m.InputLayer(t, m.wordRows(t, uniq, embedGrad))
			var in []*ag.Var
			for _, l := range e.Directions() {
				p := t.MatMul(xu, l.Wx.Var, false)
				in = append(in, t.Reshape(t.Gather(p, at), b.B, b.L, p.Shape()[1]))
			}
			_, s := e.EncodeProjected(t, in, b.Lengths)
			return s, MaskOut{}
		}
	}
	var mo MaskOut
	x := m.Embed(t, b)
	ids := m.MapIDs(b.IDs)
	tr := m.StateMasked()
	if m.Mask != nil && tr == nil {
		mo = m.Mask.Apply(t, m.Emb, x, ids)
		x, mo.X = mo.X, nil
	}
	x = m.ApplyGroupMask(t, x, ids)
	var factor *ag.Var
	var keep []bool
	if tr != nil {
		factor, keep, mo = m.stateFactor(t, ids)
	}
	if !embedGrad {
		x = t.StopGradient(x)
		if factor != nil {
			factor = t.StopGradient(factor) // as the masked input is stopped for the other encoders
		}
	}
	if m.embedDropping(t) {
		x = t.Dropout(x, float32(m.Cfg.EmbedDropout))
	}
	if tr != nil {
		_, s := tr.EncodeScaled(t, x, b.Lengths, m.TypeIDs(b.IDs, b.L), factor, keep)
		return s, mo
	}
	_, s := m.encodeBatch(t, x, b)
	return s, mo
}

// EmbedInput is the encoder's input of b as embedding-space methods
// perturb it ([B, L, D]): the embedded words, through the word and group
// masks, after embedding dropout in training mode. EncodeInput and Head of
// it give Forward's logits (up to the random draws). A transformer's word
// mask is not in it: it scales the input states (StateMasked), which
// EncodeInput applies; for every other model Encode equals EncodeInput.
func (m *Classifier) EmbedInput(t *ag.Tape, b *Batch) *ag.Var {
	x := m.Embed(t, b)
	ids := m.MapIDs(b.IDs)
	if m.Mask != nil && m.StateMasked() == nil {
		mo := m.Mask.Apply(t, m.Emb, x, ids)
		x = mo.X
	}
	x = m.ApplyGroupMask(t, x, ids)
	if m.embedDropping(t) {
		x = t.Dropout(x, float32(m.Cfg.EmbedDropout))
	}
	return x
}

// embedDropping reports whether embedding dropout applies on t.
func (m *Classifier) embedDropping(t *ag.Tape) bool { return t.Train && m.Cfg.EmbedDropout > 0 }

// wordRows returns the embedding rows [len(uniq), D] of the distinct ids
// uniq (after MapIDs: words that share a code share one row, so a text and
// its same-code swap run the same products); embedGrad false stops their
// gradient.
func (m *Classifier) wordRows(t *ag.Tape, uniq []int32, embedGrad bool) *ag.Var {
	xu := t.Reshape(m.Emb.Forward(t, uniq, 1, len(uniq)), len(uniq), m.Emb.Dim())
	if !embedGrad {
		xu = t.StopGradient(xu)
	}
	return xu
}

// Tensors returns the parameters by name, for saving.
func (m *Classifier) Tensors() map[string]*tensor.Tensor {
	out := map[string]*tensor.Tensor{}
	for _, p := range m.Params() {
		out[p.Name] = p.Value
	}
	return out
}

// LoadTensors copies saved values into the model, checking names and
// shapes.
func (m *Classifier) LoadTensors(ts map[string]*tensor.Tensor) error {
	want := map[string]bool{}
	for _, p := range m.Params() {
		want[p.Name] = true
		x, ok := ts[p.Name]
		if !ok {
			return fmt.Errorf("weights lack tensor %q", p.Name)
		}
		if !tensor.SameShape(x.Shape, p.Value.Shape) {
			return fmt.Errorf("tensor %q has shape %v, the config needs %v", p.Name, x.Shape, p.Value.Shape)
		}
		copy(p.Value.Data, x.Data)
	}
	var extra []string
	for name := range ts {
		if !want[name] {
			extra = append(extra, name)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return fmt.Errorf("weights hold tensors the config does not use: %v", extra)
	}
	return nil
}

// ParamCount is how many float32 values New allocates for the weights of
// c (assumed valid), computed in float64 so that absurd sizes do not
// overflow: loaders compare it with the weights file before building.
func (c Config) ParamCount() float64 {
	d := float64(c.EmbedDim)
	n := float64(c.VocabSize) * d
	in := d
	if c.InputLayer > 0 {
		n += d*float64(c.InputLayer) + float64(c.InputLayer)
		in = float64(c.InputLayer)
	}
	out := in
	switch c.Arch {
	case "cnn":
		for _, w := range c.Widths {
			n += float64(w)*in*float64(c.Filters) + float64(c.Filters)
		}
		out = float64(len(c.Widths) * c.Filters)
	case "bilstm", "lstm":
		h := float64(c.Hidden)
		dirs := 1.0
		if c.Arch == "bilstm" {
			dirs = 2
		}
		n += dirs * (4*h*(in+h) + 4*h)
		out = dirs * h
	case "transformer":
		if tc := c.Transformer; tc != nil {
			i := float64(tc.Intermediate)
			n += float64(tc.MaxPositions+tc.TypeVocab)*d + 2*d
			n += float64(tc.Layers) * (4*d*d + 4*d + 2*d*i + i + d + 4*d)
			if tc.Pooler {
				n += d*d + d
			}
		}
	}
	if c.HeadHidden > 0 {
		n += out*float64(c.HeadHidden) + float64(c.HeadHidden)
		out = float64(c.HeadHidden)
	}
	n += out*float64(c.NumClasses) + float64(c.NumClasses)
	if c.Mask {
		h := float64(maskWidth(c.MaskHidden))
		n += d*h + h + 2*h + 2
	}
	if c.Groups != nil {
		n += float64(c.NumGroups)
	}
	if c.Reconstructor {
		n += reconstructorParamCount(c)
	}
	return n
}
