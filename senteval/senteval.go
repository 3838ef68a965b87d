// Package senteval scores sentence embeddings as SentEval and the
// sentence-embedding papers do:
//
//   - STS: the Spearman correlation (×100 in reports) between gold
//     similarity scores and the cosine similarities of the pairs'
//     embeddings; an STS year is scored as one set, all its subsets
//     concatenated (STSAll, SentEval's "all" setting).
//   - Transfer: logistic regressions trained on frozen embeddings (MR, CR,
//     SUBJ, MPQA by 10-fold cross-validation; SST-2, MRPC, TREC on fixed
//     splits), accuracy ×100 (Transfer).
//   - Alignment and uniformity of the L2-normalised embeddings (Wang &
//     Isola 2020) over STS-B (AlignUniform).
//
// Every scorer takes an Embedder; *model.Model (a transformer's sentence
// embedding) and model.WordMean (the mean of a model's word vectors) are
// two.
package senteval

import (
	"errors"
	"fmt"

	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/metrics"
)

// Embedder maps texts to one vector each (*model.Model is one).
type Embedder interface {
	Embed(texts []string) ([][]float32, error)
}

// STSResult is one similarity set's score.
type STSResult struct {
	N        int     `json:"n"`
	Spearman float64 `json:"spearman"` // ×100
	Pearson  float64 `json:"pearson"`  // ×100
	// SubsetMean is, for a set of several subsets scored by STSAll, the
	// mean of the subsets' Spearman correlations (SentEval's "mean"), for
	// comparison only; 0 otherwise.
	SubsetMean float64 `json:"subset_mean,omitempty"`
}

// STS embeds both sides of every pair (each distinct sentence once) and
// correlates their cosine similarities with the gold scores.
func STS(e Embedder, pairs []dataset.SimPair) (STSResult, error) {
	sims, err := similarities(e, pairs)
	if err != nil {
		return STSResult{}, err
	}
	return correlate(pairs, sims)
}

// STSAll scores groups (the subsets of an STS year) in SentEval's "all"
// setting: one Spearman (and Pearson) correlation over the concatenation
// of all their pairs, not the mean of the per-group correlations, which
// all.SubsetMean holds for comparison. It also returns each group's own
// score, in order. Sentences are embedded once, across groups.
func STSAll(e Embedder, groups []Group) (all STSResult, each []STSResult, err error) {
	if len(groups) == 0 {
		return STSResult{}, nil, errors.New("senteval: no groups")
	}
	var pairs []dataset.SimPair
	for _, g := range groups {
		pairs = append(pairs, g.Pairs...)
	}
	sims, err := similarities(e, pairs)
	if err != nil {
		return STSResult{}, nil, err
	}
	at := 0
	var sum float64
	for _, g := range groups {
		res, err := correlate(g.Pairs, sims[at:at+len(g.Pairs)])
		if err != nil {
			return STSResult{}, nil, fmt.Errorf("%s: %w", g.Name, err)
		}
		at += len(g.Pairs)
		each = append(each, res)
		sum += res.Spearman
	}
	if all, err = correlate(pairs, sims); err != nil {
		return STSResult{}, nil, err
	}
	if len(groups) > 1 {
		all.SubsetMean = sum / float64(len(groups))
	}
	return all, each, nil
}

// similarities embeds the distinct sentences of pairs in one call and
// returns each pair's cosine similarity (0 when a vector is zero).
func similarities(e Embedder, pairs []dataset.SimPair) ([]float64, error) {
	if len(pairs) < 3 {
		return nil, fmt.Errorf("senteval: %d pairs: need at least 3", len(pairs))
	}
	texts, ia, ib := pairTexts(pairs)
	vecs, err := embedChecked(e, texts)
	if err != nil {
		return nil, fmt.Errorf("senteval: %w", err)
	}
	sims := make([]float64, len(pairs))
	for k := range pairs {
		sims[k], _ = metrics.Cosine(vecs[ia[k]], vecs[ib[k]])
	}
	return sims, nil
}

// pairTexts lists the distinct sentences of pairs (first-seen order) and
// the index of each pair's two sides in that list.
func pairTexts(pairs []dataset.SimPair) (texts []string, ia, ib []int) {
	index := map[string]int{}
	at := func(s string) int {
		i, ok := index[s]
		if !ok {
			i = len(texts)
			index[s] = i
			texts = append(texts, s)
		}
		return i
	}
	ia, ib = make([]int, len(pairs)), make([]int, len(pairs))
	for k, p := range pairs {
		ia[k], ib[k] = at(p.A), at(p.B)
	}
	return texts, ia, ib
}

// correlate scores similarities against the pairs' gold scores.
func correlate(pairs []dataset.SimPair, sims []float64) (STSResult, error) {
	gold := dataset.SimScores(pairs)
	rho, _, err := metrics.Spearman(gold, sims)
	if err != nil {
		return STSResult{}, fmt.Errorf("senteval: %w", err)
	}
	r, _, err := metrics.Pearson(gold, sims)
	if err != nil {
		return STSResult{}, fmt.Errorf("senteval: %w", err)
	}
	return STSResult{N: len(pairs), Spearman: 100 * rho, Pearson: 100 * r}, nil
}
