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
	Cells     []FTMLCell // every instance's (FTMLCell.Seed tells them apart)
	Certified *FTMLCell
	Checks    []string
	// Claims are the checks with their verdicts over every instance.
	Claims []Claim
}

// ftmlInstance is what one trained instance (seed) of the table holds.
type ftmlInstance struct {
	seed  int64
	rows  []string
	shown map[string]shownRecipe
	cells []FTMLCell
	cell  map[[2]string]FTMLCell
	kept  map[[2]string]map[int]bool
	cert  *FTMLCell
}

// collect reads an instance's rows, cells and per-example results.
func (r *ftmlRun) collect(seed int64) (*ftmlInstance, error) {
	prev := r.seed
	defer r.use(prev)
	r.use(seed)
	in := &ftmlInstance{seed: seed, cell: map[[2]string]FTMLCell{}}
	var err error
	if in.rows, in.shown, err = r.shownRows(); err != nil {
		return nil, err
	}
	for _, d := range in.rows {
		for _, c := range append([]string{"clean"}, r.Attacks...) {
			var cell FTMLCell
			if ok, err := r.t.ReadJSON(d, c+".json", &cell); err != nil {
				return nil, err
			} else if ok {
				cell.Seed = seed
				in.cells = append(in.cells, cell)
				in.cell[[2]string{d, c}] = cell
			}
		}
	}
	if contains(in.rows, "ibp") {
		var cert FTMLCell
		if ok, err := r.t.ReadJSON("ibp", "certified.json", &cert); err != nil {
			return nil, err
		} else if ok {
			in.cert = &cert
		}
	}
	if in.kept, err = r.keptByCell(in.cells); err != nil {
		return nil, err
	}
	return in, nil
}

// report builds the table from the cell files present in every instance
// and, when write is set, writes table.md and table.json into the table's
// folder. One instance gives the single-seed table; several give each
// cell's mean ± SD [min–max] over them and the claims' verdicts with the
// seed-to-seed variance in their SE.
func (r *ftmlRun) report(write bool) (*FTMLReport, error) {
	var insts []*ftmlInstance
	for _, s := range r.seeds() {
		in, err := r.collect(s)
		if err != nil {
			return nil, err
		}
		insts = append(insts, in)
	}
	paperArch := map[string]string{"cnn": "cnn", "bilstm": "lstm", "transformer": "bert"}[r.Arch]
	cols := append([]string{"clean"}, r.Attacks...)
	var b strings.Builder
	fmt.Fprintf(&b, "# FTML %s — IMDB, %s%s\n\n", r.tableName(), r.Arch, map[bool]string{true: " (quick run: not comparable to the paper)"}[r.Quick])
	fmt.Fprintf(&b, "Accuracy (%%): clean on %s; attacks = after-attack accuracy on %d seeded test examples (seed %d), protocol ftml. "+
		"In brackets: the paper's value (spec §11). HLA† uses a %s stand-in for USE (deviation).\n\n",
		map[bool]string{true: fmt.Sprintf("%d seeded test examples", r.CleanN), false: "the entire test set"}[r.CleanN > 0], r.N, r.Seed,
		map[bool]string{true: "MiniLM sentence-embedding", false: "word-vector"}[r.Arch == "transformer"])
	multi := len(insts) > 1
	if multi {
		fmt.Fprintf(&b, "Every row trained %d times (training seeds %s; each instance attacked on the same examples): mean ± SD across the instances [min–max]; a cell some instances lack yet says how many it covers.\n\n",
			len(insts), trainSeeds(ftmlTrainSeed, r.seeds()))
	}
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
	rows, shown := unionRows(r.archRecipes(), insts)
	rep := &FTMLReport{}
	for _, in := range insts {
		rep.Cells = append(rep.Cells, in.cells...)
	}
	partial := false
	var seedCells []FTMLSeedCell
	for _, d := range rows {
		s := shown[d]
		shortened := ""
		if s.Reference > 0 {
			shortened = fmt.Sprintf(" (reference %d ep)", s.Reference)
		}
		fmt.Fprintf(&b, "| %s | %d ep%s %s |", d, s.Epochs, shortened, s.Describe)
		for _, c := range cols {
			var got []FTMLCell
			for _, in := range insts {
				if cell, ok := in.cell[[2]string{d, c}]; ok {
					got = append(got, cell)
				}
			}
			if len(got) == 0 {
				b.WriteString(" — |")
				continue
			}
			paper := ""
			if p, ok := ftmlPaperCell(paperArch, d, c); ok {
				paper = fmt.Sprintf(" (%.1f)", p)
			}
			short := ""
			for _, cell := range got {
				if c != "clean" && cell.N < min(r.N, len(r.ds.Test)) {
					short, partial = fmt.Sprintf(" n=%d", cell.N), true
				}
			}
			if !multi {
				fmt.Fprintf(&b, " %.1f%s%s |", got[0].Accuracy, paper, short)
				continue
			}
			sc := FTMLSeedCell{Defense: d, Column: c}
			for _, cell := range got {
				sc.PerSeed = append(sc.PerSeed, cell.Accuracy)
				sc.Seeds = append(sc.Seeds, cell.Seed)
				sc.N = append(sc.N, cell.N)
			}
			sc.Across = metrics.AcrossSeeds(sc.PerSeed)
			seedCells = append(seedCells, sc)
			cover := ""
			if len(got) < len(insts) {
				cover = fmt.Sprintf(" (%d of %d seeds)", len(got), len(insts))
			}
			fmt.Fprintf(&b, " %s%s%s%s |", FormatAcross(sc.Across, 1), paper, short, cover)
		}
		b.WriteString("\n")
	}
	for _, in := range insts {
		if in.cert != nil {
			rep.Certified = in.cert
			fmt.Fprintf(&b, "\nIBP certified accuracy%s: %.1f %% on the clean column's %d examples (no combination of substitutions from the first 8 synonyms per word can change the prediction; boxes at ε = 1).\n",
				map[bool]string{true: fmt.Sprintf(" (seed %d)", in.seed)}[multi], in.cert.Accuracy, in.cert.N)
		}
	}
	if partial {
		fmt.Fprintf(&b, "\nn=k: the cell covers the first k of the %d examples so far (--first); a later pass extends it.\n", r.N)
	}
	rep.Claims = r.claims(insts)
	if multi {
		for _, c := range rep.Claims {
			rep.Checks = append(rep.Checks, c.Line())
		}
	} else {
		rep.Checks = FTMLChecks(insts[0].cells, r.Attacks, insts[0].kept)
	}
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
		"paper": FTMLPaperIMDB[paperArch], "checks": rep.Checks, "certified": rep.Certified,
		"seeds": r.seeds(), "train_seeds": trainSeedList(ftmlTrainSeed, r.seeds()), "claims": rep.Claims, "deviations": r.deviations()}
	if multi {
		js["seed_cells"] = seedCells
	}
	return rep, r.root.Publish(nil, rep.Markdown, js, false, false)
}

// FTMLSeedCell is a cell over the trained instances.
type FTMLSeedCell struct {
	Defense string `json:"defense"`
	Column  string `json:"column"`
	metrics.Across
	PerSeed []float64 `json:"per_seed"`
	Seeds   []int64   `json:"seed_offsets"`
	N       []int     `json:"n"`
}

// unionRows are the rows any instance shows, in the recipes' order, each
// with the recipe of the first instance that has it.
func unionRows(order []FTMLRecipe, insts []*ftmlInstance) ([]string, map[string]shownRecipe) {
	var rows []string
	shown := map[string]shownRecipe{}
	for _, rc := range order {
		for _, in := range insts {
			if s, ok := in.shown[rc.Defense]; ok {
				rows, shown[rc.Defense] = append(rows, rc.Defense), s
				break
			}
		}
	}
	return rows, shown
}

// ftmlPaperCell is the paper's value of a cell, if it has one.
func ftmlPaperCell(arch, def, col string) (float64, bool) {
	i, ok := map[string]int{"clean": 0, "pwws": 1, "ga": 2, "pso": 3, "hla": 4}[col]
	p, ok2 := FTMLPaperIMDB[arch][def]
	if !ok || !ok2 {
		return 0, false
	}
	return p[i], true
}

// keptByCell gives, for each attack cell whose results file exists, which
// of the cell's own examples (the first N of the seeded permutation: a
// file being extended by a later pass holds more) kept their label.
func (r *ftmlRun) keptByCell(cells []FTMLCell) (map[[2]string]map[int]bool, error) {
	var order []int
	kept := map[[2]string]map[int]bool{}
	for _, c := range cells {
		if c.Column == "clean" {
			if idx, _ := r.cleanIndices(); c.Correct != "" && len(c.Correct) == len(idx) && c.N == len(idx) {
				own := make(map[int]bool, len(idx))
				for k, i := range idx {
					own[i] = c.Correct[k] == '1'
				}
				kept[[2]string{c.Defense, c.Column}] = own
			}
			continue
		}
		if c.Column == "certified" {
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
