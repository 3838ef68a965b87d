package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/textarmor/textarmor/metrics"
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
	var kept [2]map[int]bool
	for i, path := range fs.Args() {
		k, err := keptByIndex(path)
		if err != nil {
			return err
		}
		if k == nil {
			return fmt.Errorf("bench paired: %s: no such file", path)
		}
		kept[i] = k
	}
	p := metrics.PairedAccuracy(kept[0], kept[1])
	n, accA, accB, se := p.N, p.A, p.B, p.SE
	if n == 0 {
		return fmt.Errorf("bench paired: %s and %s share no test example index", fs.Arg(0), fs.Arg(1))
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(map[string]any{"a": fs.Arg(0), "b": fs.Arg(1), "shared": n,
			"only_a": len(kept[0]) - n, "only_b": len(kept[1]) - n, "aa_a": 100 * accA, "aa_b": 100 * accB,
			"difference": 100 * (accA - accB), "difference_se": 100 * se})
	}
	fmt.Fprintf(stdout, "AA(A) %.2f, AA(B) %.2f over %d shared examples: A − B %+.2f ± %.2f (paired SE)\n", 100*accA, 100*accB, n, 100*(accA-accB), 100*se)
	if len(kept[0]) != n || len(kept[1]) != n {
		fmt.Fprintf(stdout, "not shared: %d examples only in A, %d only in B\n", len(kept[0])-n, len(kept[1])-n)
	}
	return nil
}
