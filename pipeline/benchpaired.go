package pipeline

import (
	"errors"
	"fmt"
	"os"

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
		k, err := keptByExample(path)
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

// keptByExample reads an attack results file: for each test index, whether
// that example kept its label (result Failed). A missing file gives nil.
func keptByExample(path string) (map[int]bool, error) {
	rs, _, err := attack.ReadCSV(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	kept := make(map[int]bool, len(rs))
	for _, r := range rs {
		kept[r.Index] = r.Type == attack.Failed
	}
	return kept, nil
}
