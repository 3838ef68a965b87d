package pipeline

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/train"
)

// FineTuneConfig fine-tunes a pretrained transformer (`train --init`) with
// standard, adv or flat training or an embedding-space defense. The
// options are used as given: train.FineTuneDefaults are the usual ones
// (the CLI takes them for the training flags not given).
type FineTuneConfig struct {
	// Init is a Hugging Face BERT-architecture directory (config.json,
	// model.safetensors, vocab.txt) or a textarmor transformer model, whose
	// encoder starts the task (model.ImportEncoder).
	Init string
	// FreezeEncoder trains the classification head only.
	FreezeEncoder bool
	// Pool is the sentence representation: pooler, cls or mean ("" =
	// pooler). Data.MaxLen counts word pieces (0 = the preset's, within
	// the checkpoint's positions).
	Pool string
	// Dropout replaces the checkpoint's when ≥ 0.
	Dropout float64
	// VocabSupplement adds the N most frequent alphabetic training words
	// as whole tokens (FTML spec §7.3) and makes them the synonym
	// defenses' dictionary; -1 is DefaultVocabSupplement for ftml, cml,
	// sem and ascc, 0 for the other defenses.
	VocabSupplement int
}

// DefaultVocabSupplement is FTML's vocabulary supplement for BERT: the
// top 50,000 dataset words (FTML spec §6).
const DefaultVocabSupplement = 50000

// vocabSupplement is the number of words to supplement for defense.
func (ft *FineTuneConfig) vocabSupplement(synonyms bool) int {
	switch {
	case ft.VocabSupplement >= 0:
		return ft.VocabSupplement
	case synonyms:
		return DefaultVocabSupplement
	}
	return 0
}

// fineTune is Train with FineTune.Init.
func (c *TrainConfig) fineTune(ctx context.Context, opt train.Options, log io.Writer) (*TrainReport, error) {
	ft := &c.FineTune
	ds, preset, err := c.load()
	if err != nil {
		return nil, err
	}
	if c.Defense.Name != "standard" {
		if err := refusePairData(ds, "fine-tuning on pairs takes --defense standard only (the defenses perturb or mask one text)"); err != nil {
			return nil, err
		}
	}
	start := time.Now()
	m, err := model.ImportEncoder(ft.Init, model.ImportOptions{Classes: ds.Classes, Pool: ft.Pool, MaxLen: c.Data.MaxLen, Tokenizer: preset.Tokenizer, Seed: opt.Seed,
		Reconstructor: c.Defense.Name == "rar", Mask: c.Defense.Name == "flat"}) // flat: FLAT's word mask, on the input states
	if err != nil {
		return nil, err
	}
	if w, ok := m.Training["import_warnings"].([]string); ok {
		for _, line := range w {
			fmt.Fprintf(log, "warning: %s: %s\n", ft.Init, line)
		}
	}
	if ds.Pairs() {
		// "[CLS] a [SEP] b [SEP]" with token types 0 and 1, saved with the model.
		if err := m.SetPairs(); err != nil {
			return nil, err
		}
	}
	if c.Data.MaxLen == 0 { // the preset's length, within the model's positions
		if err := m.SetMaxLen(min(preset.PieceLen(), m.Net.Cfg.Transformer.MaxPositions)); err != nil {
			return nil, err
		}
	}
	maxLen := m.MaxLen
	supp, err := c.supplement(m, ds, log)
	if err != nil {
		return nil, err
	}
	if ft.Dropout >= 0 {
		m.Net.Cfg.Dropout = ft.Dropout
		if err := m.Net.Cfg.Validate(); err != nil {
			return nil, configErrorf("--dropout: %v", err)
		}
	}
	if ft.FreezeEncoder {
		m.FreezeEncoder()
	}
	trainSet, dev := c.splits(ds, opt.Seed)
	fmt.Fprintf(log, "data: %s, %d train / %d dev / %d test, %d classes; %s: %d word pieces, max length %d (%d training texts truncated); pooling %s; BLAS %s\n",
		ds.Name, len(ds.Train), len(ds.Dev), len(ds.Test), len(ds.Classes), ft.Init, m.Pieces.Size(), maxLen,
		TruncatedCount(m, ds.Train), m.Net.Cfg.Transformer.Pool, tensor.BackendDetail())
	if m.Pairs() {
		fmt.Fprintf(log, "sentence pairs: read as [CLS] first [SEP] second [SEP], token types 0 and 1, cut longest-first to %d pieces\n", maxLen)
		for _, n := range ds.Notes { // the splits made up for missing ones (SNLI)
			fmt.Fprintf(log, "note: %s\n", n)
		}
	}
	opt.Info = c.info(map[string]any{"dataset": ds.Name, "arch": "transformer", "init": ft.Init, "blas": tensor.BackendDetail(),
		"pool": m.Net.Cfg.Transformer.Pool, "max_len": maxLen, "defense": c.Defense.Name})
	if m.Pairs() {
		opt.Info["sentence_pairs"] = true
	}
	if ft.FreezeEncoder {
		opt.Info["frozen_encoder"] = true
	}
	if supp != nil {
		opt.Info["vocab_supplement"] = supp
	}
	if c.TrainSubset {
		opt.Info["train_n"] = len(trainSet)
	}
	c.scaleEmbedLR(m, &opt, log)
	frozen := ""
	if ft.FreezeEncoder {
		frozen = "; encoder frozen"
	}
	fmt.Fprintf(log, "fine-tuning: %d epochs, batch %d, %s lr %g, weight decay %g, %s schedule with warm-up %g, clip %g%s\n",
		opt.Epochs, opt.BatchSize, opt.Optimizer, opt.LR, opt.WeightDecay, scheduleName(opt.Schedule), opt.Warmup, opt.Clip, frozen)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var res *train.Result
	switch c.Defense.Name {
	case "adv": // the rate stays fine-tuning's (FLAT's 0.01 is for CNNs and LSTMs)
		res, err = c.runRounds(m, train.Standard{}, trainSet, dev, opt, log)
	case "flat": // as adv, with the word mask and the FLAT objective (L_imp over words)
		obj, oerr := c.Defense.Objective(m, ds.Name, c.Data.Dir, log)
		if oerr != nil {
			return nil, oerr
		}
		DescribeObjective(obj, opt.Info, log)
		keys := "dropped pieces removed from the attention keys in training"
		if m.Net.Cfg.MaskAttendAll {
			keys = "attention keys kept"
		}
		fmt.Fprintf(log, "flat: word mask of width %d on the input states (φ from each piece's embedding row), %s; L_imp over words (max φ of their pieces)\n",
			m.Net.Mask.Hidden.W.Value.Shape[1], keys)
		res, err = c.runRounds(m, obj, trainSet, dev, opt, log)
	default:
		// standard, or an embedding-space defense over the word pieces.
		obj, oerr := c.Defense.Objective(m, ds.Name, c.Data.Dir, log)
		if oerr != nil {
			return nil, oerr
		}
		DescribeObjective(obj, opt.Info, log)
		res, err = train.Run(m, obj, train.Encode(m, trainSet), train.Encode(m, dev), opt)
	}
	if err != nil {
		return nil, err
	}
	return c.finish(ds, opt, res, time.Since(start), log)
}

func scheduleName(s string) string {
	if s == "" {
		return "constant"
	}
	return s
}

// TruncatedCount counts the texts (or sentence pairs) longer than the
// model's maximum length.
func TruncatedCount(m *model.Model, texts []dataset.Example) int {
	n := 0
	for _, e := range texts {
		if _, dropped := m.EncodePairCounted(e.Text, e.Text2); dropped > 0 {
			n++
		}
	}
	return n
}

// supplement applies the vocabulary supplement, if any, to m: the
// dictionary words become whole tokens and the synonym defenses' anchors.
// It returns the training record's entry (nil without a supplement).
func (c *TrainConfig) supplement(m *model.Model, ds *dataset.Dataset, log io.Writer) (map[string]any, error) {
	n := c.FineTune.vocabSupplement(c.Defense.lookup().Synonyms)
	c.Defense.dictionary = nil
	if n == 0 {
		return nil, nil
	}
	texts := make([]string, 0, len(ds.Train))
	for _, e := range ds.Train {
		texts = append(texts, e.Text)
		if e.Text2 != "" {
			texts = append(texts, e.Text2)
		}
	}
	before := m.Pieces.Size()
	words := model.DictionaryWords(m.Pieces, texts, n)
	added, err := m.SupplementVocab(words)
	if err != nil {
		return nil, err
	}
	c.Defense.dictionary = words
	fmt.Fprintf(log, "vocabulary supplement: of the %d most frequent training words, %d are alphabetic; %d added as whole tokens (%d → %d tokens)\n",
		n, len(words), added, before, m.Pieces.Size())
	return map[string]any{"top_words": n, "dictionary": len(words), "added": added, "vocab_size": m.Pieces.Size()}, nil
}
