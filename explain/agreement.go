package explain

import (
	"errors"
	"fmt"
	"math"

	"github.com/textarmor/textarmor/metrics"
	"github.com/textarmor/textarmor/model"
)

// Interpretation agreement between an original text and its adversarial
// version (FLAT spec §9.2): Kendall's τ-b and the top-k intersection of
// their word attributions, position-aligned, averaged over classes and
// then over pairs.

// Agreement summarises interpretation consistency over attack pairs.
type Agreement struct {
	Method string `json:"method"`
	K      int    `json:"k"`
	// Label is all (every class explained, class-averaged per pair, then
	// averaged over pairs) or gold (each pair's gold label, averaged per
	// gold class, then over the classes).
	Label string `json:"label"`
	// Pairs are the successful attacks explained; SampledFrom, when
	// --explain-pairs sampled them, is how many there were.
	Pairs       int `json:"pairs"`
	SampledFrom int `json:"sampled_from,omitempty"`
	// KendallTau is the mean over pairs of the class-averaged τ-b; a class
	// whose τ is undefined (a constant attribution vector, or one token)
	// is left out of its pair's average and counted in TauUndefined; a pair
	// with no defined class is left out (TauPairs counts the others).
	KendallTau   float64 `json:"kendall_tau"`
	TauPairs     int     `json:"tau_pairs"`
	TauUndefined int     `json:"tau_undefined"`
	// TopK is the mean over pairs of the class-averaged top-k intersection.
	TopK float64 `json:"topk_intersection"`
	// KendallTauSE and TopKSE are the standard errors of the two means
	// (sample standard deviation over the pairs / √pairs; for the gold
	// macro average, √(Σ SE_class²) / classes), so that two models' scores
	// can be told apart from the noise of which pairs the attack produced.
	KendallTauSE float64 `json:"kendall_tau_se"`
	TopKSE       float64 `json:"topk_intersection_se"`
	// LengthMismatch counts pairs whose token counts differ (compared on
	// the shorter length).
	LengthMismatch int     `json:"length_mismatch"`
	Seconds        float64 `json:"seconds"`
}

// PairScore is one original/adversarial pair's agreement, averaged over
// the explained classes.
// The JSON names are those of the explanation journal's lines.
type PairScore struct {
	Gold      int     `json:"gold"`            // the pair's gold label (for the per-class average)
	Tau       float64 `json:"tau"`             // mean τ-b over the classes where it is defined
	TI        float64 `json:"ti"`              // mean top-k intersection
	TauOK     bool    `json:"tau_ok"`          // some class has a defined τ
	Undefined int     `json:"tau_undefined"`   // classes whose τ is undefined (a constant vector, one word)
	Mismatch  bool    `json:"length_mismatch"` // the texts have different word counts (compared on the shorter)
	Explained bool    `json:"explained"`       // the pair was scored (false: a text without words)
}

// ScorePair explains orig and adv with method ("ig" or "lime", LIME seeded
// by seed) for classes (nil: every class), sums each word's pieces, and
// compares the two texts word by word on the shorter length with top-k
// intersection and Kendall's τ-b.
func ScorePair(m *model.Model, method string, k int, orig, adv string, seed int64, classes []int) (PairScore, error) {
	if method != "ig" && method != "lime" {
		return PairScore{}, fmt.Errorf("explain: method %q: want ig or lime", method)
	}
	// Scores are compared word by word: a transformer's word pieces add up
	// into their words (a substitution may change the piece count).
	ow, o, oOf := m.Align(orig)
	aw, a, aOf := m.Align(adv)
	var s PairScore
	n := min(len(ow), len(aw))
	s.Mismatch = len(ow) != len(aw)
	if n == 0 {
		return s, nil
	}
	ao, err := wordAttributions(m, method, o, oOf, len(ow), seed, classes)
	if err != nil {
		return PairScore{}, err
	}
	aa, err := wordAttributions(m, method, a, aOf, len(aw), seed, classes)
	if err != nil {
		return PairScore{}, err
	}
	var tau, ti float64
	tauN := 0
	for c := range ao {
		x, y := ao[c][:n], aa[c][:n]
		v, err := metrics.TopKIntersection(x, y, k)
		if err != nil {
			return PairScore{}, err
		}
		ti += v
		if t, err := metrics.KendallTauB(x, y); err == nil {
			tau += t
			tauN++
		} else if errors.Is(err, metrics.ErrTauUndefined) || n < 2 {
			s.Undefined++
		} else {
			return PairScore{}, err
		}
	}
	s.Explained = true
	s.TI = ti / float64(len(ao))
	if tauN > 0 {
		s.Tau, s.TauOK = tau/float64(tauN), true
	}
	return s, nil
}

// wordAttributions is the method's per-token attributions summed into
// words (model.Align).
func wordAttributions(m *model.Model, method string, ids []int32, wordOf []int, words int, seed int64, classes []int) ([][]float64, error) {
	var sc [][]float64
	var err error
	if method == "ig" {
		sc, err = IG(m.Net, ids, classes, 0)
	} else {
		sc, err = LIME(m.Net, ids, classes, LIMEOptions{Seed: seed})
	}
	if err != nil {
		return nil, err
	}
	for c := range sc {
		sc[c], _ = WordScores(m, sc[c], ids, wordOf, words)
	}
	return sc, nil
}

// Aggregate averages the pairs' scores: over all pairs, or (byGold) per
// gold class and then over the classes present (a macro average).
func Aggregate(scores []PairScore, byGold bool) *Agreement {
	a := &Agreement{}
	type sums struct {
		tau, ti, tau2, ti2 float64
		pairs, tauOK       int
	}
	groups := map[int]*sums{}
	var order []int
	for _, s := range scores {
		if !s.Explained {
			continue
		}
		key := 0
		if byGold {
			key = s.Gold
		}
		g, ok := groups[key]
		if !ok {
			g = &sums{}
			groups[key] = g
			order = append(order, key)
		}
		a.Pairs++
		g.pairs++
		g.ti += s.TI
		g.ti2 += s.TI * s.TI
		a.TauUndefined += s.Undefined
		if s.Mismatch {
			a.LengthMismatch++
		}
		if s.TauOK {
			a.TauPairs++
			g.tauOK++
			g.tau += s.Tau
			g.tau2 += s.Tau * s.Tau
		}
	}
	var tiMean, tauMean, tiVar, tauVar float64
	tauGroups := 0
	for _, key := range order {
		g := groups[key]
		tiMean += g.ti / float64(g.pairs)
		tiVar += metrics.MeanVariance(g.ti, g.ti2, g.pairs)
		if g.tauOK > 0 {
			tauMean += g.tau / float64(g.tauOK)
			tauVar += metrics.MeanVariance(g.tau, g.tau2, g.tauOK)
			tauGroups++
		}
	}
	if len(order) > 0 {
		a.TopK = tiMean / float64(len(order))
		a.TopKSE = math.Sqrt(tiVar) / float64(len(order))
	}
	if tauGroups > 0 {
		a.KendallTau = tauMean / float64(tauGroups)
		a.KendallTauSE = math.Sqrt(tauVar) / float64(tauGroups)
	}
	return a
}

// WordScores adds per-id scores into per-word ones (a transformer's word
// pieces into their words; [CLS] and [SEP] belong to none) and marks the
// words whose ids are all unknown to the model.
func WordScores(m *model.Model, perID []float64, ids []int32, wordOf []int, words int) ([]float64, []bool) {
	sc := make([]float64, words)
	known := make([]bool, words)
	seen := make([]bool, words)
	for i, w := range wordOf {
		if w < 0 || w >= words {
			continue
		}
		sc[w] += perID[i]
		seen[w] = true
		known[w] = known[w] || m.Known(ids[i])
	}
	unknown := make([]bool, words)
	for w := range unknown {
		unknown[w] = seen[w] && !known[w]
	}
	return sc, unknown
}
