package pipeline

import (
	"context"
	"fmt"
	"io"
	"math/rand"
	"path/filepath"
	"time"

	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/lstmlm"
	"github.com/textarmor/textarmor/text"
)

// TrainLSTMLMConfig configures TrainLSTMLM (`textarmor lm train --type
// lstm`): a word-level LSTM language model on a dataset's training texts.
type TrainLSTMLMConfig struct {
	// Data selects the texts: the training split trains, the dev split
	// (when there is one) validates; its preset's tokenizer (or
	// Data.Tokenizer) splits them. Each text is cut to its first MaxLen
	// words (0 = whole); the vocabulary keeps the words seen MinCount
	// times, at most MaxVocab of them with <eos> (0 = no cap).
	Data                       Data
	MaxLen, MinCount, MaxVocab int
	Model                      lstmlm.Config
	Options                    lstmlm.TrainOptions
	Seed                       int64
	// Init, when set, is a trained language model to continue from (a
	// warm start: its weights, a fresh optimizer). Its vocabulary must be
	// the one these texts and settings build, and its shape Model's.
	Init string
	Log  io.Writer // progress (nil = discard)
}

// NewTrainLSTMLMConfig returns the CLI's defaults: the spec's §10 scale
// (64-d embeddings, 256 units, words seen twice, at most 10,000, texts cut
// to 200 words) and its training (spgd.md §4.2).
func NewTrainLSTMLMConfig() TrainLSTMLMConfig {
	return TrainLSTMLMConfig{Data: NewData(), MaxLen: 200, MinCount: 2, MaxVocab: 10000, Model: lstmlm.DefaultConfig(), Options: lstmlm.DefaultTrainOptions(), Seed: 1}
}

// Check validates the settings.
func (c TrainLSTMLMConfig) Check() error {
	m := c.Model
	if err := CheckRules(
		Rule{m.EmbedDim >= 1 && m.EmbedDim <= maxLayerWidth, "embed-dim", m.EmbedDim, fmt.Sprintf("in [1, %d]", maxLayerWidth)},
		Rule{m.Hidden >= 1 && m.Hidden <= maxLayerWidth, "hidden", m.Hidden, fmt.Sprintf("in [1, %d]", maxLayerWidth)},
		Rule{isFinite(m.InitScale) && m.InitScale > 0, "init-scale", m.InitScale, "a positive number"},
		Rule{c.MaxLen >= 0, "max-len", c.MaxLen, "≥ 0 (0 = whole texts)"},
		Rule{c.MinCount >= 1, "min-count", c.MinCount, "at least 1"},
		Rule{c.MaxVocab >= 0, "max-vocab", c.MaxVocab, "≥ 0 (0 = no cap)"},
	); err != nil {
		return err
	}
	if err := c.Data.Check(); err != nil {
		return err
	}
	o := c.Options
	o.Out = "x" // checked below, with the flag's name
	if err := o.Validate(); err != nil {
		return &ConfigError{err}
	}
	if c.Options.Out == "" {
		return configErrorf("--out is required")
	}
	return nil
}

// TrainLSTMLMReport is what TrainLSTMLM produced.
type TrainLSTMLMReport struct {
	Model   *lstmlm.Model
	Result  *lstmlm.Result
	Dataset *dataset.Dataset
	Words   int // the training stream's length
}

// TrainLSTMLM builds the vocabulary from the training texts, trains the
// model (resumably with Options.Resume) and writes it to Options.Out.
func TrainLSTMLM(ctx context.Context, c TrainLSTMLMConfig) (*TrainLSTMLMReport, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	ds, preset, err := c.Data.Load()
	if err != nil {
		return nil, err
	}
	log := orDiscard(c.Log)
	cfg := c.Model
	cfg.Tokenizer = preset.Tokenizer
	minCount, maxVocab := c.MinCount, c.MaxVocab
	// A model over a provisional vocabulary tokenizes the texts; the real
	// one is built from their words.
	probe, err := text.NewVocab([]string{text.PadWord, text.UnkWord, lstmlm.EOS})
	if err != nil {
		return nil, err
	}
	tm, err := lstmlm.New(cfg, probe, rand.New(rand.NewSource(c.Seed)))
	if err != nil {
		return nil, &ConfigError{err}
	}
	words := func(ex []dataset.Example) [][]string {
		out := make([][]string, len(ex))
		for i, e := range ex {
			out[i] = tm.Words(e.Text, c.MaxLen)
		}
		return out
	}
	trainWords := words(ds.Train)
	vocab := text.BuildVocab(trainWords, minCount, max(maxVocab-1, 0))
	if vocab, err = text.NewVocab(append(vocab.Words(), lstmlm.EOS)); err != nil {
		return nil, err
	}
	m, err := lstmlm.New(cfg, vocab, rand.New(rand.NewSource(c.Seed)))
	if err != nil {
		return nil, &ConfigError{err}
	}
	var initRecord any
	if c.Init != "" {
		if m, err = warmStart(c.Init, cfg, vocab); err != nil {
			return nil, err
		}
		initRecord = map[string]any{"from": c.Init, "training": m.Record}
	}
	opt := c.Options
	opt.Progress = log
	for _, w := range words(ds.Dev) {
		opt.Valid = append(opt.Valid, m.IDs(w))
	}
	docs := make([][]int32, len(trainWords))
	for i, w := range trainWords {
		docs[i] = m.IDs(w)
	}
	opt.Info = map[string]any{"dataset": ds.Name, "tokenizer": preset.Tokenizer, "max_len": c.MaxLen, "min_count": minCount,
		"max_vocab": maxVocab, "seed": c.Seed}
	if initRecord != nil {
		opt.Info["init"] = initRecord
	}
	stream := m.Stream(docs)
	fmt.Fprintf(log, "lm: %s, %d training texts (%d words with <eos>), %d validation texts; vocabulary %d; %d-d embeddings, %d LSTM units\n",
		ds.Name, len(docs), len(stream), len(opt.Valid), vocab.Len(), cfg.EmbedDim, cfg.Hidden)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	start := time.Now()
	res, err := lstmlm.Train(m, stream, opt)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "lm: trained in %s; model written to %s\n", time.Since(start).Round(time.Second), opt.Out)
	return &TrainLSTMLMReport{Model: m, Result: res, Dataset: ds, Words: len(stream)}, nil
}

// warmStart loads the language model at dir for TrainLSTMLM's Init and
// checks that it is the model these settings would build.
func warmStart(dir string, cfg lstmlm.Config, vocab *text.Vocab) (*lstmlm.Model, error) {
	m, err := lstmlm.Load(dir)
	if err != nil {
		return nil, &ConfigError{fmt.Errorf("--init %s: %w", dir, err)}
	}
	switch {
	case m.Cfg.Tokenizer != cfg.Tokenizer:
		return nil, configErrorf("--init %s: the model splits words with the %q tokenizer, these texts with %q", dir, m.Cfg.Tokenizer, cfg.Tokenizer)
	case m.Cfg.EmbedDim != cfg.EmbedDim || m.Cfg.Hidden != cfg.Hidden:
		return nil, configErrorf("--init %s: the model has %d-d embeddings and %d units, --embed-dim and --hidden say %d and %d",
			dir, m.Cfg.EmbedDim, m.Cfg.Hidden, cfg.EmbedDim, cfg.Hidden)
	}
	have, want := m.Vocab.Words(), vocab.Words()
	if len(have) != len(want) {
		return nil, configErrorf("--init %s: the model's vocabulary has %d words, these texts with --max-len, --min-count and --max-vocab give %d",
			dir, len(have), len(want))
	}
	for i := range have {
		if have[i] != want[i] {
			return nil, configErrorf("--init %s: vocabulary entry %d is %q in the model, %q from these texts", dir, i, have[i], want[i])
		}
	}
	return m, nil
}

// LMPerplexityConfig configures LMPerplexity (`textarmor lm perplexity`).
type LMPerplexityConfig struct {
	Model string // the LSTM language model's directory
	Data  Data
	Split string
	// N texts of a seeded sample of the split (0 = all), each cut to the
	// model's training length (MaxLen, 0 = whole).
	N      int
	Seed   int64
	MaxLen int
}

// NewLMPerplexityConfig returns the CLI's defaults: 1,000 test texts of a
// seed-0 sample (spgd.md ambiguity 10), cut to 200 words.
func NewLMPerplexityConfig() LMPerplexityConfig {
	return LMPerplexityConfig{Data: NewData(), Split: "test", N: 1000, MaxLen: 200}
}

// LMPerplexityReport is the perplexity and what it was measured on.
type LMPerplexityReport struct {
	Perplexity   float64
	Texts, Words int
	Dataset      string
}

// LMPerplexity measures a language model's per-word perplexity on a
// sample of a split, NLL pooled over every predicted word.
func LMPerplexity(ctx context.Context, c LMPerplexityConfig) (*LMPerplexityReport, error) {
	if err := CheckRules(Rule{c.N >= 0, "n", c.N, "≥ 0 (0 = the whole split)"}, Rule{c.MaxLen >= 0, "max-len", c.MaxLen, "≥ 0 (0 = whole texts)"}); err != nil {
		return nil, err
	}
	if c.Model == "" {
		return nil, configErrorf("--model is required")
	}
	m, err := lstmlm.Load(c.Model)
	if err != nil {
		return nil, err
	}
	var ex []dataset.Example
	var name, tokenizer string
	if c.Data.Preset == "" && c.Data.Train == "" && c.Data.Test != "" {
		// A bare file of texts: its labels, if any, are not read.
		if ex, _, _, err = dataset.LoadFile(c.Data.Test, c.Data.fileOptions(nil)); err != nil {
			return nil, err
		}
		name, tokenizer = filepath.Base(c.Data.Test), m.Cfg.Tokenizer
	} else {
		ds, preset, err := c.Data.Load()
		if err != nil {
			return nil, err
		}
		if ex, err = Split(ds, c.Split); err != nil {
			return nil, err
		}
		name, tokenizer = ds.Name, preset.Tokenizer
	}
	if c.Data.Tokenizer != "" {
		tokenizer = c.Data.Tokenizer
	}
	if tokenizer != m.Cfg.Tokenizer {
		return nil, configErrorf("the language model reads %s tokens, the data %s tokens", m.Cfg.Tokenizer, tokenizer)
	}
	ex = dataset.SeededSubset(ex, c.N, c.Seed)
	r := &LMPerplexityReport{Dataset: name, Texts: len(ex)}
	var ids [][]int32
	for _, e := range ex {
		s := m.IDs(m.Words(e.Text, c.MaxLen))
		ids = append(ids, s)
		r.Words += max(len(s)-1, 0)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if r.Perplexity, err = m.Perplexity(ids); err != nil {
		return nil, err
	}
	return r, nil
}
