package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/textarmor/textarmor/pipeline"
)

// runReconstruct implements `reconstruct`: a RAR model's text from
// k-PGD-attacked representations (carl-rar.md Table 6).
func runReconstruct(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("reconstruct", "reconstruct --model DIR [--plain DIR] (--dataset NAME --data DIR | TEXT...) [flags]", stderr)
	c, df, asJSON := pipeline.NewReconstructConfig(), dataFlags{}, false
	df.register(fs, false)
	fs.StringVar(&c.Model, "model", "", "a model trained with --defense rar (required)")
	fs.StringVar(&c.Plain, "plain", "", "a model that classifies each text and its reconstruction (Table 6: the plain fine-tuned one)")
	fs.StringVar(&c.Split, "split", c.Split, "split of --dataset: train, dev or test")
	fs.IntVar(&c.N, "n", c.N, "examples of a seeded sample of the split (0 = all)")
	fs.Float64Var(&c.Eps, "eps", c.Eps, "k-PGD's ε on the input embeddings (0 = decode the clean input)")
	fs.IntVar(&c.Steps, "steps", c.Steps, "k-PGD's steps (η = ε)")
	fs.BoolVar(&asJSON, "json", false, "print the report as JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	c.Data, c.Texts = df.Data, fs.Args()
	r, err := pipeline.Reconstruct(context.Background(), c)
	if err != nil {
		return err
	} else if asJSON {
		return json.NewEncoder(stdout).Encode(r)
	}
	for _, t := range r.Texts {
		fmt.Fprintf(stdout, "%s\n  → %s  (%d tokens changed; plain model: %d → %d)\n", t.Original, t.Reconstructed, t.Changed, t.PlainOriginal, t.PlainReconstructed)
	}
	_, err = fmt.Fprintf(stdout, "%d texts, k-PGD ε %g: tokens reconstructed %.1f%% clean, %.1f%% attacked; %d texts changed, %d flip the plain model\n",
		r.N, r.Eps, 100*r.TokenAccuracyClean, 100*r.TokenAccuracyAttacked, r.Changed, r.Flipped)
	return err
}
