// Package senteval scores sentence embeddings as SentEval and the
// sentence-embedding papers do. STS: the Spearman correlation (×100 in
// reports) between gold similarity scores and the cosine similarities of
// the pairs' embeddings.
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
}

// STS embeds both sides of every pair (each distinct sentence once) and
// correlates their cosine similarities with the gold scores.
func STS(e Embedder, pairs []dataset.SimPair) (STSResult, error) {
	if len(pairs) < 3 {
		return STSResult{}, fmt.Errorf("senteval: %d pairs: need at least 3", len(pairs))
	}
	index := map[string]int{}
	var texts []string
	at := func(s string) int {
		i, ok := index[s]
		if !ok {
			i = len(texts)
			index[s] = i
			texts = append(texts, s)
		}
		return i
	}
	ia, ib := make([]int, len(pairs)), make([]int, len(pairs))
	for k, p := range pairs {
		ia[k], ib[k] = at(p.A), at(p.B)
	}
	vecs, err := e.Embed(texts)
	if err != nil {
		return STSResult{}, err
	}
	if len(vecs) != len(texts) {
		return STSResult{}, fmt.Errorf("senteval: %d vectors for %d texts", len(vecs), len(texts))
	}
	gold, sims := make([]float64, len(pairs)), make([]float64, len(pairs))
	for k, p := range pairs {
		gold[k] = p.Score
		a, b := vecs[ia[k]], vecs[ib[k]]
		if len(a) != len(b) {
			return STSResult{}, errors.New("senteval: vectors of different lengths")
		}
		sims[k], _ = metrics.Cosine(a, b) // 0 for a zero vector

	}
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
