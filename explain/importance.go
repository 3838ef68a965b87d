package explain

import (
	"fmt"
	"math"
	"math/rand"
	"sort"

	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/metrics"
	"github.com/textarmor/textarmor/text"
)

// FLAT's word-importance diagnostics (spec §9.3, §13 check 10, Table 9):
// statistics of the learnt mask φ over the vocabulary.

// GapNeighbours is the number of nearest counter-fitted neighbours per
// word that spec §9.3 compares a word's importance with.
const GapNeighbours = 10

// PhiStats summarises φ over the vocabulary (spec §13 check 10).
type PhiStats struct {
	Median       float64 `json:"median"`
	ShareAbove09 float64 `json:"share_above_0_9"`
	ShareBelow01 float64 `json:"share_below_0_1"`
	Share04to06  float64 `json:"share_0_4_0_6"` // strictly inside (0.4, 0.6)
}

// SummarizePhi computes PhiStats over the real words (ids ≥ 2) of phi.
func SummarizePhi(phi []float32) PhiStats {
	var v []float64
	for id := 2; id < len(phi); id++ {
		v = append(v, float64(phi[id]))
	}
	if len(v) == 0 {
		return PhiStats{}
	}
	var s PhiStats
	for _, x := range v {
		switch {
		case x > 0.9:
			s.ShareAbove09++
		case x < 0.1:
			s.ShareBelow01++
		case x > 0.4 && x < 0.6:
			s.Share04to06++
		}
	}
	k := float64(len(v))
	s.ShareAbove09 /= k
	s.ShareBelow01 /= k
	s.Share04to06 /= k
	sort.Float64s(v)
	s.Median = metrics.Quantile(v, 0.5)
	return s
}

// GapStats is the synonym importance gap of spec §9.3 (Fig. 5).
type GapStats struct {
	Synonyms string `json:"synonyms"`
	// CandidateWords counts the vocabulary words with at least one
	// neighbour in the vocabulary; SampledWords of them were drawn.
	CandidateWords int   `json:"candidate_words"`
	SampledWords   int   `json:"sampled_words"`
	Seed           int64 `json:"seed"`
	// NeighboursPerWord is the cap on a word's in-vocabulary neighbours
	// (the spec's 10); FileMaxNeighbours the longest list in the table.
	NeighboursPerWord int `json:"neighbours_per_word"`
	FileMaxNeighbours int `json:"file_max_neighbours"`
	// Pairs counts the (word, neighbour) pairs; Mean and Variance
	// (population, ddof 0) and Quartiles are over their |φ_w − φ_w'|.
	Pairs     int                 `json:"pairs"`
	Mean      float64             `json:"mean"`
	Variance  float64             `json:"variance"`
	Quartiles metrics.FiveNumbers `json:"quartiles"`
	Deviation string              `json:"deviation,omitempty"`
}

// SynonymGap samples up to words vocabulary words that have a neighbour in
// the vocabulary (seeded) and collects |φ_w − φ_w'| over each one's
// in-vocabulary neighbours, nearest first, at most GapNeighbours.
func SynonymGap(phi []float32, vocab *text.Vocab, nb *lexicon.Neighbors, words int, seed int64) GapStats {
	g := GapStats{Seed: seed, NeighboursPerWord: GapNeighbours}
	for _, w := range nb.Words() {
		g.FileMaxNeighbours = max(g.FileMaxNeighbours, len(nb.Synonyms(w)))
	}
	if g.FileMaxNeighbours < GapNeighbours {
		g.Deviation = fmt.Sprintf("spec §9.3 takes each word's %d nearest counter-fitted neighbours in the vocabulary; "+
			"this table holds at most %d per word, so every in-vocabulary neighbour is used", GapNeighbours, g.FileMaxNeighbours)
	}
	r := nb.Restrict(vocab) // real vocabulary words and neighbours only, order kept
	type cand struct {
		id   int32
		nbrs []string
	}
	var cands []cand
	for id := int32(text.UnkID) + 1; int(id) < vocab.Len(); id++ {
		if l := r.Synonyms(vocab.Word(id)); len(l) > 0 {
			cands = append(cands, cand{id, l[:min(len(l), GapNeighbours)]})
		}
	}
	g.CandidateWords = len(cands)
	perm := rand.New(rand.NewSource(seed)).Perm(len(cands))
	pick := perm[:min(words, len(perm))]
	sort.Ints(pick)
	g.SampledWords = len(pick)
	var gaps []float64
	for _, i := range pick {
		c := cands[i]
		for _, u := range c.nbrs {
			gaps = append(gaps, math.Abs(float64(phi[c.id])-float64(phi[vocab.ID(u)])))
		}
	}
	g.Pairs = len(gaps)
	if len(gaps) == 0 {
		return g
	}
	for _, x := range gaps {
		g.Mean += x
	}
	g.Mean /= float64(len(gaps))
	for _, x := range gaps {
		g.Variance += (x - g.Mean) * (x - g.Mean)
	}
	g.Variance /= float64(len(gaps))
	sort.Float64s(gaps)
	g.Quartiles = metrics.Summarize5(gaps)
	return g
}

// Correlation is one Pearson r with its two-sided p-value, or why it is
// undefined.
type Correlation struct {
	R     *float64 `json:"r,omitempty"`
	P     *float64 `json:"p,omitempty"`
	N     int      `json:"n"`
	Error string   `json:"error,omitempty"`
}

func pearsonOf(x, y []float64) *Correlation {
	r, p, err := metrics.Pearson(x, y)
	if err != nil {
		return &Correlation{N: len(x), Error: err.Error()}
	}
	return &Correlation{R: &r, P: &p, N: len(x)}
}

// Correlations of spec Table 9 between WI (φ), WF (training-corpus
// frequency) and SF (substitution count) over the vocabulary.
type Correlations struct {
	Words int `json:"words"`
	// WFSource names the training data WF was counted on.
	WFSource string       `json:"wf_source,omitempty"`
	WIWF     *Correlation `json:"wi_wf,omitempty"`
	WISF     *Correlation `json:"wi_sf,omitempty"`
	WFSF     *Correlation `json:"wf_sf,omitempty"`
}

// WordFrequencies counts each real vocabulary word (ids ≥ 2, index id−2) in
// the training texts, tokenised with the model's tokenizer and not
// truncated, as the vocabulary was built.
func WordFrequencies(vocab *text.Vocab, tok text.Tokenizer, texts []string) []float64 {
	wf := make([]float64, vocab.Len()-2)
	for _, x := range texts {
		for _, t := range tok.Tokenize(x) {
			if id := vocab.ID(t.Text); id > text.UnkID {
				wf[id-2]++
			}
		}
	}
	return wf
}

// SubstitutionFrequencies reads SF for every real vocabulary word (index
// id−2) from a model's substitution_counts training record (word -> count;
// absent words count 0), given as training records hold it: ok false (no
// record) gives nil; a null record (no substitution was made) all zeros.
func SubstitutionFrequencies(vocab *text.Vocab, raw any, ok bool) ([]float64, error) {
	if !ok {
		return nil, nil
	}
	sf := make([]float64, vocab.Len()-2)
	add := func(w string, c float64) {
		if id := vocab.ID(w); id > text.UnkID {
			sf[id-2] += c
		}
	}
	switch counts := raw.(type) {
	case nil:
	case map[string]any: // as loaded from the model's JSON
		for w, v := range counts {
			c, ok := v.(float64)
			if !ok {
				return nil, fmt.Errorf("training record substitution_counts[%q] = %v is not a number", w, v)
			}
			add(w, c)
		}
	case map[string]int: // as set in memory by FLAT training
		for w, v := range counts {
			add(w, float64(v))
		}
	default:
		return nil, fmt.Errorf("training record substitution_counts is %T, want a word -> count object", raw)
	}
	return sf, nil
}

// ImportanceCorrelations computes the Table 9 correlations that the inputs
// allow between WI (phi over the real words, ids ≥ 2), WF and SF (each nil
// when unknown, else indexed by id−2). It returns nil when neither WF nor
// SF is given.
func ImportanceCorrelations(phi []float32, wf, sf []float64) *Correlations {
	nw := len(phi) - 2
	wi := make([]float64, nw)
	for i := range wi {
		wi[i] = float64(phi[i+2])
	}
	c := &Correlations{Words: nw}
	if wf != nil {
		c.WIWF = pearsonOf(wi, wf)
	}
	if sf != nil {
		c.WISF = pearsonOf(wi, sf)
	}
	if wf != nil && sf != nil {
		c.WFSF = pearsonOf(wf, sf)
	}
	if c.WIWF == nil && c.WISF == nil {
		return nil
	}
	return c
}
