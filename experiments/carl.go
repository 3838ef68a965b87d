package experiments

import (
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/textarmor/textarmor/metrics"
	"github.com/textarmor/textarmor/pipeline"
)

// CARLRows are the table's rows (carl-rar.md §7): plain fine-tuning,
// FreeLB, CARL and RAR.
var CARLRows = []string{"plain", "freelb", "carl", "rar"}

// CARLDatasets are the spec §9 substitutes of the paper's columns: SST-2
// and AG News (a seeded split of its test set) themselves, IMDB for Yelp-P,
// TREC for Yahoo! Answers.
var CARLDatasets = []string{"sst2", "agnews", "imdb", "trec"}

// carlPaperColumn names the paper's column a dataset stands in for.
var carlPaperColumn = map[string]string{"sst2": "SST-2", "agnews": "AG's News", "imdb": "Yelp-P", "trec": "Yahoo! Answers"}

// CARLPaperAccuracy is Table 2 (%), by row and our dataset.
var CARLPaperAccuracy = map[string]map[string]float64{
	"plain":  {"sst2": 92.16, "trec": 73.93, "imdb": 93.55, "agnews": 89.90},
	"freelb": {"sst2": 93.23, "trec": 74.28, "imdb": 93.93, "agnews": 90.85},
	"carl":   {"sst2": 93.77, "trec": 74.65, "imdb": 94.55, "agnews": 92.05},
	"rar":    {"sst2": 93.73, "trec": 74.88, "imdb": 94.4, "agnews": 91.75},
}

// CARLPaperPGD is Table 5 (AG's News, accuracy % under k-PGD) and
// CARLPaperCosine Table 4's cosine, by row and ε.
var (
	CARLPaperPGD = map[string]map[float64]float64{
		"plain": {0.02: 86.6, 0.075: 72.6, 0.1: 70.2}, "freelb": {0.02: 88.8, 0.075: 80.25, 0.1: 78.0},
		"carl": {0.02: 90.0, 0.075: 81.4, 0.1: 80.1}, "rar": {0.02: 89.8, 0.075: 80.5, 0.1: 78.6}}
	CARLPaperCosine = map[string]map[float64]float64{
		"plain": {0.075: 0.871, 0.1: 0.851}, "freelb": {0.075: 0.918, 0.1: 0.899},
		"carl": {0.075: 0.934, 0.1: 0.917}, "rar": {0.075: 0.941, 0.1: 0.926}}
)

// CARLTable configures Tables 2, 4 and 5 of the CARL/RAR paper at the scale
// of spec §9: all-MiniLM-L6-v2 fine-tuned on a seeded subset of each
// dataset's training split, every row on the same examples, then clean
// accuracy, k-PGD accuracy and the clean-to-adversarial distance of the
// sentence vectors on one seeded test sample.
type CARLTable struct {
	// Data holds the data folder and loading options; each dataset sets
	// its preset.
	Data     pipeline.Data
	Datasets []string
	Rows     []string
	// Train is every row's configuration but its defense (spec §4 and
	// §10 item 9: Adam at 1e-5, linear decay to 0, no warm-up or weight
	// decay, clip 1, 5 epochs, batch 32 (AG News 16), pooled [CLS]).
	Train pipeline.TrainConfig
	// TestN examples of a seed-0 sample of each test split are measured.
	TestN int
	// Eps is k-PGD's ε grid (Table 5; Table 4 uses 0.075 and 0.1).
	Eps []float64
	// WordAttacks are word-level recipes run on WordN examples of a seed-0
	// sample of each test split (the paper reports none).
	WordAttacks []string
	WordN       int
	Out         string
	// ReportOnly makes Run print the table from the cells already there,
	// computing and writing nothing (ReportCARLTable).
	ReportOnly bool
	Log        io.Writer
}

// NewCARLTable returns the table at spec §9's scale over the data in dir.
func NewCARLTable(dir string) CARLTable {
	d := pipeline.NewData()
	d.Dir = dir
	tc := pipeline.NewTrainConfig()
	tc.Net.Arch, tc.FineTune.Init, tc.FineTune.Pool = "transformer", filepath.Join(dir, "models", "all-MiniLM-L6-v2"), "pooler"
	tc.Options.Epochs, tc.Options.BatchSize, tc.Options.LR, tc.Options.Optimizer = 5, 32, 1e-5, "adam"
	tc.Options.Schedule, tc.Options.Warmup, tc.Options.WeightDecay, tc.Options.Clip = "linear", 0, 0, 1
	tc.Data.MaxLen = 64
	tc.TrainSubset, tc.TrainN = true, 2000
	tc.NoTest = true // the cells measure the seeded test sample themselves
	return CARLTable{Data: d, Datasets: CARLDatasets, Rows: CARLRows, Train: tc, TestN: 1000,
		Eps: []float64{0.02, 0.075, 0.1}, WordAttacks: []string{"pwws", "textfooler"}, WordN: 100, Out: "carl-table"}
}

// carlCell is a row's measurements on one dataset.
type carlCell struct {
	DevAccuracy float64 `json:"dev_accuracy"` // %, the kept epoch's
	// PGD holds k-PGD's report per ε (with each example's outcome, for the
	// paired comparisons).
	PGD  map[string]*pipeline.EmbeddingAttackReport `json:"pgd"`
	Word map[string]carlWordCell                    `json:"word,omitempty"`
	// Spread is the clean sentence vectors' spread on the same examples,
	// which Table 4's distances are read against.
	Spread *carlSpread `json:"spread,omitempty"`
}

type carlSpread struct {
	PairCosine   float64 `json:"pair_cosine"`
	PairDistance float64 `json:"pair_distance"`
}

type carlWordCell struct {
	N                   int     `json:"n"`
	OriginalAccuracy    float64 `json:"original_accuracy"`
	AccuracyUnderAttack float64 `json:"accuracy_under_attack"`
}

// CARLReport is the table as it stands.
type CARLReport struct {
	Markdown string
	Checks   []string
	// Claims are the checks as structured claims (table.json's "claims",
	// read by the reproduction report).
	Claims []Claim
}

func (c CARLTable) check() error {
	for _, r := range c.Rows {
		if !slices.Contains(CARLRows, r) {
			return configErrorf("--rows: %q: want %s", r, strings.Join(CARLRows, ", "))
		}
	}
	for _, d := range c.Datasets {
		if !slices.Contains(CARLDatasets, d) {
			return configErrorf("--datasets: %q: want %s", d, strings.Join(CARLDatasets, ", "))
		}
	}
	for _, e := range c.Eps {
		if math.IsNaN(e) || e <= 0 {
			return configErrorf("--eps %g: each ε must be positive", e)
		}
	}
	return pipeline.CheckRules(pipeline.Rule{OK: c.TestN >= 1, Flag: "test-n", Val: c.TestN, Want: "at least 1"},
		pipeline.Rule{OK: c.WordN >= 0, Flag: "word-n", Val: c.WordN, Want: "≥ 0 (0 = no word-level attacks)"})
}

// RunCARLTable trains the rows (resuming what a previous run left),
// measures them and returns the table (also written to table.md and
// table.json).
func RunCARLTable(ctx context.Context, c CARLTable) (*CARLReport, error) {
	if c.ReportOnly {
		return ReportCARLTable(c)
	}
	if err := c.check(); err != nil {
		return nil, err
	}
	t := &Table{Dir: c.Out, Log: c.Log, Name: "carl-table"}
	for _, ds := range c.Datasets {
		for _, row := range c.Rows {
			name := ds + "-" + row
			if err := t.WithRow(name, func() error { return c.row(ctx, t, ds, row) }); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
		}
	}
	return c.report(t, true)
}

// rowConfig is a row's training configuration on dataset ds.
func (c CARLTable) rowConfig(ds, row string) pipeline.TrainConfig {
	tc := c.Train
	tc.Data = c.Data
	tc.Data.Preset, tc.Data.MaxLen = ds, c.Train.Data.MaxLen
	if ds == "agnews" && tc.Options.BatchSize == 32 {
		tc.Options.BatchSize = 16 // spec §4
	}
	tc.Defense.Name = map[string]string{"plain": "standard"}[row]
	if tc.Defense.Name == "" {
		tc.Defense.Name = row
	}
	return tc
}

// carlIdentity is identity with the fine-tuning settings the FTML and FLAT
// rows do not have.
func carlIdentity(tc pipeline.TrainConfig) (map[string]any, error) {
	v, err := identity(tc)
	if err != nil {
		return nil, err
	}
	o := tc.Options
	v["fine_tune"] = fmt.Sprintf("%s pool %s dropout %g freeze %v", filepath.Base(tc.FineTune.Init), tc.FineTune.Pool, tc.FineTune.Dropout, tc.FineTune.FreezeEncoder)
	v["schedule"] = fmt.Sprintf("%s warmup %g", o.Schedule, o.Warmup)
	v["freelb_row"], v["max_len"], v["dataset"] = tc.Defense.FreeLBRow, float64(tc.Data.MaxLen), tc.Data.Preset
	return v, nil
}

// row trains one row unless it is there, then takes the measurements its
// cell lacks, writing the cell after each.
func (c CARLTable) row(ctx context.Context, t *Table, ds, row string) error {
	name := ds + "-" + row
	tc := c.rowConfig(ds, row)
	want, err := carlIdentity(tc)
	if err != nil {
		return err
	}
	dir := t.Path(name, "model")
	var rec rowRecord
	if ok, err := t.ReadJSON(name, "trained.json", &rec); err != nil {
		return err
	} else if ok {
		if d := differs(rec.Identity, want); d != "" {
			return fmt.Errorf("%s: %s; remove %s to retrain", t.Path(name, "trained.json"), d, t.RowDir(name))
		}
	} else {
		tc.Options.Out, tc.Options.Resume, tc.Options.LogPath, tc.Log = dir, true, t.Path(name, "train.log.jsonl"), c.Log
		t.logf("%s: training", name)
		rep, err := pipeline.Train(ctx, tc)
		if err != nil {
			return err
		}
		if err := t.WriteJSON(name, "trained.json", rowRecord{Identity: want}); err != nil {
			return err
		}
		var cell carlCell
		cell.DevAccuracy = 100 * rep.Result.BestDevAcc
		if err := t.WriteJSON(name, "cell.json", cell); err != nil {
			return err
		}
	}
	var cell carlCell
	if _, err := t.ReadJSON(name, "cell.json", &cell); err != nil {
		return err
	}
	if cell.PGD == nil {
		cell.PGD = map[string]*pipeline.EmbeddingAttackReport{}
	}
	if cell.Word == nil {
		cell.Word = map[string]carlWordCell{}
	}
	data := c.Data
	data.Preset, data.MaxLen = ds, c.Train.Data.MaxLen
	for _, eps := range c.Eps {
		key := fmt.Sprint(eps)
		if cell.PGD[key] != nil {
			continue
		}
		a := pipeline.NewEmbeddingAttackConfig()
		a.Model, a.Data, a.N, a.Eps, a.KeepExamples = dir, data, c.TestN, eps, true
		r, err := pipeline.EmbeddingAttack(ctx, a)
		if err != nil {
			return err
		}
		cell.PGD[key] = r
		if cell.Spread == nil {
			cell.Spread = &carlSpread{r.PairCosine, r.PairDistance}
		}
		t.logf("%s: k-PGD ε %g: accuracy %.2f%% clean, %.2f%% under attack; cosine %.3f", name, eps, 100*r.Clean, 100*r.UnderAttack, r.Cosine)
		if err := t.WriteJSON(name, "cell.json", cell); err != nil {
			return err
		}
	}
	if cell.Spread == nil { // a cell measured before the spread was: one pass at ε 0
		a := pipeline.NewEmbeddingAttackConfig()
		a.Model, a.Data, a.N, a.Eps, a.Steps = dir, data, c.TestN, 0, 1
		r, err := pipeline.EmbeddingAttack(ctx, a)
		if err != nil {
			return err
		}
		cell.Spread = &carlSpread{r.PairCosine, r.PairDistance}
		t.logf("%s: clean vectors' spread: pair cosine %.3f, pair distance %.3f", name, r.PairCosine, r.PairDistance)
		if err := t.WriteJSON(name, "cell.json", cell); err != nil {
			return err
		}
	}
	if c.WordN == 0 {
		return nil
	}
	for _, recipe := range c.WordAttacks {
		if _, ok := cell.Word[recipe]; ok {
			continue
		}
		ac := pipeline.NewAttackConfig()
		ac.Model, ac.Data, ac.Recipe, ac.N, ac.Shuffle = dir, data, recipe, c.WordN, true
		ac.CSV, ac.Resume, ac.Log = t.Path(name, recipe+".csv"), true, io.Discard
		rep, err := pipeline.Attack(ctx, ac)
		if err != nil {
			return err
		}
		s := rep.Summary
		cell.Word[recipe] = carlWordCell{N: s.N, OriginalAccuracy: 100 * s.OriginalAccuracy, AccuracyUnderAttack: 100 * s.AccuracyUnderAttack}
		t.logf("%s: %s: accuracy %.1f%% → %.1f%%", name, recipe, 100*s.OriginalAccuracy, 100*s.AccuracyUnderAttack)
		if err := t.WriteJSON(name, "cell.json", cell); err != nil {
			return err
		}
	}
	return nil
}

// ReportCARLTable reads the table from the cells there, computing nothing.
func ReportCARLTable(c CARLTable) (*CARLReport, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	return c.report(&Table{Dir: c.Out, Name: "carl-table"}, false)
}

func (c CARLTable) report(t *Table, write bool) (*CARLReport, error) {
	rep := &CARLReport{}
	cells := map[string]map[string]carlCell{} // dataset → row → cell
	// The sizes the cells were made with (the flags of a --report run may
	// differ).
	trainN, testN := map[any]bool{}, map[int]bool{}
	for _, ds := range c.Datasets {
		cells[ds] = map[string]carlCell{}
		for _, row := range CARLRows {
			var cell carlCell
			if ok, err := t.ReadJSON(ds+"-"+row, "cell.json", &cell); err != nil {
				return nil, err
			} else if ok {
				cells[ds][row] = cell
				if r := cell.first(c.Eps); r != nil {
					testN[r.N] = true
				}
			}
			var rec rowRecord
			if ok, err := t.ReadJSON(ds+"-"+row, "trained.json", &rec); err != nil {
				return nil, err
			} else if ok {
				trainN[rec.Identity["train_n"]] = true
			}
		}
	}
	var b strings.Builder
	b.WriteString("# CARL and RAR: Tables 2, 5 and 4 — scaled (carl-rar.md §9)\n\n")
	fmt.Fprintf(&b, "all-MiniLM-L6-v2 fine-tuned on a seeded %s training examples per dataset; every number on the same seed-0 sample of %s test examples per dataset, ± its binomial SE (accuracy) or SE of the mean (distances). In brackets the paper's value for the column it stands in for (ALBERT-base-v2, full data). CARL's model is the best on dev among the epochs that end with L_D on.\n\n", setList(trainN), setList(testN))
	b.WriteString("## Table 2: clean accuracy (%)\n\n| row |")
	for _, ds := range c.Datasets {
		fmt.Fprintf(&b, " %s (%s) |", ds, carlPaperColumn[ds])
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(c.Datasets)) + "\n")
	for _, row := range CARLRows {
		fmt.Fprintf(&b, "| %s |", row)
		for _, ds := range c.Datasets {
			cell, ok := cells[ds][row]
			r := cell.first(c.Eps)
			if !ok || r == nil {
				b.WriteString(" — |")
				continue
			}
			fmt.Fprintf(&b, " %.2f ± %.2f (%.2f) |", 100*r.Clean, 100*metrics.BinomialSE(r.Clean, r.N), CARLPaperAccuracy[row][ds])
		}
		b.WriteString("\n")
	}
	for _, ds := range c.Datasets {
		fmt.Fprintf(&b, "\n## %s: Table 5, accuracy (%%) under k-PGD, and Table 4, the sentence vectors' distance\n\n", ds)
		b.WriteString("| row |")
		for _, e := range c.Eps {
			fmt.Fprintf(&b, " ε %g |", e)
		}
		for _, e := range c.Eps {
			fmt.Fprintf(&b, " cosine, %g | Euclidean, %g |", e, e)
		}
		b.WriteString(" clean spread: pair cosine / distance | " + strings.Join(c.WordAttacks, " | ") + " |\n|---|" + strings.Repeat("---|", 3*len(c.Eps)+1+len(c.WordAttacks)) + "\n")
		for _, row := range CARLRows {
			cell, ok := cells[ds][row]
			if !ok {
				continue
			}
			fmt.Fprintf(&b, "| %s |", row)
			paper := ds == "agnews"
			for _, e := range c.Eps {
				r := cell.PGD[fmt.Sprint(e)]
				if r == nil {
					b.WriteString(" — |")
					continue
				}
				fmt.Fprintf(&b, " %.2f ± %.2f%s |", 100*r.UnderAttack, 100*metrics.BinomialSE(r.UnderAttack, r.N), carlPaperNote(paper, CARLPaperPGD[row], e, "%.2f"))
			}
			for _, e := range c.Eps {
				r := cell.PGD[fmt.Sprint(e)]
				if r == nil {
					b.WriteString(" — | — |")
					continue
				}
				fmt.Fprintf(&b, " %.3f ± %.3f%s | %.3f ± %.3f |", r.Cosine, r.CosineSE, carlPaperNote(paper, CARLPaperCosine[row], e, "%.3f"), r.Euclidean, r.EuclideanSE)
			}
			if cell.Spread != nil {
				fmt.Fprintf(&b, " %.3f / %.3f |", cell.Spread.PairCosine, cell.Spread.PairDistance)
			} else {
				b.WriteString(" — |")
			}
			for _, w := range c.WordAttacks {
				if wc, ok := cell.Word[w]; ok {
					fmt.Fprintf(&b, " %.1f → %.1f (n %d) |", wc.OriginalAccuracy, wc.AccuracyUnderAttack, wc.N)
				} else {
					b.WriteString(" — |")
				}
			}
			b.WriteString("\n")
		}
	}
	claims := carlChecks(c, cells)
	rep.Checks, rep.Claims = nil, claims
	for _, cl := range claims {
		rep.Checks = append(rep.Checks, carlCheckLine(cl))
	}
	if len(rep.Checks) > 0 {
		b.WriteString("\n## The issue's orderings (paired over the same examples; a claim holds only beyond two SE, otherwise tie or fails)\n\n")
		for _, ch := range rep.Checks {
			b.WriteString("- " + ch + "\n")
		}
	}
	rep.Markdown = b.String()
	if !write {
		return rep, nil
	}
	return rep, t.Publish(nil, rep.Markdown, map[string]any{"checks": rep.Checks, "claims": rep.Claims, "cells": cells}, false, false)
}

// first is the cell's report at the grid's first measured ε (every one
// holds the same clean outcomes).
func (cell carlCell) first(eps []float64) *pipeline.EmbeddingAttackReport {
	for _, e := range eps {
		if r := cell.PGD[fmt.Sprint(e)]; r != nil {
			return r
		}
	}
	return nil
}

func carlPaperNote(show bool, vals map[float64]float64, e float64, format string) string {
	v, ok := vals[e]
	if !show || !ok {
		return ""
	}
	return " (" + fmt.Sprintf(format, v) + ")"
}

// carlTableName labels the table's claims in the reproduction report.
const carlTableName = "Tables 2, 4 and 5"

// carlCheckLine is a claim as the table prints it: "ds: what a > b:
// +d ± se: verdict", in the claim's units.
func carlCheckLine(cl Claim) string {
	prec := 3
	if strings.Contains(cl.Claim, "(points)") {
		prec = 1
	}
	return fmt.Sprintf("%s: %+.*f ± %.*f: %s", cl.Claim, prec, cl.Difference.Mean, prec, cl.Difference.SE, cl.Verdict)
}

// carlChecks states issue #43's orderings, each a paired comparison of two
// rows on the same test examples (one trained instance per row: the SE is
// the examples' paired SE, metrics.Crossed with one seed).
func carlChecks(c CARLTable, cells map[string]map[string]carlCell) []Claim {
	var out []Claim
	series := func(ds, row string, eps float64, pick func(carlCell, pipeline.EmbeddingExample) float64) ([]float64, bool) {
		cell, ok := cells[ds][row]
		if !ok {
			return nil, false
		}
		r := cell.PGD[fmt.Sprint(eps)]
		if eps == 0 {
			r = cell.first(c.Eps)
		}
		if r == nil || len(r.Examples) == 0 {
			return nil, false
		}
		v := make([]float64, len(r.Examples))
		for i, e := range r.Examples {
			v[i] = pick(cell, e)
		}
		return v, true
	}
	clean := func(_ carlCell, e pipeline.EmbeddingExample) float64 { return b2f(e.Clean) }
	attacked := func(_ carlCell, e pipeline.EmbeddingExample) float64 { return b2f(e.Attacked) }
	cosine := func(_ carlCell, e pipeline.EmbeddingExample) float64 { return e.Cosine }
	negEuclid := func(_ carlCell, e pipeline.EmbeddingExample) float64 { return -e.Euclidean }
	// The distance in units of the model's clean spread (NaN without one,
	// which no claim is made from).
	negRelEuclid := func(c carlCell, e pipeline.EmbeddingExample) float64 {
		if c.Spread == nil || c.Spread.PairDistance <= 0 {
			return math.NaN()
		}
		return -e.Euclidean / c.Spread.PairDistance
	}
	claim := func(ds, what string, eps float64, a, b string, pick func(carlCell, pipeline.EmbeddingExample) float64, scale float64) (Claim, bool) {
		x, ok1 := series(ds, a, eps, pick)
		y, ok2 := series(ds, b, eps, pick)
		if !ok1 || !ok2 || len(x) != len(y) {
			return Claim{}, false
		}
		diffs := make([]float64, len(x))
		var mx, my float64
		for i := range x {
			diffs[i] = x[i] - y[i]
			mx, my = mx+x[i], my+y[i]
		}
		est := metrics.Crossed([][]float64{diffs})
		if math.IsNaN(est.Mean) || math.IsNaN(est.SE) {
			return Claim{}, false
		}
		prec := 3 - int(math.Log10(scale))
		n := float64(len(x))
		ours := fmt.Sprintf("%s %.*f, %s %.*f", a, prec, scale*mx/n, b, prec, scale*my/n)
		return newClaim(Claim{Paper: "CARL/RAR", Table: carlTableName}, fmt.Sprintf("%s: %s %s > %s", ds, what, a, b), "", ours,
			scaled(est, scale), true), true
	}
	add := func(cl Claim, ok bool) {
		if ok {
			out = append(out, cl)
		}
	}
	for _, ds := range c.Datasets {
		add(claim(ds, "clean accuracy (points)", 0, "freelb", "plain", clean, 100))
		for _, r := range []string{"carl", "rar"} {
			add(claim(ds, "clean accuracy (points)", 0, r, "freelb", clean, 100))
		}
		for _, e := range c.Eps {
			what := fmt.Sprintf("k-PGD ε %g accuracy (points)", e)
			add(claim(ds, what, e, "freelb", "plain", attacked, 100))
			add(claim(ds, what, e, "carl", "freelb", attacked, 100))
			add(claim(ds, what, e, "rar", "freelb", attacked, 100))
		}
		for _, e := range []float64{0.075, 0.1} {
			if !slices.Contains(c.Eps, e) {
				continue
			}
			for _, pair := range [][2]string{{"freelb", "plain"}, {"carl", "freelb"}, {"rar", "freelb"}} {
				add(claim(ds, fmt.Sprintf("cosine at ε %g", e), e, pair[0], pair[1], cosine, 1))
				add(claim(ds, fmt.Sprintf("−Euclidean at ε %g", e), e, pair[0], pair[1], negEuclid, 1))
				add(claim(ds, fmt.Sprintf("−Euclidean ÷ clean pair distance at ε %g", e), e, pair[0], pair[1], negRelEuclid, 1))
			}
		}
	}
	return out
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// setList writes a set's members in order, joined by " / ".
func setList[K comparable](set map[K]bool) string {
	var out []string
	for k := range set {
		out = append(out, fmt.Sprint(k))
	}
	slices.Sort(out)
	if len(out) == 0 {
		return "—"
	}
	return strings.Join(out, " / ")
}
