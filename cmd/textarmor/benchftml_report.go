package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/textarmor/textarmor/attack"
	"github.com/textarmor/textarmor/checkpoint"
	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/metrics"
	"github.com/textarmor/textarmor/tensor"
)

// writeTable writes table.md and table.json from the cell files present,
// and prints the markdown when final.
func (tb *ftmlTable) writeTable(stdout io.Writer, defs, atks []string, recipes map[string]tableRecipe, final bool) error {
	paperCol := map[string]int{"clean": 0, "pwws": 1, "ga": 2, "pso": 3, "hla": 4}
	paperArch := map[string]string{"cnn": "cnn", "bilstm": "lstm"}[tb.arch]
	cols := append([]string{"clean"}, atks...)
	var b strings.Builder
	fmt.Fprintf(&b, "# FTML Table 1 — IMDB, %s%s\n\n", tb.arch, map[bool]string{true: " (quick run: not comparable to the paper)"}[tb.quick])
	fmt.Fprintf(&b, "Accuracy (%%): clean on %s; attacks = after-attack accuracy on %d seeded test examples (seed %d), protocol ftml. "+
		"In brackets: the paper's value (spec §11). HLA† uses a word-vector stand-in for USE (deviation).\n\n",
		map[bool]string{true: fmt.Sprintf("%d seeded test examples", tb.cleanN), false: "the entire test set"}[tb.cleanN > 0], tb.n, tb.seed)
	b.WriteString("| Defense | recipe |")
	for _, c := range cols {
		name := strings.ToUpper(c)
		if c == "clean" {
			name = "Clean"
		} else if c == "hla" {
			name = "HLA†"
		}
		b.WriteString(" " + name + " |")
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---|", len(cols)) + "\n")
	defs, recipes, err := tb.tableRows(defs, recipes)
	if err != nil {
		return err
	}
	var cells []tableCell
	partial := false
	for _, d := range defs {
		r := recipes[d]
		shortened := ""
		if r.Reference > 0 {
			shortened = fmt.Sprintf(" (reference %d ep)", r.Reference)
		}
		fmt.Fprintf(&b, "| %s | %d ep%s %s |", d, r.Epochs, shortened, strings.Join(r.Args, " "))
		for _, c := range cols {
			var cell tableCell
			raw, err := os.ReadFile(filepath.Join(tb.out, d, c+".json"))
			if err == nil {
				err = json.Unmarshal(raw, &cell)
			}
			switch {
			case errors.Is(err, os.ErrNotExist):
				b.WriteString(" — |")
				continue
			case err != nil:
				return err
			}
			cells = append(cells, cell)
			paper := ""
			if p, ok := paperTable1IMDB[paperArch][d]; ok {
				if i, ok := paperCol[c]; ok {
					paper = fmt.Sprintf(" (%.1f)", p[i])
				}
			}
			short := ""
			if c != "clean" && cell.N < min(tb.n, len(tb.ds.Test)) {
				short, partial = fmt.Sprintf(" n=%d", cell.N), true
			}
			fmt.Fprintf(&b, " %.1f%s%s |", cell.Accuracy, paper, short)
		}
		b.WriteString("\n")
	}
	var certified *tableCell
	if raw, err := os.ReadFile(filepath.Join(tb.out, "ibp", "certified.json")); err == nil && slices.Contains(defs, "ibp") {
		certified = &tableCell{}
		if err := json.Unmarshal(raw, certified); err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(tb.out, "ibp", "certified.json"), err)
		}
		fmt.Fprintf(&b, "\nIBP certified accuracy: %.1f %% on the clean column's %d examples (no combination of substitutions from the first 8 synonyms per word can change the prediction; boxes at ε = 1).\n",
			certified.Accuracy, certified.N)
	}
	if partial {
		fmt.Fprintf(&b, "\nn=k: the cell covers the first k of the %d examples so far (--first); a later pass extends it.\n", tb.n)
	}
	kept, err := tb.keptByCell(cells)
	if err != nil {
		return err
	}
	checks := ftmlChecks(cells, atks, kept)
	if len(checks) > 0 {
		b.WriteString("\n")
		for _, c := range checks {
			b.WriteString("- " + c + "\n")
		}
	}
	if tb.report {
		_, err := fmt.Fprint(stdout, b.String())
		return err
	}
	if err := checkpoint.WriteFileAtomic(filepath.Join(tb.out, "table.md"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(tb.out, "table.json"), map[string]any{"dataset": tb.ds.Name, "arch": tb.arch, "quick": tb.quick,
		"n": tb.n, "clean_n": tb.cleanN, "train_n": tb.trainN, "seed": tb.seed, "blas": tensor.BackendDetail(), "cells": cells,
		"paper": paperTable1IMDB[paperArch], "checks": checks, "certified": certified}); err != nil {
		return err
	}
	if final {
		fmt.Fprint(stdout, b.String())
	}
	return nil
}

// keptByIndex reads an attack results file: for each test index, whether
// that example kept its label (result Failed). A missing file gives nil.
func keptByIndex(path string) (map[int]bool, error) {
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

// keptByCell gives keptByIndex for each attack cell whose results file
// exists, restricted to the cell's own examples, the first N of the seeded
// permutation: a file being extended by a later pass holds more.
func (tb *ftmlTable) keptByCell(cells []tableCell) (map[[2]string]map[int]bool, error) {
	var order []int
	kept := map[[2]string]map[int]bool{}
	for _, c := range cells {
		if c.Column == "clean" {
			continue
		}
		all, err := keptByIndex(filepath.Join(tb.out, c.Defense, c.Column+".csv"))
		if err != nil {
			return nil, err
		}
		if all == nil {
			continue
		}
		if order == nil {
			order = dataset.SeededOrder(len(tb.ds.Test), 0, tb.seed)
		}
		own := map[int]bool{}
		for _, i := range order[:min(c.N, len(order))] {
			if k, ok := all[i]; ok {
				own[i] = k
			}
		}
		kept[[2]string{c.Defense, c.Column}] = own
	}
	return kept, nil
}

// ftmlChecks states the Table 1 targets (spec check 11) on the
// cells present: FTML keeps ≥ 70 % under PWWS, GA and PSO, loses at most
// 3.5 points of clean accuracy to standard training, and is at least as
// accurate as every baseline in every attack column. Where both cells'
// per-example results are known (kept), FTML and a baseline are compared
// on the examples both attacked, with a paired standard error; otherwise
// the cells' values are compared with an unpaired one.
func ftmlChecks(cells []tableCell, atks []string, kept map[[2]string]map[int]bool) []string {
	acc := map[[2]string]float64{}
	size := map[[2]string]int{}
	var defs []string
	for _, c := range cells {
		if _, seen := acc[[2]string{c.Defense, "clean"}]; !seen && c.Column == "clean" {
			defs = append(defs, c.Defense)
		}
		acc[[2]string{c.Defense, c.Column}] = c.Accuracy
		size[[2]string{c.Defense, c.Column}] = c.N
	}
	verdict := map[bool]string{true: "holds", false: "fails"}
	// versus compares FTML with defense d under attack a.
	versus := func(a, d string) string {
		f, o := [2]string{"ftml", a}, [2]string{d, a}
		if p := metrics.PairedAccuracy(kept[f], kept[o]); p.N > 0 {
			n, af, ao, se := p.N, 100*p.A, 100*p.B, 100*p.SE
			if n == size[f] && n == size[o] {
				return fmt.Sprintf("%s: FTML %.1f ≥ %s %.1f (paired difference %+.1f ± %.1f SE over %d): %s", a, af, d, ao, af-ao, se, n, verdict[af >= ao])
			}
			return fmt.Sprintf("%s: FTML %.1f ≥ %s %.1f on the %d examples both attacked (FTML %.1f on its %d; paired difference %+.1f ± %.1f SE): %s",
				a, af, d, ao, n, acc[f], size[f], af-ao, se, verdict[af >= ao])
		}
		noise := ""
		if size[f] > 0 && size[o] > 0 {
			se := math.Hypot(metrics.BinomialSE(acc[f]/100, size[f]), metrics.BinomialSE(acc[o]/100, size[o]))
			noise = fmt.Sprintf(" (difference %+.1f ± %.1f SE)", acc[f]-acc[o], 100*se)
		}
		return fmt.Sprintf("%s: FTML %.1f ≥ %s %.1f%s: %s", a, acc[f], d, acc[o], noise, verdict[acc[f] >= acc[o]])
	}
	var out []string
	if f, ok := acc[[2]string{"ftml", "clean"}]; ok {
		if s, ok := acc[[2]string{"standard", "clean"}]; ok {
			out = append(out, fmt.Sprintf("clean: FTML %.1f ≥ standard %.1f − 3.5: %s", f, s, verdict[f >= s-3.5]))
		}
	}
	for _, a := range atks {
		f, ok := acc[[2]string{"ftml", a}]
		if !ok {
			continue
		}
		if a == "pwws" || a == "ga" || a == "pso" {
			out = append(out, fmt.Sprintf("%s: FTML %.1f ≥ 70: %s", a, f, verdict[f >= 70]))
		}
		for _, d := range defs {
			if _, ok := acc[[2]string{d, a}]; ok && d != "ftml" && d != "standard" {
				out = append(out, versus(a, d))
			}
		}
	}
	return out
}

func writeJSON(path string, v any) error {
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return checkpoint.WriteFileAtomic(path, append(raw, '\n'), 0o644)
}
