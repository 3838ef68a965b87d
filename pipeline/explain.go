package pipeline

import (
	"context"
	"io"
	"strconv"
	"strings"

	"github.com/textarmor/textarmor/explain"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/text"
)

// ExplainTextsConfig configures ExplainTexts (`textarmor explain`).
type ExplainTextsConfig struct {
	Model string // model directory (required)
	// Method is ig (integrated gradients) or lime.
	Method string
	// Class to explain, by name or index ("" = each text's predicted class).
	Class string
	// Steps of the IG path; Samples and Seed of LIME's perturbations.
	Steps, Samples int
	Seed           int64
	// Texts to explain; when there are none, one text per line of Input
	// (the CLI: stdin), read once the model is open.
	Texts []string
	Input io.Reader
}

// NewExplainTextsConfig returns the CLI's defaults.
func NewExplainTextsConfig() ExplainTextsConfig {
	return ExplainTextsConfig{Method: "ig", Steps: explain.DefaultSteps, Samples: explain.DefaultSamples, Seed: 1}
}

// Check validates the method and the counts.
func (c ExplainTextsConfig) Check() error {
	if c.Model == "" {
		return configErrorf("--model is required")
	}
	if c.Method != "ig" && c.Method != "lime" {
		return configErrorf("--method %q: want ig or lime", c.Method)
	}
	return CheckRules(
		Rule{c.Steps >= 1 && c.Steps <= 100000, "steps", c.Steps, "in [1, 100000]"},
		Rule{c.Samples >= 2 && c.Samples <= 1000000, "samples", c.Samples, "in [2, 1000000] (one sample is the input itself)"},
	)
}

// ExplainTextsReport holds one attribution per text, in input order.
type ExplainTextsReport struct {
	Method  string
	Classes []string // the model's
	Texts   []ExplainedText
}

// ExplainedText is one text's word attributions.
type ExplainedText struct {
	Text string
	// Skipped says why there is nothing to explain ("" when there is).
	Skipped string
	// Tokens are the text's words, Scores their attributions to Class
	// (Label), Unknown which of them the model does not know.
	Tokens  []string
	Scores  []float64
	Unknown []bool
	Class   int
	Label   string
	Probs   []float32 // the model's class probabilities for the text
}

// ExplainTexts attributes a model's prediction of each text to its words.
func ExplainTexts(ctx context.Context, c ExplainTextsConfig) (*ExplainTextsReport, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	m, err := model.Load(c.Model)
	if err != nil {
		return nil, err
	}
	if err := refusePairModel(m, "explain"); err != nil {
		return nil, err
	}
	if err := refuseEncoderOnly(m, c.Model); err != nil { // no class to explain
		return nil, err
	}
	cls, err := classIndex(m, c.Class)
	if err != nil {
		return nil, err
	}
	texts, err := inputTexts(c.Texts, c.Input)
	if err != nil {
		return nil, err
	}
	r := &ExplainTextsReport{Method: c.Method, Classes: m.Classes}
	for _, s := range texts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		e, err := explainText(m, s, cls, c)
		if err != nil {
			return nil, err
		}
		r.Texts = append(r.Texts, e)
	}
	return r, nil
}

// ExplainText attributes class cls (< 0: the predicted one) of one text
// of an open model with c's method, steps, samples and seed: ExplainTexts
// for one text (the server's /v1/explain). c's model and texts are unused.
func ExplainText(m *model.Model, s string, cls int, c ExplainTextsConfig) (ExplainedText, error) {
	return explainText(m, s, cls, c)
}

// explainText attributes class cls (< 0: the predicted one) of one text.
func explainText(m *model.Model, s string, cls int, c ExplainTextsConfig) (ExplainedText, error) {
	e := ExplainedText{Text: s}
	words, ids, wordOf := m.Align(s)
	e.Tokens = text.Texts(words)
	known := 0
	for _, id := range ids {
		if m.Known(id) {
			known++
		}
	}
	switch {
	case len(ids) == 0:
		e.Skipped = "no tokens"
		return e, nil
	case known == 0:
		e.Skipped = "every token is unknown to the model's vocabulary"
		return e, nil
	}
	e.Probs = explain.Probs(m.Net, ids)
	e.Class = cls
	if cls < 0 {
		e.Class = argmaxProb(e.Probs)
	}
	e.Label = m.Classes[e.Class]
	var scores [][]float64
	var err error
	if c.Method == "ig" {
		scores, err = explain.IG(m.Net, ids, []int{e.Class}, c.Steps)
	} else {
		scores, err = explain.LIME(m.Net, ids, []int{e.Class}, explain.LIMEOptions{Samples: c.Samples, Seed: c.Seed})
	}
	if err != nil {
		return e, err
	}
	e.Scores, e.Unknown = explain.WordScores(m, scores[0], ids, wordOf, len(e.Tokens))
	return e, nil
}

// classIndex accepts a class name or index of m; "" is -1 (the predicted
// class).
func classIndex(m *model.Model, s string) (int, error) {
	if s == "" {
		return -1, nil
	}
	for i, c := range m.Classes {
		if c == s {
			return i, nil
		}
	}
	if i, err := strconv.Atoi(s); err == nil && i >= 0 && i < len(m.Classes) {
		return i, nil
	}
	return 0, configErrorf("--class %q: the model's classes are %s (or 0..%d)", s, strings.Join(m.Classes, ", "), len(m.Classes)-1)
}

// argmaxProb is the most probable class (the first of ties).
func argmaxProb(p []float32) int {
	b := 0
	for i, v := range p {
		if v > p[b] {
			b = i
		}
	}
	return b
}
