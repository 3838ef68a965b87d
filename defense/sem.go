package defense

import (
	"fmt"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/text"
	"github.com/textarmor/textarmor/train"
)

// SEMEncoding builds SEM's synonym encoder Enc: W → W (Wang et al. 2021b,
// spec §13) as an id map over syn's vocabulary. Words are visited by
// descending frequency, which is ascending id for vocabularies built by
// text.BuildVocab: a word without a code takes the code of its closest
// already-coded synonym (S(w) is nearest first), or itself if none; then
// every still-uncoded synonym of w takes w's code. Ids outside the
// dictionary (padding and UNK; a transformer's pieces and special tokens)
// map to themselves; a transformer's dictionary is visited in its own
// frequency order (NewPieceSynonymTable).
func SEMEncoding(syn *SynonymTable) []int32 {
	n := syn.Len()
	code := make([]int32, n)
	for i := range code {
		code[i] = int32(i)
	}
	for _, w := range syn.Dictionary() {
		code[w] = -1
	}
	for _, w := range syn.Dictionary() {
		if code[w] < 0 {
			code[w] = w
			for _, s := range syn.Of(w) {
				if code[s] >= 0 {
					code[w] = code[s]
					break
				}
			}
		}
		for _, s := range syn.Of(w) {
			if code[s] < 0 {
				code[s] = code[w]
			}
		}
	}
	return code
}

// SharedCodePairs counts the pairs (w, s), s ∈ S(w), and how many of them
// map to one code. A substitution within a shared-code pair cannot change
// an SEM model's input, so shared/pairs bounds what an attack that draws
// from the same table can do.
func SharedCodePairs(syn *SynonymTable, code []int32) (shared, pairs int) {
	for w := text.UnkID + 1; int(w) < syn.Len() && int(w) < len(code); w++ {
		for _, s := range syn.Of(w) {
			if int(s) >= len(code) {
				continue
			}
			pairs++
			if code[s] == code[w] {
				shared++
			}
		}
	}
	return shared, pairs
}

// SEM is standard training on synonym-encoded inputs. The encoding lives in
// the classifier (nn.Config.IDMap), so it is saved with the model and
// applied by Forward and Predict at test time, attacks included.
type SEM struct {
	Map []int32
	// K > 0: the clusters were built from each word's K nearest synonyms
	// only, not all of the table.
	K int
	// shared and pairs are SharedCodePairs over the whole table given to
	// the constructor, the table the attacks draw from.
	shared, pairs int
}

// NewSEM builds the encoding from all of syn.
func NewSEM(syn *SynonymTable) *SEM { return NewSEMNearest(syn, 0) }

// NewSEMNearest builds the encoding from each word's k nearest synonyms in
// syn (k = 0: all of them); the share of syn's pairs that get one code is
// still counted over all of syn.
func NewSEMNearest(syn *SynonymTable, k int) *SEM {
	clusters := syn
	if k > 0 {
		clusters = syn.Nearest(k)
	}
	s := &SEM{Map: SEMEncoding(clusters), K: k}
	s.shared, s.pairs = SharedCodePairs(syn, s.Map)
	return s
}

// Name implements train.Objective.
func (s *SEM) Name() string { return "sem" }

// Install puts the encoding into m (Loss does it on the first batch).
func (s *SEM) Install(m *nn.Classifier) error {
	if len(s.Map) != m.Cfg.VocabSize {
		return fmt.Errorf("sem: encoding has %d ids, the model %d", len(s.Map), m.Cfg.VocabSize)
	}
	m.Cfg.IDMap = s.Map
	return nil
}

// Info describes the encoding for the training record.
func (s *SEM) Info() map[string]any {
	codes := map[int32]bool{}
	for _, c := range s.Map {
		codes[c] = true
	}
	info := map[string]any{"codes": len(codes), "vocab": len(s.Map), "synonym_pairs": s.pairs}
	if s.K > 0 {
		info["k"] = s.K
	}
	if s.pairs > 0 {
		info["synonym_pairs_shared_code"] = float64(s.shared) / float64(s.pairs)
	}
	return info
}

// Summary is one line for the user: codes and the share of synonym pairs
// the encoding makes indistinguishable.
func (s *SEM) Summary() string {
	in := s.Info()
	line := fmt.Sprintf("sem: %d codes for %d words", in["codes"], in["vocab"])
	if f, ok := in["synonym_pairs_shared_code"].(float64); ok {
		line += fmt.Sprintf("; %.1f %% of %d synonym pairs share a code (a swap within such a pair cannot change the input)", 100*f, s.pairs)
	}
	return line
}

// Loss implements train.Objective: cross-entropy through the encoding.
func (s *SEM) Loss(t *ag.Tape, m *nn.Classifier, b *nn.Batch) (train.Output, error) {
	if m.Cfg.IDMap == nil {
		if err := s.Install(m); err != nil {
			return train.Output{}, err
		}
	}
	return train.Standard{}.Loss(t, m, b)
}
