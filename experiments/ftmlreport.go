package experiments

import (
	"fmt"
	"math"
	"strings"

	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/metrics"
	"github.com/textarmor/textarmor/tensor"
)

// FTMLPaperIMDB holds the spec's IMDB cells (clean, pwws, ga, pso, hla):
// Table 1's CNN ("cnn") and LSTM ("lstm") columns, Table 2's BERT-base
// rows ("bert").
var FTMLPaperIMDB = map[string]map[string][5]float64{
	"cnn": {"standard": {89.7, 0.6, 2.6, 1.4, 17.7}, "ibp": {81.7, 75.9, 76.0, 75.9, 76.6}, "atfl": {85.0, 63.6, 66.8, 64.7, 72.8},
		"sem": {87.6, 62.2, 63.5, 61.5, 70.5}, "ascc": {84.8, 74.0, 75.5, 74.5, 77.6}, "ftml": {88.1, 81.1, 81.4, 81.1, 82.4}},
	"lstm": {"standard": {89.1, 0.2, 1.6, 0.3, 8.7}, "ibp": {77.6, 67.5, 67.8, 67.6, 68.2}, "atfl": {85.1, 72.2, 75.5, 74.0, 77.7},
		"sem": {86.8, 61.9, 63.7, 62.2, 70.8}, "ascc": {84.3, 74.2, 76.8, 75.5, 79.5}, "ftml": {87.2, 79.0, 79.2, 78.8, 79.7}},
	"bert": {"standard": {92.4, 16.6, 8.1, 1.9, 8.2}, "sem": {89.9, 72.3, 70.5, 69.2, 75.2}, "ascc": {81.3, 65.1, 65.4, 63.1, 69.5},
		"ftml": {91.3, 81.2, 81.5, 80.0, 83.1}},
}

// FTMLReport is the table as it stands: its markdown, the cells there and
// the spec's checks on them.
type FTMLReport struct {
	Markdown  string
	Cells     []FTMLCell
	Certified *FTMLCell
	Checks    []string
}

// report builds the table from the cell files present and, unless
// readOnly, writes table.md and table.json.
func (r *ftmlRun) report(write bool) (*FTMLReport, error) {
	paperCol := map[string]int{"clean": 0, "pwws": 1, "ga": 2, "pso": 3, "hla": 4}
	paperArch := map[string]string{"cnn": "cnn", "bilstm": "lstm", "transformer": "bert"}[r.Arch]
	cols := append([]string{"clean"}, r.Attacks...)
	var b strings.Builder
	fmt.Fprintf(&b, "# FTML %s — IMDB, %s%s\n\n", r.tableName(), r.Arch, map[bool]string{true: " (quick run: not comparable to the paper)"}[r.Quick])
	fmt.Fprintf(&b, "Accuracy (%%): clean on %s; attacks = after-attack accuracy on %d seeded test examples (seed %d), protocol ftml. "+
		"In brackets: the paper's value (spec §11). HLA† uses a %s stand-in for USE (deviation).\n\n",
		map[bool]string{true: fmt.Sprintf("%d seeded test examples", r.CleanN), false: "the entire test set"}[r.CleanN > 0], r.N, r.Seed,
		map[bool]string{true: "MiniLM sentence-embedding", false: "word-vector"}[r.Arch == "transformer"])
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
	rows, shown, err := r.shownRows()
	if err != nil {
		return nil, err
	}
	rep := &FTMLReport{}
	partial := false
	for _, d := range rows {
		s := shown[d]
		shortened := ""
		if s.Reference > 0 {
			shortened = fmt.Sprintf(" (reference %d ep)", s.Reference)
		}
		fmt.Fprintf(&b, "| %s | %d ep%s %s |", d, s.Epochs, shortened, s.Describe)
		for _, c := range cols {
			var cell FTMLCell
			if ok, err := r.t.ReadJSON(d, c+".json", &cell); err != nil {
				return nil, err
			} else if !ok {
				b.WriteString(" — |")
				continue
			}
			rep.Cells = append(rep.Cells, cell)
			paper := ""
			if p, ok := FTMLPaperIMDB[paperArch][d]; ok {
				if i, ok := paperCol[c]; ok {
					paper = fmt.Sprintf(" (%.1f)", p[i])
				}
			}
			short := ""
			if c != "clean" && cell.N < min(r.N, len(r.ds.Test)) {
				short, partial = fmt.Sprintf(" n=%d", cell.N), true
			}
			fmt.Fprintf(&b, " %.1f%s%s |", cell.Accuracy, paper, short)
		}
		b.WriteString("\n")
	}
	if contains(rows, "ibp") {
		var cert FTMLCell
		if ok, err := r.t.ReadJSON("ibp", "certified.json", &cert); err != nil {
			return nil, err
		} else if ok {
			rep.Certified = &cert
			fmt.Fprintf(&b, "\nIBP certified accuracy: %.1f %% on the clean column's %d examples (no combination of substitutions from the first 8 synonyms per word can change the prediction; boxes at ε = 1).\n",
				cert.Accuracy, cert.N)
		}
	}
	if partial {
		fmt.Fprintf(&b, "\nn=k: the cell covers the first k of the %d examples so far (--first); a later pass extends it.\n", r.N)
	}
	kept, err := r.keptByCell(rep.Cells)
	if err != nil {
		return nil, err
	}
	rep.Checks = FTMLChecks(rep.Cells, r.Attacks, kept)
	if len(rep.Checks) > 0 {
		b.WriteString("\n")
		for _, c := range rep.Checks {
			b.WriteString("- " + c + "\n")
		}
	}
	rep.Markdown = b.String()
	if !write {
		return rep, nil
	}
	js := map[string]any{"dataset": r.ds.Name, "arch": r.Arch, "quick": r.Quick,
		"n": r.N, "clean_n": r.CleanN, "train_n": r.TrainN, "seed": r.Seed, "blas": tensor.BackendDetail(), "cells": rep.Cells,
		"paper": FTMLPaperIMDB[paperArch], "checks": rep.Checks, "certified": rep.Certified}
	return rep, r.t.Publish(nil, rep.Markdown, js, false, false)
}

// keptByCell gives, for each attack cell whose results file exists, which
// of the cell's own examples (the first N of the seeded permutation: a
// file being extended by a later pass holds more) kept their label.
func (r *ftmlRun) keptByCell(cells []FTMLCell) (map[[2]string]map[int]bool, error) {
	var order []int
	kept := map[[2]string]map[int]bool{}
	for _, c := range cells {
		if c.Column == "clean" || c.Column == "certified" {
			continue
		}
		all, err := r.t.Kept(c.Defense, c.Column)
		if err != nil {
			return nil, err
		}
		if all == nil {
			continue
		}
		if order == nil {
			order = dataset.SeededOrder(len(r.ds.Test), 0, r.Seed)
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

// FTMLChecks states the Table 1 targets (spec check 11) on the cells
// present: FTML keeps ≥ 70 % under PWWS, GA and PSO, loses at most 3.5
// points of clean accuracy to standard training, and is at least as
// accurate as every baseline in every attack column. Where both cells'
// per-example results are known (kept), FTML and a baseline are compared
// on the examples both attacked, with a paired standard error; otherwise
// the cells' values are compared with an unpaired one. A claim holds or
// fails beyond two standard errors and is a tie in between
// (OrderVerdict); cells without their sizes get the point verdict.
func FTMLChecks(cells []FTMLCell, atks []string, kept map[[2]string]map[int]bool) []string {
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
	// versus compares FTML with defense d under attack a.
	versus := func(a, d string) string {
		f, o := [2]string{"ftml", a}, [2]string{d, a}
		if p := metrics.PairedAccuracy(kept[f], kept[o]); p.N > 0 {
			n, af, ao, se := p.N, 100*p.A, 100*p.B, 100*p.SE
			if n == size[f] && n == size[o] {
				return fmt.Sprintf("%s: FTML %.1f ≥ %s %.1f (paired difference %+.1f ± %.1f SE over %d): %s", a, af, d, ao, af-ao, se, n, OrderVerdict(af-ao, se))
			}
			return fmt.Sprintf("%s: FTML %.1f ≥ %s %.1f on the %d examples both attacked (FTML %.1f on its %d; paired difference %+.1f ± %.1f SE): %s",
				a, af, d, ao, n, acc[f], size[f], af-ao, se, OrderVerdict(af-ao, se))
		}
		if size[f] == 0 || size[o] == 0 { // sizes unknown: no standard error
			return fmt.Sprintf("%s: FTML %.1f ≥ %s %.1f: %s", a, acc[f], d, acc[o], Verdict(acc[f] >= acc[o]))
		}
		se := 100 * math.Hypot(metrics.BinomialSE(acc[f]/100, size[f]), metrics.BinomialSE(acc[o]/100, size[o]))
		return fmt.Sprintf("%s: FTML %.1f ≥ %s %.1f (difference %+.1f ± %.1f SE): %s", a, acc[f], d, acc[o], acc[f]-acc[o], se, OrderVerdict(acc[f]-acc[o], se))
	}
	var out []string
	if f, ok := acc[[2]string{"ftml", "clean"}]; ok {
		if s, ok := acc[[2]string{"standard", "clean"}]; ok {
			nf, ns := size[[2]string{"ftml", "clean"}], size[[2]string{"standard", "clean"}]
			if nf == 0 || ns == 0 {
				out = append(out, fmt.Sprintf("clean: FTML %.1f ≥ standard %.1f − 3.5: %s", f, s, Verdict(f >= s-3.5)))
			} else {
				se := 100 * math.Hypot(metrics.BinomialSE(f/100, nf), metrics.BinomialSE(s/100, ns))
				out = append(out, fmt.Sprintf("clean: FTML %.1f ≥ standard %.1f − 3.5 (± %.1f SE): %s", f, s, se, OrderVerdict(f-s+3.5, se)))
			}
		}
	}
	for _, a := range atks {
		f, ok := acc[[2]string{"ftml", a}]
		if !ok {
			continue
		}
		if a == "pwws" || a == "ga" || a == "pso" {
			if n := size[[2]string{"ftml", a}]; n == 0 {
				out = append(out, fmt.Sprintf("%s: FTML %.1f ≥ 70: %s", a, f, Verdict(f >= 70)))
			} else {
				se := 100 * metrics.BinomialSE(f/100, n)
				out = append(out, fmt.Sprintf("%s: FTML %.1f ≥ 70 (± %.1f SE): %s", a, f, se, OrderVerdict(f-70, se)))
			}
		}
		for _, d := range defs {
			if _, ok := acc[[2]string{d, a}]; ok && d != "ftml" && d != "standard" {
				out = append(out, versus(a, d))
			}
		}
	}
	return out
}
