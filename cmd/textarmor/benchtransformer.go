package main

import (
	"context"
	"io"

	"github.com/textarmor/textarmor/experiments"
)

// runBenchTransformer times a MiniLM-shaped encoder (random weights: the
// work does not depend on them): forward passes at batch 1 and 32 and a
// fine-tuning step at batch 32, all at length 64, against the GEMM peak of
// the same run.
func runBenchTransformer(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench transformer", "bench transformer [--blas NAME] [--time 3s] [--json]", stderr)
	c := experiments.NewSpeedConfig()
	var asJSON bool
	speedFlags(fs, &c, &asJSON)
	fs.IntVar(&c.Len, "len", c.Len, "sequence length in word pieces")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	r, err := experiments.RunSpeedTransformer(context.Background(), c)
	if err != nil {
		return err
	}
	return printSpeedReport(stdout, r, asJSON)
}
