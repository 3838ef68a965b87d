package pipeline

import (
	"context"
	"math"

	"github.com/textarmor/textarmor/attack"
	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/metrics"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
)

// EmbeddingAttackConfig configures EmbeddingAttack (`textarmor attack
// --recipe pgd|fgm`): accuracy under a perturbation of the input
// embeddings.
type EmbeddingAttackConfig struct {
	Model string
	Data  Data
	Split string
	// N examples of a seeded sample of the split (0 = all).
	N    int
	Seed int64
	// Method is pgd (Steps steps of η = ε by default) or fgm (one step of
	// ε; Steps does not apply); Eps the L2 radius per example (0 = the
	// clean input); Step, when positive, replaces pgd's η.
	Method    string
	Eps, Step float64
	Steps     int
	Batch     int
	// KeepExamples fills the report's Examples, for paired comparisons of
	// models attacked on the same examples.
	KeepExamples bool
}

// EmbeddingExample is one example's outcome.
type EmbeddingExample struct {
	Clean     bool    `json:"clean"`    // classified correctly before the attack
	Attacked  bool    `json:"attacked"` // and under it
	Cosine    float64 `json:"cosine"`
	Euclidean float64 `json:"euclidean"`
}

// NewEmbeddingAttackConfig returns the CLI's defaults: k-PGD at ε 0.1
// with K = 3 (spec §6.3, ambiguity 12) on the test split, batches of 32.
func NewEmbeddingAttackConfig() EmbeddingAttackConfig {
	return EmbeddingAttackConfig{Data: NewData(), Split: "test", Method: "pgd", Eps: 0.1, Steps: 3, Batch: 32}
}

// EmbeddingAttackReport is the accuracy before and under the attack.
type EmbeddingAttackReport struct {
	Attack      attack.EmbeddingAttack `json:"attack"`
	Method      string                 `json:"method"`
	Dataset     string                 `json:"dataset"`
	N           int                    `json:"n"`
	Clean       float64                `json:"clean_accuracy"` // 0–1
	UnderAttack float64                `json:"accuracy_under_attack"`
	// DropSE is the paired standard error of Clean − UnderAttack (the
	// same examples, one model).
	DropSE float64 `json:"drop_se"`
	// Cosine and Euclidean are the means over the examples of the cosine
	// and the L2 distance between each clean and attacked sentence vector
	// (the head's input; carl-rar.md §6.2, Table 4), with their standard
	// errors.
	Cosine      float64 `json:"cosine"`
	CosineSE    float64 `json:"cosine_se"`
	Euclidean   float64 `json:"euclidean"`
	EuclideanSE float64 `json:"euclidean_se"`
	// PairCosine and PairDistance are the spread of the clean sentence
	// vectors: the mean cosine and the RMS distance between different
	// examples' vectors. Cosine and Euclidean mean something only against
	// them: an encoder that maps every sentence near one point moves
	// nothing far, robust or not.
	PairCosine   float64 `json:"pair_cosine"`
	PairDistance float64 `json:"pair_distance"`
	// Examples, with KeepExamples, in the order of the seeded sample.
	Examples []EmbeddingExample `json:"examples,omitempty"`
}

// EmbeddingAttack attacks a model's input embeddings on a split.
func EmbeddingAttack(ctx context.Context, c EmbeddingAttackConfig) (*EmbeddingAttackReport, error) {
	a := attack.PGD(c.Eps)
	switch c.Method {
	case "pgd":
	case "fgm":
		a = attack.FGM(c.Eps)
	default:
		return nil, configErrorf("--recipe %q: the embedding attacks are pgd and fgm", c.Method)
	}
	if c.Method == "pgd" {
		a.Steps = c.Steps
	}
	if c.Step > 0 {
		a.Step = c.Step
	}
	if c.Eps == 0 {
		a.Step = 1 // nothing moves; a step keeps the settings valid
	}
	if err := CheckRules(Rule{isFinite(c.Eps) && c.Eps >= 0, "eps", c.Eps, "≥ 0"}, Rule{c.Method != "pgd" || c.Steps >= 1 && c.Steps <= 100, "steps", c.Steps, "in [1, 100]"},
		Rule{c.N >= 0, "n", c.N, "≥ 0 (0 = the whole split)"}, Rule{c.Batch >= 1, "batch", c.Batch, "at least 1"}); err != nil {
		return nil, err
	}
	if err := a.Validate(); err != nil {
		return nil, &ConfigError{err}
	}
	if c.Model == "" {
		return nil, configErrorf("--model is required")
	}
	m, err := model.Load(c.Model)
	if err != nil {
		return nil, err
	}
	if err := refusePairModel(m, "the embedding-space attack"); err != nil {
		return nil, err
	}
	ex, name, err := c.Data.ForModel(m, c.Split, nil)
	if err != nil {
		return nil, err
	}
	ex = dataset.SeededSubset(ex, c.N, c.Seed)
	r := &EmbeddingAttackReport{Attack: a, Method: c.Method, Dataset: name, N: len(ex)}
	var sum, sumSq float64
	var cos, euc [2]float64 // sums and sums of squares
	var spread metrics.Spread
	for lo := 0; lo < len(ex); lo += c.Batch {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		part := ex[lo:min(lo+c.Batch, len(ex))]
		seqs, labels := encodeExamples(m, part)
		o, err := a.Run(m.Net, nn.MakeBatch(seqs, labels, m.Net.Enc.MinLen()))
		if err != nil {
			return nil, err
		}
		for i, l := range labels {
			ok, okAdv := b2f(o.Clean[i] == l), b2f(o.Attacked[i] == l)
			r.Clean, r.UnderAttack = r.Clean+ok, r.UnderAttack+okAdv
			sum, sumSq = sum+(ok-okAdv), sumSq+(ok-okAdv)*(ok-okAdv)
			cos[0], cos[1] = cos[0]+o.Cosine[i], cos[1]+o.Cosine[i]*o.Cosine[i]
			euc[0], euc[1] = euc[0]+o.Euclidean[i], euc[1]+o.Euclidean[i]*o.Euclidean[i]
			spread.Add(o.CleanVectors[i])
			if c.KeepExamples {
				r.Examples = append(r.Examples, EmbeddingExample{Clean: o.Clean[i] == l, Attacked: o.Attacked[i] == l, Cosine: o.Cosine[i], Euclidean: o.Euclidean[i]})
			}
		}
	}
	if r.N > 0 {
		r.Clean, r.UnderAttack = r.Clean/float64(r.N), r.UnderAttack/float64(r.N)
		r.DropSE = math.Sqrt(metrics.MeanVariance(sum, sumSq, r.N))
		r.Cosine, r.CosineSE = cos[0]/float64(r.N), math.Sqrt(metrics.MeanVariance(cos[0], cos[1], r.N))
		r.Euclidean, r.EuclideanSE = euc[0]/float64(r.N), math.Sqrt(metrics.MeanVariance(euc[0], euc[1], r.N))
	}
	if r.N > 1 {
		r.PairCosine, r.PairDistance = spread.PairCosine(), spread.PairDistance()
	}
	return r, nil
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
