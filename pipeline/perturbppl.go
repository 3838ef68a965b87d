package pipeline

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/defense"
	"github.com/textarmor/textarmor/lstmlm"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/tensor"
)

// PerturbationPerplexityConfig configures PerturbationPerplexity (SPGD's
// Table 1, spgd.md §6): how likely a language model finds texts whose
// input embeddings a classifier's adversarial perturbation moved.
type PerturbationPerplexityConfig struct {
	// Model is the classifier whose perturbations are measured; LM the
	// language model judging them (the same vocabulary and embedding
	// size: a classifier trained with --init-lm from it).
	Model, LM string
	// Method is advt, iadvt or spgd (""; the classifier's own defense);
	// Settings its settings (nil: those the classifier was trained with
	// when it was trained with Method, else the method's defaults); Eps,
	// when positive, replaces their ε.
	Method   string
	Settings *defense.AdvTextConfig
	Eps      float64
	// Data, Split, N and Seed pick the texts: a seeded sample of N (spec:
	// 1,000 test reviews, seed 0).
	Data  Data
	Split string
	N     int
	Seed  int64
	// Batch texts are perturbed at once.
	Batch int
}

// NewPerturbationPerplexityConfig returns the spec's protocol (ambiguity
// 10): 1,000 test texts of a seed-0 sample, batches of 32.
func NewPerturbationPerplexityConfig() PerturbationPerplexityConfig {
	return PerturbationPerplexityConfig{Data: NewData(), Split: "test", N: 1000, Batch: 32}
}

// PerturbationPerplexityReport is Table 1's row for one method.
type PerturbationPerplexityReport struct {
	Method   string
	Settings defense.AdvTextConfig
	Texts    int
	Words    int // predicted words
	// Clean is the LM's per-word perplexity of the texts as they are,
	// Perturbed of the texts with the perturbation added to the LM's input
	// embeddings, Gap their difference. Discretized (SPGD only) is the
	// perplexity of the texts with each perturbed word replaced by the
	// neighbour it moves towards (§3.2), a secondary, labelled metric.
	Clean, Perturbed, Gap, Discretized float64
	// Moved is the share of words the perturbation moves (d_t ≠ 0).
	Moved float64
}

// PerturbationPerplexity computes each text's perturbation with the
// classifier (evaluation mode, gold labels) and the language model's
// token-weighted perplexity with and without it.
func PerturbationPerplexity(ctx context.Context, c PerturbationPerplexityConfig) (*PerturbationPerplexityReport, error) {
	if err := CheckRules(Rule{c.N >= 0, "n", c.N, "≥ 0 (0 = the whole split)"}, Rule{c.Batch >= 1, "batch", c.Batch, "at least 1"},
		Rule{isFinite(c.Eps) && c.Eps >= 0, "eps", c.Eps, "≥ 0 (0 = the classifier's own)"}); err != nil {
		return nil, err
	}
	if c.Model == "" || c.LM == "" {
		return nil, configErrorf("--model and --lm are required")
	}
	m, err := model.Load(c.Model)
	if err != nil {
		return nil, err
	}
	if err := refusePairModel(m, "the perturbation perplexity"); err != nil {
		return nil, err
	}
	lm, err := lstmlm.Load(c.LM)
	if err != nil {
		return nil, err
	}
	if !slices.Equal(m.Vocab.Words(), lm.Vocab.Words()) || m.Net.Cfg.EmbedDim != lm.Cfg.EmbedDim {
		return nil, configErrorf("%s and the language model %s have other vocabularies or embedding sizes (train the classifier with --init-lm %s)", c.Model, c.LM, c.LM)
	}
	adv, err := perturbationObjective(m, c.Method, c.Settings, c.Eps)
	if err != nil {
		return nil, err
	}
	settings := adv.AdvTextConfig
	ex, _, err := c.Data.ForModel(m, c.Split, nil)
	if err != nil {
		return nil, err
	}
	ex = dataset.SeededSubset(ex, c.N, c.Seed)
	r := &PerturbationPerplexityReport{Method: settings.Method, Settings: settings, Texts: len(ex)}
	var clean, pert, disc float64
	var moved, words int
	for lo := 0; lo < len(ex); lo += c.Batch {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		part := ex[lo:min(lo+c.Batch, len(ex))]
		seqs, labels := encodeExamples(m, part)
		b := nn.MakeBatch(seqs, labels, m.Net.Enc.MinLen())
		x := m.Net.EmbedInput(ag.NewTape(), b).Value
		p, err := adv.Perturb(m.Net, b, x, 0, false)
		if err != nil {
			return nil, err
		}
		dim := x.Shape[2]
		for i, ids := range seqs {
			d := p.D.Data[i*b.L*dim : (i*b.L+len(ids))*dim]
			s0, n, err := lm.NLL(ids, nil)
			if err != nil {
				return nil, err
			}
			s1, _, err := lm.NLL(ids, d)
			if err != nil {
				return nil, err
			}
			clean, pert, words = clean+s0, pert+s1, words+n
			for t := range ids {
				if tensor.Norm(d[t*dim:(t+1)*dim]) > 0 {
					moved++
				}
			}
			if p.Toward != nil {
				s2, _, err := lm.NLL(defense.Discretize(ids, p.Toward[i]), nil)
				if err != nil {
					return nil, err
				}
				disc += s2
			}
		}
	}
	if words == 0 {
		return nil, fmt.Errorf("no word to predict in the %d texts", len(ex))
	}
	r.Words = words
	r.Clean, r.Perturbed = math.Exp(clean/float64(words)), math.Exp(pert/float64(words))
	r.Gap = r.Perturbed - r.Clean
	if settings.Method == defense.MethodSPGD {
		r.Discretized = math.Exp(disc / float64(words))
	}
	total := 0
	for _, e := range ex {
		total += len(m.Encode(e.Text))
	}
	r.Moved = float64(moved) / float64(max(total, 1))
	return r, nil
}

// perturbationObjective is the AdvText objective of perturbationSettings,
// with eps (when positive) for ε.
func perturbationObjective(m *model.Model, method string, given *defense.AdvTextConfig, eps float64) (*defense.AdvText, error) {
	settings, err := perturbationSettings(m, method, given)
	if err != nil {
		return nil, err
	}
	if eps > 0 {
		settings.Eps = eps
	}
	adv, err := defense.NewAdvText(settings)
	if err != nil {
		return nil, &ConfigError{err}
	}
	return adv, nil
}

// perturbationSettings are the given settings, else those m was trained
// with (its record), else the method's defaults.
func perturbationSettings(m *model.Model, method string, given *defense.AdvTextConfig) (defense.AdvTextConfig, error) {
	if given != nil {
		s := *given
		if s.Method == "" {
			s.Method = method
		}
		return s, nil
	}
	if method == "" {
		method, _ = m.Training["objective"].(string)
	}
	switch method {
	case defense.MethodAdvT, defense.MethodIAdvT, defense.MethodSPGD, defense.MethodFGM, defense.MethodPGD:
	default:
		return defense.AdvTextConfig{}, configErrorf("--method %q: want advt, iadvt, spgd, fgm or pgd", method)
	}
	s := defense.DefaultAdvText(method)
	if rec, ok := m.Training[method].(map[string]any); ok && m.Training["objective"] == method {
		num := func(k string) (float64, bool) { v, ok := rec[k].(float64); return v, ok }
		if v, ok := num("eps"); ok {
			s.Eps = v
		}
		if v, ok := num("k"); ok {
			s.K = int(v)
		}
		if v, ok := num("sigma"); ok {
			s.Sigma = v
		}
		if v, ok := num("steps"); ok {
			s.Steps = int(v)
		}
		if v, ok := num("step"); ok {
			s.Step = v
		}
		if v, ok := rec["keep_one"].(bool); ok {
			s.KeepOne = v
		}
		if v, ok := rec["literal"].(bool); ok {
			s.LiteralIAdvT = v
		}
	}
	return s, nil
}
