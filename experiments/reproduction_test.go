package experiments

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/metrics"
)

// The report reads structured claims (a multi-seed table), the check
// lines of an older FTML table.json (with the paper's cells looked up),
// finds an FTML table one folder down, and refuses a file it does not
// know.
func TestReproduction(t *testing.T) {
	dir := t.TempDir()
	multi := filepath.Join(dir, "flat")
	claim := newClaim(Claim{Paper: "FLAT", Table: "Tables 2/3/8, sst2-sent, cnn, trained against textfooler"},
		"check 11, textfooler: AA(FLAT) > AA(base)", "FLAT 37.07, base 1.98", "FLAT 14.0 ± 1.0 [13.0–15.0], base 13.0 ± 2.0 [11.0–15.0]",
		metrics.SeedEstimate{Mean: 1, SE: 1.5, PerSeed: []float64{0, 1, 2}, N: 500}, true)
	if err := os.MkdirAll(multi, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(filepath.Join(multi, "table.json"), map[string]any{"train_attack": "textfooler", "values": map[string]float64{}, "checks": []string{},
		"seeds": []int64{0, 1, 2}, "claims": []Claim{claim}, "deviations": []string{"attacked the first 500 test examples"}}); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(dir, "ftml", "cnn")
	if err := os.MkdirAll(old, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(filepath.Join(old, "table.json"), map[string]any{"arch": "cnn", "dataset": "imdb", "quick": true, "n": 30, "cells": []any{}, "paper": map[string]any{},
		"checks": []string{"clean: FTML 75.7 ≥ standard 81.6 − 3.5: fails", "pwws: FTML 73.3 ≥ sem 43.3 (paired difference +30.0 ± 9.8 SE over 30): holds", "no verdict here"}}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "reproduction.md")
	md, err := WriteReproduction(out, []string{multi, filepath.Join(dir, "ftml")}, "textarmor bench reproduction …")
	if err != nil {
		t.Fatal(err)
	}
	if disk, err := os.ReadFile(out); err != nil || string(disk) != md {
		t.Fatalf("written report differs (%v)", err)
	}
	for _, want := range []string{
		"| FLAT | Tables 2/3/8, sst2-sent, cnn, trained against textfooler | 3 seeds | 1 | 0 | 1 | 0 |",
		"| FTML | Table 1, IMDB, cnn | single seed | 2 | 1 | 0 | 1 |",
		"| check 11, textfooler: AA(FLAT) > AA(base) | FLAT 37.07, base 1.98 | FLAT 14.0 ± 1.0 [13.0–15.0], base 13.0 ± 2.0 [11.0–15.0] | +1.0 ± 1.5 (paired, 500 ex.); per seed +0.0 to +2.0 | **tie** | — |",
		"Deviations of the whole table: attacked the first 500 test examples.",
		"| pwws: FTML 73.3 ≥ sem 43.3 (paired difference +30.0 ± 9.8 SE over 30) | FTML 81.1, sem 62.2 | holds |",
		"| clean: FTML 75.7 ≥ standard 81.6 − 3.5 | FTML 88.1, standard 89.7 | fails |",
		"30 attacked test examples (paper 1,000)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"rows": 3}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadReproTables([]string{bad}); err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Errorf("unknown layout: %v", err)
	}
	if _, err := ReadReproTables([]string{filepath.Join(dir, "none")}); err == nil {
		t.Error("missing path: want an error")
	}
}

// Two tables of one paper and label (a run and its variant) are told apart
// by their folders in the summary and the section titles.
func TestReproductionLabelsVariants(t *testing.T) {
	tabs := []*ReproTable{
		{Paper: "FTML", Table: "Table 2", Source: "/r/t2/transformer/table.json", Seeds: []int64{0}},
		{Paper: "FTML", Table: "Table 2", Source: "/r/t2s/transformer/table.json", Seeds: []int64{0}},
		{Paper: "SPGD", Table: "Table 3", Source: "/r/spgd/table.json", Seeds: []int64{0}},
	}
	md := ReproductionMarkdown(tabs, "")
	for _, want := range []string{"| Table 2, `t2/transformer` |", "| Table 2, `t2s/transformer` |", "## FTML — Table 2, `t2s/transformer`", "| SPGD | Table 3 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}
