package defense

import (
	"math"
	"math/rand"

	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/text"
)

// StatsOptions tune EmbedStats; zero values mean the defaults noted.
type StatsOptions struct {
	// P is the norm (2); Squared as in FTMLConfig.
	P       float64
	Squared bool
	// Alpha is the margin for ShareRandomCloserThanAlpha; 0 means
	// FTMLAlphaFactor·α0 of the table being described.
	Alpha float64
	// MaxAnchors keeps the this many lowest-id (most frequent) words with
	// synonyms as anchors (5000, spec §15 check 8); < 0 means all.
	MaxAnchors int
	// RandomPerAnchor is the number of random words drawn per anchor (8).
	RandomPerAnchor int
}

// Stats describe how an embedding table places synonyms (spec §15 check 8).
type Stats struct {
	Words    int     `json:"words"`   // real vocabulary words (ids >= 2)
	Anchors  int     `json:"anchors"` // anchors used (words with synonyms)
	Norm     float64 `json:"norm"`    // p (+Inf prints as 0 in JSON; see NormName)
	NormName string  `json:"norm_name"`
	// MeanSynonymDist is the mean over anchors of their mean distance to
	// their synonyms.
	MeanSynonymDist float64 `json:"mean_synonym_dist"`
	// MeanRandomDist is the mean distance of (anchor, random word) pairs.
	MeanRandomDist float64 `json:"mean_random_dist"`
	// Ratio is MeanSynonymDist / MeanRandomDist.
	Ratio  float64 `json:"ratio"`
	Alpha0 float64 `json:"alpha0"` // mean distance of random distinct word pairs
	Alpha  float64 `json:"alpha"`  // the margin used below
	// ShareRandomCloserThanAlpha is the share of (anchor, random word)
	// pairs with distance < Alpha.
	ShareRandomCloserThanAlpha float64 `json:"share_random_closer_than_alpha"`
	// ShareSynonymCloserThanAlpha is the share of (anchor, synonym) pairs
	// with distance < Alpha.
	ShareSynonymCloserThanAlpha float64 `json:"share_synonym_closer_than_alpha"`
}

// EmbedStats describes table [V, D] with the default options.
func EmbedStats(table *tensor.Tensor, vocab *text.Vocab, syn *SynonymTable, rng *rand.Rand) Stats {
	return EmbedStatsWith(table, vocab, syn, rng, StatsOptions{})
}

// EmbedStatsWith describes table [V, D]: synonym versus random-pair
// distances over the anchors (spec §15 check 8).
func EmbedStatsWith(table *tensor.Tensor, vocab *text.Vocab, syn *SynonymTable, rng *rand.Rand, opt StatsOptions) Stats {
	if opt.P == 0 {
		opt.P = 2
	}
	if opt.MaxAnchors == 0 {
		opt.MaxAnchors = 5000
	}
	if opt.RandomPerAnchor <= 0 {
		opt.RandomPerAnchor = 8
	}
	v, d := table.Shape[0], table.Shape[1]
	first := int(text.UnkID) + 1
	st := Stats{Words: max(v-first, 0), Norm: opt.P, NormName: normName(opt.P)}
	if math.IsInf(opt.P, 1) {
		st.Norm = 0
	}
	st.Alpha0 = FTMLAlpha0(table, opt.P, opt.Squared, rng)
	st.Alpha = opt.Alpha
	if st.Alpha == 0 {
		st.Alpha = FTMLAlphaFactor * st.Alpha0
	}
	row := func(i int32) []float32 { return table.Data[int(i)*d : int(i+1)*d] }
	var synSum, randSum float64
	var randN, randClose, synN, synClose int
	for id := int32(first); int(id) < v && (opt.MaxAnchors < 0 || st.Anchors < opt.MaxAnchors); id++ {
		s := syn.Of(id)
		if len(s) == 0 {
			continue
		}
		st.Anchors++
		var m float64
		for _, u := range s {
			x := dist(row(id), row(u), opt.P, opt.Squared)
			m += x
			synN++
			if x < st.Alpha {
				synClose++
			}
		}
		synSum += m / float64(len(s))
		for j := 0; j < opt.RandomPerAnchor && v-first > 1; j++ {
			u := int32(first + rng.Intn(v-first))
			if u == id {
				j--
				continue
			}
			x := dist(row(id), row(u), opt.P, opt.Squared)
			randSum += x
			randN++
			if x < st.Alpha {
				randClose++
			}
		}
	}
	if st.Anchors > 0 {
		st.MeanSynonymDist = synSum / float64(st.Anchors)
	}
	if randN > 0 {
		st.MeanRandomDist = randSum / float64(randN)
		st.ShareRandomCloserThanAlpha = float64(randClose) / float64(randN)
	}
	if synN > 0 {
		st.ShareSynonymCloserThanAlpha = float64(synClose) / float64(synN)
	}
	if st.MeanRandomDist > 0 {
		st.Ratio = st.MeanSynonymDist / st.MeanRandomDist
	}
	return st
}

func normName(p float64) string {
	switch {
	case math.IsInf(p, 1):
		return "inf"
	case p == 1:
		return "l1"
	}
	return "l2"
}
