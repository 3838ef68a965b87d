package pipeline

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/lstmlm"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/retrofit"
	"github.com/textarmor/textarmor/text"
)

// Upper bounds of the settings that size an allocation.
const (
	// maxLayerWidth bounds embedding sizes and layer widths: the largest
	// dimension a vector file may have (published vectors have 50–4,096).
	maxLayerWidth = text.MaxVectorDim
	// maxWindow bounds a CNN window width (Kim's are 3, 4 and 5).
	maxWindow = 1000
)

// Network is a classifier's architecture as the train flags give it; its
// Config is the nn.Config a model is built from. Every field is checked
// whatever the architecture, as the CLI checks every flag it was given.
type Network struct {
	Arch     string // --model: cnn, bilstm, lstm or transformer
	EmbedDim int    // taken from Embeddings or EmbeddingsFrom when given
	// cnn: filters per window width, and the widths.
	Filters int
	Widths  []int
	// lstm/bilstm: hidden units per direction, pooling over time (max or
	// mean), tanh before and after pooling (FLAT's LSTM). The
	// from-scratch transformer takes Pool too when it is not max.
	Hidden int
	Pool   string
	Tanh   bool
	// InputLayer and HeadHidden are the widths of Jia et al.'s extra ReLU
	// layers (0 = none).
	InputLayer, HeadHidden int
	// Dropout before the output layer; random embedding rows are drawn
	// from U(-EmbedInit, EmbedInit).
	Dropout, EmbedInit float64
	FreezeEmbeddings   bool
	// EmbedDropout drops embedding entries in training (SPGD's classifier:
	// 0.5; 0 = none).
	EmbedDropout float64
}

// NewNetwork returns the CLI's default architecture: Kim's CNN.
func NewNetwork() Network {
	d := nn.DefaultConfig("cnn")
	return Network{Arch: "cnn", EmbedDim: d.EmbedDim, Filters: d.Filters, Widths: slices.Clone(d.Widths), Hidden: 150, Pool: "max",
		Dropout: d.Dropout, EmbedInit: d.EmbedInit}
}

// Check validates the sizes and rates (sizes that allocate are bounded)
// and the architecture's name.
func (n Network) Check() error {
	if err := CheckRules(
		widthRule("embed-dim", n.EmbedDim, 1, ""),
		widthRule("filters", n.Filters, 1, ""),
		widthRule("hidden", n.Hidden, 1, ""),
		widthRule("input-layer", n.InputLayer, 0, "0 = none"),
		widthRule("head-hidden", n.HeadHidden, 0, "0 = none"),
		Rule{isFinite(n.Dropout) && n.Dropout >= 0 && n.Dropout < 1, "dropout", n.Dropout, "in [0, 1)"},
		Rule{isFinite(n.EmbedDropout) && n.EmbedDropout >= 0 && n.EmbedDropout < 1, "embed-dropout", n.EmbedDropout, "in [0, 1)"},
		Rule{isFinite(n.EmbedInit) && n.EmbedInit >= 0, "embed-init", n.EmbedInit, "a number ≥ 0"},
	); err != nil {
		return err
	}
	list := joinInts(n.Widths)
	if len(n.Widths) == 0 {
		return configErrorf("--widths %q: give at least one window width", list)
	}
	for _, w := range n.Widths {
		if w < 1 || w > maxWindow {
			return configErrorf("--widths %q: width %d must be in [1, %d]", list, w, maxWindow)
		}
	}
	if !slices.Contains(nn.Archs, n.Arch) {
		return configErrorf("--model %q: valid are %s", n.Arch, strings.Join(nn.Archs, ", "))
	}
	return nil
}

// Config checks n and returns the network configuration it describes.
func (n Network) Config() (nn.Config, error) {
	if err := n.Check(); err != nil {
		return nn.Config{}, err
	}
	cfg := nn.DefaultConfig(n.Arch)
	cfg.EmbedDim, cfg.Dropout, cfg.EmbedInit, cfg.FreezeEmb = n.EmbedDim, n.Dropout, n.EmbedInit, n.FreezeEmbeddings
	cfg.EmbedDropout = n.EmbedDropout
	cfg.InputLayer, cfg.HeadHidden = n.InputLayer, n.HeadHidden
	switch n.Arch {
	case "cnn":
		cfg.Filters, cfg.Widths = n.Filters, slices.Clone(n.Widths)
	case "bilstm", "lstm":
		cfg.Hidden, cfg.Pool, cfg.Tanh = n.Hidden, n.Pool, n.Tanh
	case "transformer": // from scratch on word ids: the default small BERT
		if n.Pool != "max" {
			cfg.Transformer.Pool = n.Pool
		}
	}
	return cfg, nil
}

// joinInts writes ints as a comma-separated list, as --widths takes them.
func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// embeddingsFrom loads the EmbeddingsFrom model (FTML spec §12.1, robust
// embeddings alone): the new model takes its vocabulary and embedding
// table, frozen unless EmbeddingsFromTrainable. It returns the source
// model (nil without EmbeddingsFrom) and sets cfg's embedding size and
// freezing and the tokenizer.
func (c *TrainConfig) embeddingsFrom(cfg *nn.Config, tokenizer *string, log io.Writer) (*model.Model, error) {
	if c.EmbeddingsFrom == "" {
		return nil, nil
	}
	src, err := model.Load(c.EmbeddingsFrom)
	if err != nil {
		return nil, fmt.Errorf("--embeddings-from: %w", err)
	}
	cfg.EmbedDim = src.Net.Cfg.EmbedDim
	cfg.FreezeEmb = !c.EmbeddingsFromTrainable
	if *tokenizer != src.Tokenizer {
		fmt.Fprintf(log, "embeddings-from: using the source model's tokenizer %s (not %s) so its vocabulary applies\n", src.Tokenizer, *tokenizer)
		*tokenizer = src.Tokenizer
	}
	state := "frozen (--freeze-embeddings implied; --freeze-embeddings=false to fine-tune)"
	if !cfg.FreezeEmb {
		state = "trainable (--freeze-embeddings=false)"
	}
	fmt.Fprintf(log, "embeddings-from: %s: vocabulary of %d words and %d-d embedding table (trained with %v), %s\n",
		c.EmbeddingsFrom, src.Vocab.Len(), cfg.EmbedDim, src.Training["objective"], state)
	if src.Net.Cfg.IDMap != nil {
		fmt.Fprintf(log, "embeddings-from: note: the source model has a SEM id map; it is not transferred (raw ids index the table)\n")
	}
	return src, nil
}

// copyEmbeddings copies the source table into m (same vocabulary, so same
// shape) and returns the training-record entry.
func copyEmbeddings(m *model.Model, src *model.Model, dir string) (map[string]any, error) {
	dst, from := m.Net.Emb.W.Value, src.Net.Emb.W.Value
	if len(dst.Data) != len(from.Data) {
		return nil, fmt.Errorf("--embeddings-from: table sizes differ (%v vs %v)", dst.Shape, from.Shape)
	}
	copy(dst.Data, from.Data)
	rec := map[string]any{"path": dir, "arch": src.Net.Cfg.Arch, "vocab": src.Vocab.Len(), "dim": src.Net.Cfg.EmbedDim,
		"frozen": m.Net.Emb.W.Frozen}
	for _, k := range []string{"objective", "dataset", "defense"} {
		if v, ok := src.Training[k]; ok {
			rec[k] = v
		}
	}
	return rec, nil
}

// retrofitEmbeddings pulls the initial embedding rows of synonyms together
// (package retrofit) before training, so that a table without pretrained
// vectors gets the synonym structure of counter-fitted vectors.
func retrofitEmbeddings(m *model.Model, sweeps int, synPath, dataDir string, log io.Writer) error {
	n, path, err := LoadNeighbors(synPath, dataDir)
	if err != nil {
		return err
	}
	g := lexicon.VocabGraph(n, m.Vocab)
	words, edges := 0, 0
	for _, nb := range g {
		if len(nb) > 0 {
			words++
			edges += len(nb)
		}
	}
	if err := retrofit.Apply(m.Net.Emb.W.Value.Data, m.Net.Cfg.EmbedDim, g, sweeps, 1); err != nil {
		return err
	}
	fmt.Fprintf(log, "retrofit: %d sweeps over %s: %d of %d vocabulary words have synonyms (%d directed edges)\n",
		sweeps, path, words, m.Vocab.Len()-2, edges)
	return nil
}

// initLM loads the InitLM language model (nil without one) and gives cfg
// its embedding size and units; the data must be read with the model's
// tokenizer.
func (c *TrainConfig) initLM(cfg *nn.Config, tokenizer string, log io.Writer) (*lstmlm.Model, error) {
	if c.InitLM == "" {
		return nil, nil
	}
	lm, err := lstmlm.Load(c.InitLM)
	if err != nil {
		return nil, err
	}
	if lm.Cfg.Tokenizer != tokenizer {
		return nil, configErrorf("--init-lm %s reads %s tokens, the data %s tokens (give --tokenizer %s)", c.InitLM, lm.Cfg.Tokenizer, tokenizer, lm.Cfg.Tokenizer)
	}
	cfg.EmbedDim, cfg.Hidden = lm.Cfg.EmbedDim, lm.Cfg.Hidden
	fmt.Fprintf(log, "init-lm: vocabulary (%d words), %d-d embeddings and %d-unit LSTM from %s\n", lm.Vocab.Len(), cfg.EmbedDim, cfg.Hidden, c.InitLM)
	return lm, nil
}

// copyLM copies the language model's embedding table and LSTM into m,
// built with its vocabulary and shapes.
func copyLM(m *model.Model, lm *lstmlm.Model) error {
	rnn, ok := m.Net.Enc.(*nn.RNN)
	if !ok || rnn.Bwd != nil {
		return configErrorf("--init-lm: the classifier's encoder is not a unidirectional LSTM")
	}
	for _, p := range []struct{ dst, src *ag.Param }{{m.Net.Emb.W, lm.Emb.W}, {rnn.Fwd.Wx, lm.LSTM.Wx}, {rnn.Fwd.Wh, lm.LSTM.Wh}, {rnn.Fwd.B, lm.LSTM.B}} {
		if !slices.Equal(p.dst.Value.Shape, p.src.Value.Shape) {
			return fmt.Errorf("--init-lm: %s is %v in the classifier, %v in the language model", p.dst.Name, p.dst.Value.Shape, p.src.Value.Shape)
		}
		copy(p.dst.Value.Data, p.src.Value.Data)
	}
	return nil
}
