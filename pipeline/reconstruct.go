package pipeline

import (
	"context"

	"github.com/textarmor/textarmor/attack"
	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/defense"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
)

// ReconstructConfig configures Reconstruct (`textarmor reconstruct`): a
// RAR model's text from adversarial representations (carl-rar.md §3.3 and
// §6.4, Table 6).
type ReconstructConfig struct {
	Model string // a model with a reconstruction head (--defense rar)
	// Plain, when set, is a model that judges each reconstruction (the
	// paper's plain fine-tuned ALBERT): Table 6 shows the texts it
	// classifies right while their reconstruction is classified wrong.
	Plain string
	// Texts, when given, are decoded (each attacked against the model's own
	// prediction); otherwise N examples of a seeded sample of Data's Split.
	Texts []string
	Data  Data
	Split string
	N     int
	Seed  int64
	// Eps and Steps are k-PGD's (η = ε, spec §6.3); Eps 0 decodes the clean
	// input.
	Eps   float64
	Steps int
	Batch int
}

// NewReconstructConfig returns the CLI's defaults: k-PGD at ε 0.1 (3
// steps) on 200 examples of the dev split (Table 6 is on SST-2 dev).
func NewReconstructConfig() ReconstructConfig {
	return ReconstructConfig{Data: NewData(), Split: "dev", N: 200, Eps: 0.1, Steps: 3, Batch: 16}
}

// ReconstructedText is one example's decoding.
type ReconstructedText struct {
	Text          string `json:"text"`
	Label         int    `json:"label"`         // the gold label, or the model's prediction for given texts
	Original      string `json:"original"`      // the input as the model reads it, decoded
	Reconstructed string `json:"reconstructed"` // the head's arg-max under the attack
	Changed       int    `json:"changed"`       // tokens that differ
	// PlainOriginal and PlainReconstructed are Plain's predictions (-1
	// without Plain); Flipped: right on the text, wrong on its
	// reconstruction.
	PlainOriginal      int  `json:"plain_original"`
	PlainReconstructed int  `json:"plain_reconstructed"`
	Flipped            bool `json:"flipped,omitempty"`
}

// ReconstructReport holds every decoding and check 10's and 11's counts.
type ReconstructReport struct {
	Eps   float64 `json:"eps"`
	Steps int     `json:"steps"`
	N     int     `json:"n"`
	// TokenAccuracyClean and TokenAccuracyAttacked are the shares of real
	// positions whose arg-max is the token read, without and under the
	// attack.
	TokenAccuracyClean    float64             `json:"token_accuracy_clean"`
	TokenAccuracyAttacked float64             `json:"token_accuracy_attacked"`
	Changed               int                 `json:"changed"` // examples whose reconstruction differs from the input
	Flipped               int                 `json:"flipped"`
	Texts                 []ReconstructedText `json:"texts"`
}

// Reconstruct attacks each example's embeddings with k-PGD and decodes the
// RAR head's arg-max tokens.
func Reconstruct(ctx context.Context, c ReconstructConfig) (*ReconstructReport, error) {
	if err := CheckRules(Rule{isFinite(c.Eps) && c.Eps >= 0, "eps", c.Eps, "≥ 0"}, Rule{c.Steps >= 1 && c.Steps <= 100, "steps", c.Steps, "in [1, 100]"},
		Rule{c.N >= 0, "n", c.N, "≥ 0 (0 = the whole split)"}, Rule{c.Batch >= 1 && c.Batch <= 4096, "batch", c.Batch, "in [1, 4096]"}); err != nil {
		return nil, err
	}
	if c.Model == "" {
		return nil, configErrorf("--model is required")
	}
	m, err := model.Load(c.Model)
	if err != nil {
		return nil, err
	}
	if m.Net.Rec == nil {
		return nil, configErrorf("--model %s has no reconstruction head (train it with --defense rar)", c.Model)
	}
	var plain *model.Model
	if c.Plain != "" {
		if plain, err = model.Load(c.Plain); err != nil {
			return nil, err
		}
	}
	var ex []dataset.Example
	if len(c.Texts) > 0 {
		for _, s := range c.Texts {
			ex = append(ex, dataset.Example{Text: s, Label: -1})
		}
	} else {
		if ex, _, err = c.Data.ForModel(m, c.Split, nil); err != nil {
			return nil, err
		}
		ex = dataset.SeededSubset(ex, c.N, c.Seed)
	}
	a := attack.PGD(max(c.Eps, 1e-12))
	a.Steps = c.Steps
	r := &ReconstructReport{Eps: c.Eps, Steps: c.Steps, N: len(ex)}
	var tokens, rightClean, rightAttacked int
	for lo := 0; lo < len(ex); lo += c.Batch {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		part := ex[lo:min(lo+c.Batch, len(ex))]
		seqs, labels := encodeExamples(m, part)
		if len(c.Texts) > 0 {
			for i, p := range m.Net.Predict(seqs) {
				labels[i] = nn.Argmax(p)
			}
		}
		b := nn.MakeBatch(seqs, labels, m.Net.Enc.MinLen())
		clean, err := defense.ReconstructIDs(m.Net, b, nil)
		if err != nil {
			return nil, err
		}
		rec := clean
		if c.Eps > 0 {
			delta, err := a.Perturb(m.Net, b)
			if err != nil {
				return nil, err
			}
			if rec, err = defense.ReconstructIDs(m.Net, b, delta); err != nil {
				return nil, err
			}
		}
		for i, e := range part {
			in := m.Net.MapIDs(seqs[i])
			t := ReconstructedText{Text: e.Text, Label: labels[i], Original: m.Decode(seqs[i]), Reconstructed: m.Decode(rec[i]), PlainOriginal: -1, PlainReconstructed: -1}
			for j, id := range in {
				tokens++
				rightClean += b2i(clean[i][j] == id)
				rightAttacked += b2i(rec[i][j] == id)
				t.Changed += b2i(rec[i][j] != id)
			}
			if plain != nil {
				p := plain.Net.Predict([][]int32{plain.Encode(t.Original), plain.Encode(t.Reconstructed)})
				t.PlainOriginal, t.PlainReconstructed = nn.Argmax(p[0]), nn.Argmax(p[1])
				t.Flipped = t.PlainOriginal == t.Label && t.PlainReconstructed != t.Label
			}
			r.Changed += b2i(t.Changed > 0)
			r.Flipped += b2i(t.Flipped)
			r.Texts = append(r.Texts, t)
		}
	}
	if tokens > 0 {
		r.TokenAccuracyClean, r.TokenAccuracyAttacked = float64(rightClean)/float64(tokens), float64(rightAttacked)/float64(tokens)
	}
	return r, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// encodeExamples is each example's ids, as m reads its text, and label.
func encodeExamples(m *model.Model, ex []dataset.Example) ([][]int32, []int) {
	seqs, labels := make([][]int32, len(ex)), make([]int, len(ex))
	for i, e := range ex {
		seqs[i], labels[i] = m.Encode(e.Text), e.Label
	}
	return seqs, labels
}
