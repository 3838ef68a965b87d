package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/textarmor/textarmor/pipeline"
)

// runBenchPaired compares two attack result files of the same test
// examples (two models, or one model under two settings): each one's
// accuracy under attack over the examples both hold, and the difference
// with the standard error of the mean per-example difference, the paired
// SE that bench flat-table and ftml-table give within a block.
func runBenchPaired(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench paired", "bench paired [--json] A.csv B.csv", stderr)
	asJSON := fs.Bool("json", false, "print the result as JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return usageError{fmt.Errorf("bench paired: want two attack result files, got %d", fs.NArg())}
	}
	p, err := pipeline.BenchPaired(fs.Arg(0), fs.Arg(1))
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(map[string]any{"a": fs.Arg(0), "b": fs.Arg(1), "shared": p.N,
			"only_a": p.OnlyA, "only_b": p.OnlyB, "aa_a": 100 * p.A, "aa_b": 100 * p.B,
			"difference": 100 * (p.A - p.B), "difference_se": 100 * p.SE})
	}
	fmt.Fprintf(stdout, "AA(A) %.2f, AA(B) %.2f over %d shared examples: A − B %+.2f ± %.2f (paired SE)\n", 100*p.A, 100*p.B, p.N, 100*(p.A-p.B), 100*p.SE)
	if p.OnlyA != 0 || p.OnlyB != 0 {
		fmt.Fprintf(stdout, "not shared: %d examples only in A, %d only in B\n", p.OnlyA, p.OnlyB)
	}
	return nil
}
