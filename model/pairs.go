package model

import (
	"errors"
	"fmt"

	"github.com/textarmor/textarmor/text"
)

// Sentence pairs (MRPC, NLI). A transformer that reads pairs takes "[CLS] a
// [SEP] b [SEP]" with token types 0 for "[CLS] a [SEP]" and 1 for "b
// [SEP]", as BERT does. Its network derives the types from the ids
// (nn.Config.Pairs), so the ids EncodePair gives are all that training,
// prediction and the attacks pass around, and the setting is saved with
// the model like any other part of its configuration.

// Pairs reports whether the model reads sentence pairs.
func (m *Model) Pairs() bool { return m.Net != nil && m.Net.Cfg.Pairs }

// SetPairs makes a transformer read sentence pairs (fine-tuning on a pair
// task calls it before training). A model without token types, or one
// that does not read word pieces, is refused.
func (m *Model) SetPairs() error {
	tc := m.Net.Cfg.Transformer
	if m.Pieces == nil || tc == nil {
		return fmt.Errorf("sentence pairs need a transformer fine-tuned from a checkpoint (train --init DIR --model transformer), not %s", m.Net.Cfg.Arch)
	}
	cfg := m.Net.Cfg
	cfg.Pairs, cfg.SepID = true, m.Pieces.SEPID()
	if err := cfg.Validate(); err != nil {
		return err
	}
	m.Net.Cfg, m.Meta.Net = cfg, cfg
	return nil
}

// EncodePair encodes a sentence pair as a model that reads pairs takes it:
// "[CLS] a [SEP] b [SEP]" in word pieces, cut to MaxLen longest-first as
// Hugging Face does (text.WordPiece.EncodePair). b "" encodes a alone
// (Encode). It panics for a model that does not read pairs: the ids of a
// pair would be read as one text.
func (m *Model) EncodePair(a, b string) []int32 {
	ids, _ := m.EncodePairCounted(a, b)
	return ids
}

// EncodePairCounted is EncodePair that also says how many pieces
// truncation dropped.
func (m *Model) EncodePairCounted(a, b string) ([]int32, int) {
	if b == "" {
		return m.EncodeCounted(a)
	}
	if !m.Pairs() {
		panic("model: EncodePair on a model that does not read sentence pairs (SetPairs)")
	}
	e := m.Pieces.EncodePair(a, b, m.MaxLen)
	return e.IDs, e.Truncated
}

// PredictPairs classifies sentence pairs (a[i], b[i]) in batches; like
// EncodePair it needs a model that reads pairs.
func (m *Model) PredictPairs(a, b []string) ([]Prediction, error) {
	if len(a) != len(b) {
		return nil, fmt.Errorf("%d first texts, %d second texts", len(a), len(b))
	}
	if !m.Pairs() {
		return nil, errors.New("the model does not read sentence pairs (it was not fine-tuned on a pair task)")
	}
	seqs := make([][]int32, len(a))
	for i := range a {
		seqs[i] = m.EncodePair(a[i], b[i])
	}
	return m.predictSeqs(seqs), nil
}

// alignPair is Align for the second text b of the pair (a, b): the words
// of b (m.Tok), the ids of the pair, and for each id the word of b it
// belongs to (-1 for the first text, [CLS] and [SEP]).
func (m *Model) alignPair(a, b string) (words []text.Token, ids []int32, wordOf []int) {
	words = m.Tok.Tokenize(b)
	e := m.Pieces.EncodePair(a, b, m.MaxLen)
	wordOf = make([]int, len(e.IDs))
	w := 0
	for i, p := range e.Pieces {
		wordOf[i] = -1
		if p.Start < 0 || e.TypeIDs[i] != 1 {
			continue
		}
		for w < len(words) && words[w].End <= p.Start {
			w++
		}
		if w < len(words) && words[w].Start <= p.Start {
			wordOf[i] = w
		}
	}
	return words, e.IDs, wordOf
}

// WordInputGradPair is WordInputGrad for the second text b of the pair
// (a, b), as the model reads the pair: one value per word of b.
func (m *Model) WordInputGradPair(a, b string, label int) []float64 {
	if !m.Pairs() {
		panic("model: WordInputGradPair on a model that does not read sentence pairs")
	}
	words, ids, wordOf := m.alignPair(a, b)
	return m.wordGrad(len(words), ids, wordOf, label)
}
