package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/textarmor/textarmor/explain"
	"github.com/textarmor/textarmor/internal/progress"
	"github.com/textarmor/textarmor/pipeline"
)

func runExplain(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("explain", "explain --model DIR [--method ig|lime] [--class C] [--json] [TEXT...]   (reads one text per line from stdin when no TEXT)", stderr)
	c := pipeline.NewExplainTextsConfig()
	var color string
	var asJSON bool
	fs.StringVar(&c.Model, "model", "", "model directory (required)")
	fs.StringVar(&c.Method, "method", c.Method, "attribution method: ig (integrated gradients) or lime")
	fs.StringVar(&c.Class, "class", "", "class to explain, by name or index (default: the predicted class)")
	fs.BoolVar(&asJSON, "json", false, "print one JSON object per text: tokens, scores, class, probs")
	fs.StringVar(&color, "color", "auto", "colour words by score: auto (when stdout is a terminal), always, never")
	fs.IntVar(&c.Steps, "steps", c.Steps, "ig: interpolation steps")
	fs.IntVar(&c.Samples, "samples", c.Samples, "lime: perturbed samples")
	fs.Int64Var(&c.Seed, "seed", c.Seed, "lime: random seed")
	var pert pipeline.ExplainPerturbationConfig
	fs.StringVar(&pert.Method, "perturbation", "", "instead of attributions, the embedding perturbation of advt, iadvt or spgd read as words (SPGD's heat map): each word's ‖d‖ and the neighbour it moves towards")
	fs.Float64Var(&pert.Eps, "eps", 0, "with --perturbation: ε (0 = the model's own, else the method's default)")
	if err := parse(fs, args); err != nil {
		return err
	}
	c.Texts, c.Input = fs.Args(), os.Stdin
	if pert.Method != "" {
		pert.Model, pert.Texts = c.Model, c.Texts
		return explainPerturbation(pert, asJSON, color == "always" || (color == "auto" && progress.IsTerminal(stdout)), stdout)
	}
	if err := c.Check(); err != nil { // before --color, as it always was
		return err
	}
	useColor := false
	switch color {
	case "auto":
		useColor = progress.IsTerminal(stdout)
	case "always":
		useColor = true
	case "never":
	default:
		return usageError{fmt.Errorf("--color %q: want auto, always or never", color)}
	}
	r, err := pipeline.ExplainTexts(context.Background(), c)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	for _, e := range r.Texts {
		if asJSON {
			obj := map[string]any{"text": e.Text, "error": e.Skipped}
			if e.Skipped == "" {
				obj = map[string]any{"text": e.Text, "tokens": e.Tokens, "scores": e.Scores, "method": r.Method,
					"class": e.Class, "label": e.Label, "probs": e.Probs}
			}
			if err := enc.Encode(obj); err != nil {
				return err
			}
			continue
		}
		if e.Skipped != "" {
			fmt.Fprintf(stdout, "%q: nothing to explain (%s)\n", e.Text, e.Skipped)
			continue
		}
		printAttribution(stdout, e, r.Method, useColor)
	}
	return nil
}

// printAttribution prints one text's word scores, one word a line, and
// the text with coloured words first when useColor.
func printAttribution(stdout io.Writer, e pipeline.ExplainedText, method string, useColor bool) {
	var maxAbs float64
	for _, v := range e.Scores {
		maxAbs = math.Max(maxAbs, math.Abs(v))
	}
	fmt.Fprintf(stdout, "%s for class %s (p = %.3f):\n", strings.ToUpper(method), e.Label, e.Probs[e.Class])
	if useColor {
		parts := make([]string, len(e.Tokens))
		for j, w := range e.Tokens {
			parts[j] = explain.ColorWord(w, e.Scores[j], maxAbs)
		}
		fmt.Fprintf(stdout, "  %s\n", strings.Join(parts, " "))
	}
	for j, w := range e.Tokens {
		unk := ""
		if e.Unknown[j] {
			unk = " (unknown)"
		}
		fmt.Fprintf(stdout, "  %-20s %+.4f%s\n", w, e.Scores[j], unk)
	}
}

// explainPerturbation prints each text's perturbation word by word.
func explainPerturbation(c pipeline.ExplainPerturbationConfig, asJSON, useColor bool, stdout io.Writer) error {
	texts, err := pipeline.ExplainPerturbation(context.Background(), c)
	for _, pt := range texts {
		if asJSON {
			err = json.NewEncoder(stdout).Encode(pt)
		} else {
			_, err = fmt.Fprint(stdout, pt.Format(c.Method, useColor))
		}
		if err != nil {
			break
		}
	}
	return err
}
