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
// every still-uncoded synonym of w takes w's code. Padding and UNK map to
// themselves.
func SEMEncoding(syn *SynonymTable) []int32 {
	n := syn.Len()
	code := make([]int32, n)
	for i := range code {
		code[i] = -1
	}
	for id := int32(0); int(id) < n && id <= text.UnkID; id++ {
		code[id] = id
	}
	for w := text.UnkID + 1; int(w) < n; w++ {
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

// SEM is standard training on synonym-encoded inputs. The encoding lives in
// the classifier (nn.Config.IDMap), so it is saved with the model and
// applied by Forward and Predict at test time, attacks included.
type SEM struct {
	Map []int32
}

// NewSEM builds the encoding for syn.
func NewSEM(syn *SynonymTable) *SEM { return &SEM{Map: SEMEncoding(syn)} }

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
	return map[string]any{"codes": len(codes), "vocab": len(s.Map)}
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
