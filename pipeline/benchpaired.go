package pipeline

import (
	"fmt"

	"github.com/textarmor/textarmor/attack"
	"github.com/textarmor/textarmor/metrics"
)

// PairedReport compares two attack result files of the same test examples
// (`textarmor bench paired`).
type PairedReport struct {
	// Paired holds each file's accuracy under attack over the N examples
	// both hold, and their difference with its paired standard error.
	metrics.Paired
	// OnlyA and OnlyB count the examples only one file holds.
	OnlyA, OnlyB int
}

// BenchPaired compares two attack result files (two models, or one model
// under two settings) on the test examples both hold: the paired standard
// error of the difference is the one bench flat-table and ftml-table give
// within a block.
func BenchPaired(a, b string) (*PairedReport, error) {
	var kept [2]map[int]bool
	for i, path := range []string{a, b} {
		k, err := attack.KeptByIndex(path)
		if err != nil {
			return nil, err
		}
		if k == nil {
			return nil, fmt.Errorf("bench paired: %s: no such file", path)
		}
		kept[i] = k
	}
	p := metrics.PairedAccuracy(kept[0], kept[1])
	if p.N == 0 {
		return nil, fmt.Errorf("bench paired: %s and %s share no test example index", a, b)
	}
	return &PairedReport{Paired: p, OnlyA: len(kept[0]) - p.N, OnlyB: len(kept[1]) - p.N}, nil
}
