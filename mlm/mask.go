// Package mlm trains and evaluates a masked-language-model head on a
// transformer encoder, and asks it for the likely word pieces at a
// position: the candidates of the contextual attacks (BAE, BERT-Attack).
//
// The head is nn.Reconstructor, BERT's prediction head (dense, the
// encoder's activation, LayerNorm, the decoder tied to the word
// embeddings plus a bias), exported as cls.predictions.* so that
// transformers loads the result as BertForMaskedLM.
package mlm

import (
	"fmt"
	"math/rand"
)

// Masking is BERT's corruption as transformers' masked-LM data collator
// draws it: each piece that is not special is chosen with probability
// Rate; a chosen piece becomes [MASK] with probability Mask, a piece drawn
// uniformly from the vocabulary with probability Random, and stays as it
// is otherwise. The loss is read at the chosen positions only.
type Masking struct {
	Rate, Mask, Random float64
}

// DefaultMasking is Devlin et al.'s 15 % with 80 / 10 / 10.
func DefaultMasking() Masking { return Masking{Rate: 0.15, Mask: 0.8, Random: 0.1} }

// Validate checks that the probabilities are probabilities.
func (mk Masking) Validate() error {
	switch {
	case !(mk.Rate > 0 && mk.Rate <= 1):
		return fmt.Errorf("mask rate %g: must be in (0, 1]", mk.Rate)
	case !(mk.Mask >= 0 && mk.Random >= 0 && mk.Mask+mk.Random <= 1):
		return fmt.Errorf("mask %g and random %g: must be ≥ 0 with a sum ≤ 1", mk.Mask, mk.Random)
	}
	return nil
}

// Pieces says which ids a masking draws from and writes.
type Pieces struct {
	Vocab   int            // ids are in [0, Vocab)
	MaskID  int32          // [MASK]
	Special map[int32]bool // never chosen: [CLS], [SEP], [PAD]
}

// Apply corrupts one encoded text. It returns the model's input, the
// chosen positions (ascending) and the pieces that were there.
func (mk Masking) Apply(rng *rand.Rand, ids []int32, p Pieces) (in []int32, pos []int, orig []int32) {
	in = append([]int32(nil), ids...)
	for j, id := range ids {
		if p.Special[id] || rng.Float64() >= mk.Rate {
			continue
		}
		pos, orig = append(pos, j), append(orig, id)
		switch u := rng.Float64(); {
		case u < mk.Mask:
			in[j] = p.MaskID
		case u < mk.Mask+mk.Random:
			in[j] = int32(rng.Intn(p.Vocab))
		}
	}
	return in, pos, orig
}
