// Package advsts attacks sentence-similarity pairs (RobustEmbed's AdvSTS,
// Table 4; spec robustembed.md §7.4 and §10.13): a word-level attack
// rewrites one sentence of an STS pair so that the encoder's similarity
// score moves away from the gold score.
//
// The victim scores a pair ŝ = Scale·max(0, cos(u, v)) from the two
// sentence embeddings. A pair with |ŝ − y| ≥ SkipGap before the attack is
// skipped; an attack succeeds when |ŝ_adv − y| ≥ |ŝ_clean − y| + Margin.
package advsts

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/textarmor/textarmor/attack"
	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/metrics"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/tensor"
)

// Config is the success criterion of §10.13 and the run's settings.
type Config struct {
	// Scale maps the cosine to the gold scale (5: STS-B and SICK-R score
	// 0–5); SkipGap and Margin are on that scale (1.0 each).
	Scale, SkipGap, Margin float64
	Seed                   int64
	Workers                int // pairs attacked in parallel (results do not depend on it)
}

// DefaultConfig is the spec's recommendation.
func DefaultConfig() Config {
	return Config{Scale: 5, SkipGap: 1, Margin: 1, Workers: runtime.NumCPU()}
}

// Drift is AdvSTS's goal over the victim's two outputs [1 − x, x], x =
// clamp(d/2, 0, 1) with d = (|ŝ − y| − |ŝ_clean − y|)/Margin: the search
// maximises x, and the goal is reached at d ≥ 1 (x ≥ 0.5).
type Drift struct{}

// Name implements attack.Goal.
func (Drift) Name() string { return "sts-drift" }

// Score implements attack.Goal.
func (Drift) Score(p []float32, _ int) float64 { return float64(p[1]) }

// Achieved implements attack.Goal.
func (Drift) Achieved(p []float32, _ int) bool { return p[1] >= 0.5 }

// victim scores rewrites of one side of one pair.
type victim struct {
	m           *model.Model
	other       []float32 // the fixed side's embedding
	gold, clean float64   // the gold score and |ŝ_clean − y|
	cfg         Config
	err         error
	mu          sync.Mutex
}

func (v *victim) score(e []float32) float64 {
	return v.cfg.Scale * math.Max(0, tensor.Cosine(e, v.other))
}

// Predict implements attack.Victim.
func (v *victim) Predict(seqs [][]int32) [][]float32 {
	embs, err := v.m.EmbedIDs(seqs)
	out := make([][]float32, len(seqs))
	for i := range out {
		x := 0.0
		if err == nil {
			d := (math.Abs(v.score(embs[i])-v.gold) - v.clean) / v.cfg.Margin
			x = math.Min(math.Max(d/2, 0), 1)
		}
		out[i] = []float32{float32(1 - x), float32(x)}
	}
	if err != nil {
		v.mu.Lock()
		v.err = err
		v.mu.Unlock()
	}
	return out
}

// PairResult is one pair's outcome.
type PairResult struct {
	Index       int     `json:"index"`
	Gold        float64 `json:"gold"`
	Clean       float64 `json:"clean_score"`
	Adversarial float64 `json:"adversarial_score"` // the attacked set's score: the rewrite's on success, else the clean one
	Type        attack.ResultType
	Original    string `json:"original"`
	Perturbed   string `json:"perturbed"`
	Queries     int    `json:"queries"`
}

// Report is a run over a set of pairs.
type Report struct {
	Pairs                        []PairResult
	N, Skipped, Successful, Fail int
	// ASR is successful / (successful + failed), ×100.
	ASR float64
	// PearsonClean and PearsonAttacked are ×100 Pearson correlations of the
	// scores with gold over every pair, before the attack and on the
	// attacked set.
	PearsonClean, PearsonAttacked float64
}

// Run attacks the first sentence of each pair with a (its goal replaced
// by Drift), against m's similarity to the second sentence.
func Run(ctx context.Context, a *attack.Attack, m *model.Model, pairs []dataset.SimPair, cfg Config) (*Report, error) {
	switch {
	case m.Pieces == nil:
		return nil, errors.New("advsts: the encoder must be a transformer model")
	case !(cfg.Scale > 0) || !(cfg.SkipGap > 0) || !(cfg.Margin > 0):
		return nil, fmt.Errorf("advsts: scale %g, skip gap %g and margin %g must be positive", cfg.Scale, cfg.SkipGap, cfg.Margin)
	case len(pairs) < 3:
		return nil, fmt.Errorf("advsts: %d pairs: need at least 3", len(pairs))
	}
	workers := max(cfg.Workers, 1)
	// The attacked texts' words get ids in the open vocabulary before the
	// workers start (the transformations look them up).
	for _, p := range pairs {
		m.AddWords(p.A)
	}
	atk := *a
	atk.Goal = Drift{}
	results := make([]PairResult, len(pairs))
	errs := make([]error, len(pairs))
	var next sync.Mutex
	i := 0
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				next.Lock()
				k := i
				i++
				next.Unlock()
				if k >= len(pairs) || ctx.Err() != nil {
					return
				}
				results[k], errs[k] = attackPair(&atk, m, pairs[k], k, cfg)
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	rep := &Report{Pairs: results, N: len(results)}
	gold, clean, adv := make([]float64, len(results)), make([]float64, len(results)), make([]float64, len(results))
	for k, r := range results {
		gold[k], clean[k], adv[k] = r.Gold, r.Clean, r.Adversarial
		switch r.Type {
		case attack.Skipped:
			rep.Skipped++
		case attack.Successful:
			rep.Successful++
		default:
			rep.Fail++
		}
	}
	if n := rep.Successful + rep.Fail; n > 0 {
		rep.ASR = 100 * float64(rep.Successful) / float64(n)
	}
	rc, _, err := metrics.Pearson(clean, gold)
	if err != nil {
		return nil, fmt.Errorf("advsts: %w", err)
	}
	ra, _, err := metrics.Pearson(adv, gold)
	if err != nil {
		return nil, fmt.Errorf("advsts: %w", err)
	}
	rep.PearsonClean, rep.PearsonAttacked = 100*rc, 100*ra
	return rep, nil
}

// attackPair attacks pair p's first sentence.
func attackPair(a *attack.Attack, m *model.Model, p dataset.SimPair, index int, cfg Config) (PairResult, error) {
	embs, err := m.Embed([]string{p.A, p.B})
	if err != nil {
		return PairResult{}, err
	}
	v := &victim{m: m, other: embs[1], gold: p.Score, cfg: cfg}
	clean := v.score(embs[0])
	r := PairResult{Index: index, Gold: p.Score, Clean: clean, Adversarial: clean, Original: p.A, Perturbed: p.A}
	v.clean = math.Abs(clean - p.Score)
	if v.clean >= cfg.SkipGap {
		r.Type = attack.Skipped
		return r, nil
	}
	t := attack.Target{Victim: v, Vocab: m.Vocab, Tok: m.Tok, Encode: m.Encode, UnkText: m.Pieces.Token(m.Pieces.UnkID())}
	res, err := a.Run(t, attack.Example{Index: index, Text: p.A, Label: 0}, cfg.Seed)
	if err != nil {
		return r, err
	}
	if v.err != nil {
		return r, fmt.Errorf("advsts: pair %d: %w", index, v.err)
	}
	r.Type, r.Queries = res.Type, res.NumQueries
	if res.Type == attack.Successful {
		r.Perturbed = res.PerturbedText
		e, err := m.Embed([]string{res.PerturbedText})
		if err != nil {
			return r, err
		}
		r.Adversarial = v.score(e[0])
	}
	return r, nil
}
