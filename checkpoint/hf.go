package checkpoint

// Reading and writing Hugging Face BERT checkpoint directories.
//
// LoadHF reads a directory as transformers' save_pretrained writes it for a
// BERT-architecture model (config.json and model.safetensors, or shards
// listed in model.safetensors.index.json), plus the tokenizer files and,
// for a sentence-transformers model, its pooling setup. Weights are only
// ever read from safetensors: pickled PyTorch files are refused, since
// unpickling can run arbitrary code. Every name and shape is checked
// against config.json from the headers alone before any tensor is
// allocated or any data read.
//
// Tensors are returned under canonical names: the Hugging Face names
// without the "bert." prefix (embeddings.*, encoder.layer.N.*, pooler.*),
// with cls.predictions.* (the masked-LM head) and classifier.* (the
// sequence-classification head) as they are, in Hugging Face layout
// (a Linear weight is [out, in]). Old LayerNorm.gamma/beta names become
// LayerNorm.weight/bias.
//
// SaveHF writes the reverse: a directory transformers loads as
// BertForSequenceClassification (or BertModel, without a classifier).

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Files of a Hugging Face model directory besides ConfigFile and
// WeightsFile (which have the same names there).
const (
	HFIndexFile           = "model.safetensors.index.json"
	HFVocabFile           = "vocab.txt"
	HFTokenizerConfigFile = "tokenizer_config.json"
	HFSpecialTokensFile   = "special_tokens_map.json"
	STModulesFile         = "modules.json"
	STConfigFile          = "sentence_bert_config.json"
)

// Bounds on what LoadHF and SaveHF accept, checked before anything is
// allocated: BERT-large has 3.4e8 parameters and 24 layers.
const (
	maxBertParams = 1_000_000_000
	maxBertDim    = 1 << 30
	maxBertLayers = 1000
	maxNumLabels  = 1 << 20
	maxJSONFile   = 16 << 20 // config.json and the other small JSON files
	maxVocabFile  = 64 << 20
)

// hfExportMark is a config.json key SaveHF writes so it can recognise its
// own exports (which it may replace) among other directories (which it
// refuses to replace unless asked). transformers keeps unknown config keys
// as attributes and otherwise ignores them.
const hfExportMark = "exported_by"

// BertConfig is a Hugging Face BERT config.json (the fields that matter
// here; others are ignored).
type BertConfig struct {
	ModelType                 string            `json:"model_type"`
	Architectures             []string          `json:"architectures,omitempty"`
	VocabSize                 int               `json:"vocab_size"`
	HiddenSize                int               `json:"hidden_size"`
	NumHiddenLayers           int               `json:"num_hidden_layers"`
	NumAttentionHeads         int               `json:"num_attention_heads"`
	IntermediateSize          int               `json:"intermediate_size"`
	HiddenAct                 string            `json:"hidden_act"`
	HiddenDropoutProb         float64           `json:"hidden_dropout_prob"`
	AttentionProbsDropoutProb float64           `json:"attention_probs_dropout_prob"`
	MaxPositionEmbeddings     int               `json:"max_position_embeddings"`
	TypeVocabSize             int               `json:"type_vocab_size"`
	InitializerRange          float64           `json:"initializer_range"`
	LayerNormEps              float64           `json:"layer_norm_eps"`
	PadTokenID                int               `json:"pad_token_id"`
	PositionEmbeddingType     string            `json:"position_embedding_type,omitempty"`
	ID2Label                  map[string]string `json:"id2label,omitempty"`
	Label2ID                  map[string]int    `json:"label2id,omitempty"`
}

// DefaultBertConfig returns transformers' BertConfig defaults for the
// fields that have one there and that are not the model's core sizes:
// those (vocab_size, hidden_size, num_hidden_layers, num_attention_heads,
// intermediate_size) are left 0 for the caller to set. ReadBertConfig
// starts from these values, so a config.json that omits, say,
// layer_norm_eps means what it means to transformers.
func DefaultBertConfig() BertConfig {
	return BertConfig{
		ModelType:                 "bert",
		HiddenAct:                 "gelu",
		HiddenDropoutProb:         0.1,
		AttentionProbsDropoutProb: 0.1,
		MaxPositionEmbeddings:     512,
		TypeVocabSize:             2,
		InitializerRange:          0.02,
		LayerNormEps:              1e-12,
		PositionEmbeddingType:     "absolute",
	}
}

// bertActivations are the hidden_act values the encoder implements.
var bertActivations = []string{"gelu", "gelu_new", "gelu_pytorch_tanh", "relu"}

// ReadBertConfig reads and validates a BERT config.json. Fields absent
// from the file take DefaultBertConfig's values (model_type excepted: it
// must be there). Errors name path.
func ReadBertConfig(path string) (BertConfig, error) {
	cfg := DefaultBertConfig()
	cfg.ModelType = ""
	if err := readJSONFile(path, &cfg); err != nil {
		return BertConfig{}, err
	}
	if err := cfg.Validate(); err != nil {
		return BertConfig{}, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// Validate checks that c describes a BERT this package can read: model_type
// "bert", every size positive and bounded (at most 1e9 parameters in all),
// hidden_size divisible by num_attention_heads, a supported hidden_act,
// absolute position embeddings, and id2label keyed 0..n-1. Errors name the
// field and its value.
func (c BertConfig) Validate() error {
	switch c.ModelType {
	case "bert":
	case "":
		return errors.New(`model_type is missing; want "bert"`)
	default:
		return fmt.Errorf(`model_type %q is not supported yet: only "bert" checkpoints can be read`, c.ModelType)
	}
	sizes := []struct {
		field string
		v     int
	}{
		{"vocab_size", c.VocabSize}, {"hidden_size", c.HiddenSize}, {"num_hidden_layers", c.NumHiddenLayers},
		{"num_attention_heads", c.NumAttentionHeads}, {"intermediate_size", c.IntermediateSize},
		{"max_position_embeddings", c.MaxPositionEmbeddings}, {"type_vocab_size", c.TypeVocabSize},
	}
	for _, s := range sizes {
		if s.v <= 0 {
			return fmt.Errorf("%s is %d; it must be positive", s.field, s.v)
		}
		if s.v > maxBertDim {
			return fmt.Errorf("%s %d is too large (at most %d)", s.field, s.v, maxBertDim)
		}
	}
	if c.NumHiddenLayers > maxBertLayers {
		return fmt.Errorf("num_hidden_layers %d is too large (at most %d)", c.NumHiddenLayers, maxBertLayers)
	}
	if n := bertParams(c); n > maxBertParams {
		return fmt.Errorf("the sizes imply %.4g parameters, more than the %d this reader accepts", n, maxBertParams)
	}
	if c.HiddenSize%c.NumAttentionHeads != 0 {
		return fmt.Errorf("hidden_size %d is not divisible by num_attention_heads %d", c.HiddenSize, c.NumAttentionHeads)
	}
	if !slices.Contains(bertActivations, c.HiddenAct) {
		return fmt.Errorf("hidden_act %q is not supported; supported: %s", c.HiddenAct, strings.Join(bertActivations, ", "))
	}
	if c.PositionEmbeddingType != "" && c.PositionEmbeddingType != "absolute" {
		return fmt.Errorf(`position_embedding_type %q is not supported; only "absolute" is`, c.PositionEmbeddingType)
	}
	if !(c.LayerNormEps > 0) || math.IsInf(c.LayerNormEps, 0) {
		return fmt.Errorf("layer_norm_eps %v must be positive and finite", c.LayerNormEps)
	}
	for _, p := range []struct {
		field string
		v     float64
	}{{"hidden_dropout_prob", c.HiddenDropoutProb}, {"attention_probs_dropout_prob", c.AttentionProbsDropoutProb}} {
		if !(p.v >= 0 && p.v <= 1) {
			return fmt.Errorf("%s %v is not a probability", p.field, p.v)
		}
	}
	if c.PadTokenID < 0 || c.PadTokenID >= c.VocabSize {
		return fmt.Errorf("pad_token_id %d is outside the vocabulary [0, %d)", c.PadTokenID, c.VocabSize)
	}
	if _, err := c.labels(); err != nil {
		return err
	}
	return nil
}

// bertParams counts the parameters of the encoder and pooler c describes,
// in float64 so that no size can overflow it.
func bertParams(c BertConfig) float64 {
	V, H, P, T := float64(c.VocabSize), float64(c.HiddenSize), float64(c.MaxPositionEmbeddings), float64(c.TypeVocabSize)
	I, L := float64(c.IntermediateSize), float64(c.NumHiddenLayers)
	layer := 4*(H*H+H) + 2*H + (I*H + I) + (H*I + H) + 2*H
	return (V+P+T)*H + 2*H + L*layer + H*H + H
}

// labels returns id2label as a slice indexed by id (nil when absent). Its
// keys must be the integers 0..n-1.
func (c BertConfig) labels() ([]string, error) {
	if len(c.ID2Label) == 0 {
		return nil, nil
	}
	if len(c.ID2Label) > maxNumLabels {
		return nil, fmt.Errorf("id2label has %d labels, more than %d", len(c.ID2Label), maxNumLabels)
	}
	out := make([]string, len(c.ID2Label))
	for k, v := range c.ID2Label {
		i, err := strconv.Atoi(k)
		if err != nil || i < 0 || i >= len(out) || strconv.Itoa(i) != k {
			return nil, fmt.Errorf("id2label key %q: want the ids 0..%d", k, len(out)-1)
		}
		out[i] = v
	}
	return out, nil
}

// Canonical names with a special role.
const (
	bertPrefix        = "bert."
	poolerWeight      = "pooler.dense.weight"
	poolerBias        = "pooler.dense.bias"
	classifierWeight  = "classifier.weight"
	classifierBias    = "classifier.bias"
	mlmPrefix         = "cls.predictions."
	mlmBias           = "cls.predictions.bias"
	mlmDecoderWeight  = "cls.predictions.decoder.weight"
	mlmDecoderBias    = "cls.predictions.decoder.bias"
	mlmTransformW     = "cls.predictions.transform.dense.weight"
	mlmTransformB     = "cls.predictions.transform.dense.bias"
	mlmTransformLNW   = "cls.predictions.transform.LayerNorm.weight"
	mlmTransformLNB   = "cls.predictions.transform.LayerNorm.bias"
	convertibleDtypes = "F32, F16, BF16, F64"
)

// bertBuffers are non-parameter tensors older transformers versions saved;
// LoadHF skips them without a warning.
var bertBuffers = map[string]bool{"embeddings.position_ids": true, "embeddings.token_type_ids": true}

// isBaseName reports whether a canonical name belongs to the base model
// (the part transformers stores under "bert." in a model with a head).
func isBaseName(n string) bool {
	return strings.HasPrefix(n, "embeddings.") || strings.HasPrefix(n, "encoder.") || strings.HasPrefix(n, "pooler.")
}

// BertShapes returns the canonical name and shape of every tensor a BERT
// encoder with configuration cfg must have: embeddings and layers, in
// Hugging Face layout. cfg should be valid (see Validate).
func BertShapes(cfg BertConfig) map[string][]int {
	V, H, P, T, I := cfg.VocabSize, cfg.HiddenSize, cfg.MaxPositionEmbeddings, cfg.TypeVocabSize, cfg.IntermediateSize
	m := map[string][]int{
		"embeddings.word_embeddings.weight":       {V, H},
		"embeddings.position_embeddings.weight":   {P, H},
		"embeddings.token_type_embeddings.weight": {T, H},
		"embeddings.LayerNorm.weight":             {H},
		"embeddings.LayerNorm.bias":               {H},
	}
	for i := range cfg.NumHiddenLayers {
		p := "encoder.layer." + strconv.Itoa(i) + "."
		for _, n := range []string{"attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"} {
			m[p+n+".weight"] = []int{H, H}
			m[p+n+".bias"] = []int{H}
		}
		m[p+"intermediate.dense.weight"] = []int{I, H}
		m[p+"intermediate.dense.bias"] = []int{I}
		m[p+"output.dense.weight"] = []int{H, I}
		m[p+"output.dense.bias"] = []int{H}
		for _, n := range []string{"attention.output.LayerNorm", "output.LayerNorm"} {
			m[p+n+".weight"] = []int{H}
			m[p+n+".bias"] = []int{H}
		}
	}
	return m
}

// BertPoolerShapes returns the optional pooler's tensors (tanh(W·h[CLS]+b));
// BertForSequenceClassification needs them.
func BertPoolerShapes(cfg BertConfig) map[string][]int {
	H := cfg.HiddenSize
	return map[string][]int{poolerWeight: {H, H}, poolerBias: {H}}
}

// BertMLMHeadShapes returns the tensors of the optional masked-LM head
// (BertForMaskedLM, BertForPreTraining). In checkpoints the decoder weight
// is usually absent, being tied to embeddings.word_embeddings.weight, and
// only one of cls.predictions.bias and cls.predictions.decoder.bias (the
// same tensor, tied) is usually stored.
func BertMLMHeadShapes(cfg BertConfig) map[string][]int {
	V, H := cfg.VocabSize, cfg.HiddenSize
	return map[string][]int{
		mlmTransformW: {H, H}, mlmTransformB: {H},
		mlmTransformLNW: {H}, mlmTransformLNB: {H},
		mlmBias: {V}, mlmDecoderWeight: {V, H}, mlmDecoderBias: {V},
	}
}

// BertClassifierShapes returns the tensors of the optional sequence
// classification head (BertForSequenceClassification) for numLabels labels.
func BertClassifierShapes(cfg BertConfig, numLabels int) map[string][]int {
	return map[string][]int{classifierWeight: {numLabels, cfg.HiddenSize}, classifierBias: {numLabels}}
}
