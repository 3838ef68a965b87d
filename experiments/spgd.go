package experiments

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/textarmor/textarmor/defense"
	"github.com/textarmor/textarmor/metrics"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/pipeline"
)

// SPGD's printed values (spgd.md §7): Table 3's test accuracy per row and
// Table 1's perplexity gap per method.
var (
	SPGDPaperAccuracy = map[string]float64{"random": 89.83, "lm": 92.69, "advt": 93.58, "iadvt": 93.58, "spgd": 93.54}
	SPGDPaperGap      = map[string]float64{"advt": 4.60, "iadvt": 5.93, "spgd": 1.09}
)

// SPGDRows are the table's rows: a randomly initialised classifier, the
// LM-initialised one, and the LM-initialised one trained with each
// embedding-space method.
var SPGDRows = []string{"random", "lm", "advt", "iadvt", "spgd"}

// SPGDTable configures SPGD's Tables 1 and 3 (spgd.md §7) at the scale of
// its §10: a word-level LSTM language model on the training texts, then
// the rows' classifiers, their test accuracy, and each adversarial row's
// perplexity gap under the language model.
type SPGDTable struct {
	// Data is the task (spec: IMDB); its dev split validates the LM and
	// selects the classifiers' epochs.
	Data pipeline.Data
	// LM is the language model's configuration (its data and output are
	// the table's).
	LM pipeline.TrainLSTMLMConfig
	// Train is every classifier's configuration but the row's own: the
	// spec's classifier (LSTM, final state, a 30-unit ReLU layer, dropout
	// 0.5 on the embeddings and before the output, clip 4).
	Train pipeline.TrainConfig
	// Eps are the rows' ε (spec §10: re-tuned for the scale; default the
	// paper's ratio 5 : 15 : 25 scaled by 0.1).
	Eps map[string]float64
	// Grid, when set, trains each adversarial row at every ε of it (rows
	// "spgd@2.5", ...) and the table takes, per method, the one with the
	// best dev accuracy (spec §10's tuning; its grid is 0.5, 1, 2.5, 5,
	// 10, 25).
	Grid []float64
	Rows []string
	// PPLN test texts of a seed-0 sample judge the perturbations.
	PPLN int
	Out  string
	// ReportOnly makes Run print the table from the cells already there,
	// computing and writing nothing (ReportSPGDTable).
	ReportOnly bool
	Log        io.Writer
}

// NewSPGDTable returns the table at the spec's §10 scale on IMDB.
func NewSPGDTable() SPGDTable {
	d := pipeline.NewData()
	d.Preset = "imdb"
	lm := pipeline.NewTrainLSTMLMConfig()
	tc := pipeline.NewTrainConfig()
	tc.Net.Arch, tc.Net.Pool, tc.Net.HeadHidden, tc.Net.Dropout, tc.Net.EmbedDropout = "lstm", "last", 30, 0.5, 0.5
	tc.Net.EmbedDim, tc.Net.Hidden, tc.Net.EmbedInit = lm.Model.EmbedDim, lm.Model.Hidden, 1
	tc.Options.Epochs, tc.Options.BatchSize, tc.Options.Clip = 3, 32, 4
	tc.Data.MaxLen = lm.MaxLen
	return SPGDTable{Data: d, LM: lm, Train: tc, Eps: map[string]float64{"advt": 0.5, "iadvt": 1.5, "spgd": 2.5},
		Rows: SPGDRows, PPLN: 1000, Out: "spgd-table"}
}

// SPGDReport is the table as it stands.
type SPGDReport struct {
	Markdown string
	Accuracy map[string]float64 // test accuracy (%) per row
	Gap      map[string]float64 // perplexity gap per adversarial row
	Checks   []string
	// Claims are the checks as structured claims (table.json's "claims",
	// read by the reproduction report).
	Claims []Claim
}

// spgdCell is a row's result file.
type spgdCell struct {
	Accuracy    float64 `json:"accuracy"` // %
	N           int     `json:"n"`
	DevAccuracy float64 `json:"dev_accuracy"` // %, for the ε grid's choice
	// Correct is each test example's result ('1' right, '0' wrong, in the
	// test split's order), so that rows compare paired example by example;
	// absent in older cells.
	Correct string `json:"correct,omitempty"`
	*pipeline.PerturbationPerplexityReport
}

// RunSPGDTable trains the language model and the rows (resuming what a
// previous run left), measures them and returns the table (also written
// to table.md and table.json).
func RunSPGDTable(ctx context.Context, c SPGDTable) (*SPGDReport, error) {
	if c.ReportOnly {
		return ReportSPGDTable(c)
	}
	for _, r := range c.Rows {
		if !contains(SPGDRows, r) {
			return nil, configErrorf("--rows: %q: want %s", r, strings.Join(SPGDRows, ", "))
		}
	}
	t := &Table{Dir: c.Out, Log: c.Log, Name: "spgd-table"}
	lmDir := t.Path("language-model", "model")
	if err := t.WithRow("language-model", func() error {
		if fileExists(lmDir) {
			return nil
		}
		lc := c.LM
		lc.Data, lc.Log = c.Data, c.Log
		lc.Options.Out, lc.Options.Resume = lmDir, true
		_, err := pipeline.TrainLSTMLM(ctx, lc)
		return err
	}); err != nil {
		return nil, err
	}
	for _, row := range c.trainedRows() {
		if err := t.WithRow(rowDir(row), func() error { return c.row(ctx, t, row, lmDir) }); err != nil {
			return nil, fmt.Errorf("%s: %w", row, err)
		}
	}
	return c.report(t, true)
}

// trainedRows are the rows to train: Rows, each adversarial one at every
// ε of Grid when there is one ("spgd@2.5").
func (c SPGDTable) trainedRows() []string {
	var out []string
	for _, r := range c.Rows {
		if len(c.Grid) == 0 || r == "random" || r == "lm" {
			out = append(out, r)
			continue
		}
		for _, e := range c.Grid {
			out = append(out, fmt.Sprintf("%s@%g", r, e))
		}
	}
	return out
}

// rowDir is a row's folder name ("spgd@2.5" → "spgd-eps-2.5").
func rowDir(row string) string { return strings.ReplaceAll(row, "@", "-eps-") }

// splitRow splits "spgd@2.5" into the method and ε (0 without one).
func splitRow(row string) (string, float64) {
	m, e, ok := strings.Cut(row, "@")
	if !ok {
		return row, 0
	}
	var eps float64
	fmt.Sscan(e, &eps)
	return m, eps
}

// rowConfig is a row's training configuration.
func (c SPGDTable) rowConfig(row, lmDir string) pipeline.TrainConfig {
	row, gridEps := splitRow(row)
	tc := c.Train
	tc.Data = c.Data
	tc.Data.MaxLen = c.Train.Data.MaxLen
	if row != "random" {
		tc.InitLM = lmDir
	} else {
		tc.Data.MinCount, tc.Data.MaxVocab = c.LM.MinCount, c.LM.MaxVocab // the LM's vocabulary rule
	}
	if row != "random" && row != "lm" {
		tc.Defense.Name = row
		s := &tc.Defense.Settings
		cfg := map[string]*defense.AdvTextConfig{"advt": &s.AdvT, "iadvt": &s.IAdvT, "spgd": &s.SPGD}[row]
		if e, ok := c.Eps[row]; ok {
			cfg.Eps = e
		}
		if gridEps > 0 {
			cfg.Eps = gridEps
		}
	}
	return tc
}

// row trains one row's classifier unless it is there, then measures it.
func (c SPGDTable) row(ctx context.Context, t *Table, name, lmDir string) error {
	tc, row := c.rowConfig(name, lmDir), rowDir(name)
	want, err := identity(tc)
	if err != nil {
		return err
	}
	dir := t.Path(row, "model")
	var rec rowRecord
	if ok, err := t.ReadJSON(row, "trained.json", &rec); err != nil {
		return err
	} else if ok {
		if d := differs(rec.Identity, want); d != "" {
			return fmt.Errorf("%s: %s; remove %s to retrain", t.Path(row, "trained.json"), d, t.RowDir(row))
		}
	} else {
		tc.Options.Out, tc.Options.Resume, tc.Options.LogPath, tc.Log = dir, true, t.Path(row, "train.log.jsonl"), c.Log
		t.logf("%s: training", row)
		if _, err := pipeline.Train(ctx, tc); err != nil {
			return err
		}
		if err := t.WriteJSON(row, "trained.json", rowRecord{Identity: want}); err != nil {
			return err
		}
	}
	var cell spgdCell
	if ok, err := t.ReadJSON(row, "cell.json", &cell); err != nil || ok {
		return err
	}
	m, err := model.Load(dir)
	if err != nil {
		return err
	}
	ds, _, err := c.Data.Load()
	if err != nil {
		return err
	}
	rep, correct, err := pipeline.EvaluateEach(m, ds.Test, ds.Classes)
	if err != nil {
		return err
	}
	cell.Accuracy, cell.N, cell.Correct = 100*rep.Accuracy, rep.N, correctString(correct)
	if len(ds.Dev) > 0 {
		dev, err := pipeline.Evaluate(m, ds.Dev, ds.Classes)
		if err != nil {
			return err
		}
		cell.DevAccuracy = 100 * dev.Accuracy
	}
	if row != "random" && row != "lm" {
		p := pipeline.NewPerturbationPerplexityConfig()
		p.Model, p.LM, p.Data, p.N = dir, lmDir, c.Data, c.PPLN
		p.Data.MaxLen = c.Train.Data.MaxLen
		if cell.PerturbationPerplexityReport, err = pipeline.PerturbationPerplexity(ctx, p); err != nil {
			return err
		}
	}
	t.logf("%s: test accuracy %.2f%%", row, cell.Accuracy)
	return t.WriteJSON(row, "cell.json", cell)
}

// ReportSPGDTable reads the table from the cells there, computing nothing.
func ReportSPGDTable(c SPGDTable) (*SPGDReport, error) {
	return c.report(&Table{Dir: c.Out, Name: "spgd-table"}, false)
}

func (c SPGDTable) report(t *Table, write bool) (*SPGDReport, error) {
	rep := &SPGDReport{Accuracy: map[string]float64{}, Gap: map[string]float64{}}
	// cells holds each table row's cell: a grid's best-on-dev ε for a
	// method trained on one (the grid's rows are listed below the table).
	cells, grid := map[string]spgdCell{}, map[string]spgdCell{}
	shown := slices.Clone(SPGDRows)
	if len(c.Grid) > 0 {
		shown = append(shown, c.trainedRows()...)
	}
	for _, name := range shown {
		var cell spgdCell
		if ok, err := t.ReadJSON(rowDir(name), "cell.json", &cell); err != nil {
			return nil, err
		} else if !ok {
			continue
		}
		method, eps := splitRow(name)
		if eps == 0 {
			cells[method] = cell
			continue
		}
		grid[name] = cell
		if best, ok := cells[method]; !ok || cell.DevAccuracy > best.DevAccuracy {
			cells[method] = cell
		}
	}
	for row, cell := range cells {
		rep.Accuracy[row] = cell.Accuracy
		if cell.PerturbationPerplexityReport != nil {
			rep.Gap[row] = cell.Gap
		}
	}
	var b strings.Builder
	b.WriteString("# SPGD Tables 3 and 1 — scaled (spgd.md §10)\n\n")
	b.WriteString("Table 3: test accuracy (%) on the whole test set; in brackets the paper's. Table 1: the language model's per-word perplexity of 1,000 seeded test texts, clean and with each method's perturbation added to its input embeddings (token-weighted), and the gap; SPGD's discretised text (each moved word replaced by its neighbour) is a secondary measure.\n\n")
	b.WriteString("| row | ε | test accuracy | perplexity, perturbed | clean | gap (paper) | words moved | SPGD discretised |\n|---|---|---|---|---|---|---|---|\n")
	for _, row := range SPGDRows {
		cell, ok := cells[row]
		if !ok {
			fmt.Fprintf(&b, "| %s | | — | | | | | |\n", row)
			continue
		}
		b.WriteString(spgdLine(row, row, cell))
	}
	if len(grid) > 0 {
		b.WriteString("\nThe ε grid (the table takes each method's best dev accuracy):\n\n| row | dev accuracy | test accuracy | gap |\n|---|---|---|---|\n")
		for _, name := range c.trainedRows() {
			if cell, ok := grid[name]; ok {
				mark := ""
				if m, _ := splitRow(name); cells[m].PerturbationPerplexityReport == cell.PerturbationPerplexityReport {
					mark = " *"
				}
				fmt.Fprintf(&b, "| %s%s | %.2f | %.2f | %+.2f |\n", name, mark, cell.DevAccuracy, cell.Accuracy, cell.Gap)
			}
		}
	}
	rep.Checks, rep.Claims = spgdChecks(cells)
	if len(rep.Checks) > 0 {
		b.WriteString("\n")
		for _, ch := range rep.Checks {
			b.WriteString("- " + ch + "\n")
		}
	}
	rep.Markdown = b.String()
	if !write {
		return rep, nil
	}
	return rep, t.Publish(nil, rep.Markdown, map[string]any{"accuracy": rep.Accuracy, "gap": rep.Gap, "checks": rep.Checks, "claims": rep.Claims, "cells": cells, "grid": grid}, false, false)
}

// spgdLine is a row of the table.
func spgdLine(label, row string, cell spgdCell) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| %s |", label)
	p := cell.PerturbationPerplexityReport
	if p != nil {
		fmt.Fprintf(&b, " %g |", p.Settings.Eps)
	} else {
		b.WriteString(" |")
	}
	fmt.Fprintf(&b, " %.2f ± %.2f (%.2f) |", cell.Accuracy, 100*metrics.BinomialSE(cell.Accuracy/100, cell.N), SPGDPaperAccuracy[row])
	if p == nil {
		b.WriteString(" | | | | |\n")
		return b.String()
	}
	disc := ""
	if p.Discretized > 0 {
		disc = fmt.Sprintf("%.2f", p.Discretized)
	}
	fmt.Fprintf(&b, " %.2f | %.2f | %+.2f (%.2f) | %.1f %% | %s |\n", p.Perturbed, p.Clean, p.Gap, SPGDPaperGap[row], 100*p.Moved, disc)
	return b.String()
}

// spgdTableName labels the table's claims in the reproduction report.
const spgdTableName = "Tables 3 and 1, IMDB"

// spgdChecks states issue #42's orderings on the cells there, each
// difference with its (unpaired, binomial) standard error, as the table's
// lines and as structured claims (one trained instance per row).
func spgdChecks(cells map[string]spgdCell) (lines []string, claims []Claim) {
	acc := func(r string) (float64, float64, bool) {
		c, ok := cells[r]
		return c.Accuracy, 100 * metrics.BinomialSE(c.Accuracy/100, c.N), ok
	}
	// diffSE is the SE of two rows' accuracy difference: paired over the
	// test examples when both cells hold their per-example results, else
	// from the two binomial SEs.
	diffSE := func(a, b string, sa, sb float64) (se float64, unit string, paired int) {
		ca, cb := cells[a].Correct, cells[b].Correct
		if ca == "" || len(ca) != len(cb) {
			return math.Hypot(sa, sb), "SE", 0
		}
		var sum, sumSq float64
		for k := range len(ca) {
			d := b2f(ca[k] == '1') - b2f(cb[k] == '1')
			sum, sumSq = sum+d, sumSq+d*d
		}
		return 100 * math.Sqrt(metrics.MeanVariance(sum, sumSq, len(ca))), "paired SE", len(ca)
	}
	// add records a claim whose margin (positive: the claim's way) has the
	// given SE; verdict is the table's own (an ordering, a bound, or a
	// comparison without SE).
	// paired is the number of examples a paired SE came from (0: none).
	add := func(line, claim, paper, ours string, margin, se float64, verdict string, paired int) {
		lines = append(lines, line)
		d := metrics.FromSeeds([]float64{margin}, []float64{se})
		d.N = paired
		claims = append(claims, Claim{Paper: "SPGD", Table: spgdTableName, Claim: claim, PaperValue: paper, Ours: ours,
			Difference: d, Paired: paired > 0, Verdict: verdict})
	}
	paper := func(rows ...string) string {
		var parts []string
		for _, r := range rows {
			if v, ok := SPGDPaperAccuracy[r]; ok {
				parts = append(parts, fmt.Sprintf("%s %.2f", r, v))
			}
		}
		return strings.Join(parts, ", ")
	}
	if l, sl, ok := acc("lm"); ok {
		if r, sr, ok := acc("random"); ok {
			se, unit, n := diffSE("lm", "random", sl, sr)
			v := OrderVerdict(l-r-1.5, se)
			add(fmt.Sprintf("LM-initialised %.2f ≥ random %.2f + 1.5 (difference %+.2f ± %.2f %s): %s", l, r, l-r, se, unit, v),
				"accuracy: LM-initialised ≥ random + 1.5", paper("lm", "random"), fmt.Sprintf("lm %.2f, random %.2f", l, r), l-r-1.5, se, v, n)
		}
		for _, m := range []string{"advt", "iadvt", "spgd"} {
			if a, sa, ok := acc(m); ok {
				se, unit, n := diffSE(m, "lm", sa, sl)
				v := OrderVerdict(a-l, se)
				add(fmt.Sprintf("%s %.2f ≥ LM-initialised %.2f (difference %+.2f ± %.2f %s): %s", m, a, l, a-l, se, unit, v),
					"accuracy: "+m+" ≥ LM-initialised", paper(m, "lm"), fmt.Sprintf("%s %.2f, lm %.2f", m, a, l), a-l, se, v, n)
			}
		}
	}
	if sp, ss, ok := acc("spgd"); ok {
		for _, m := range []string{"advt", "iadvt"} {
			if a, sa, ok := acc(m); ok {
				se, unit, n := diffSE("spgd", m, ss, sa)
				v := WithinVerdict(sp-a, se, 0.5)
				// The margin of a "within" claim: how far inside the bound.
				add(fmt.Sprintf("SPGD %.2f within 0.5 of %s %.2f (difference %+.2f ± %.2f %s): %s", sp, m, a, sp-a, se, unit, v),
					"accuracy: SPGD within 0.5 of "+m, paper("spgd", m), fmt.Sprintf("spgd %.2f, %s %.2f (difference %+.2f)", sp, m, a, sp-a), 0.5-math.Abs(sp-a), se, v, n)
			}
		}
	}
	gap := func(r string) (float64, bool) {
		c, ok := cells[r]
		if !ok || c.PerturbationPerplexityReport == nil {
			return 0, false
		}
		return c.Gap, true
	}
	g, okS := gap("spgd")
	a, okA := gap("advt")
	i, okI := gap("iadvt")
	paperGap := fmt.Sprintf("spgd %.2f, advt %.2f, iadvt %.2f", SPGDPaperGap["spgd"], SPGDPaperGap["advt"], SPGDPaperGap["iadvt"])
	if okS && okA && okI {
		v := Verdict(g < a && a < i)
		add(fmt.Sprintf("perplexity gap SPGD %.2f < AdvT %.2f < iAdvT %.2f (no SE: one evaluation of 1,000 texts): %s", g, a, i, v),
			"perplexity gap: SPGD < AdvT < iAdvT (no SE)", paperGap, fmt.Sprintf("spgd %.2f, advt %.2f, iadvt %.2f", g, a, i), min(a-g, i-a), 0, v, 0)
	}
	if okS && okA {
		v := Verdict(g <= a/2)
		add(fmt.Sprintf("SPGD's gap %.2f at most half of AdvT's %.2f (no SE): %s", g, a, v),
			"perplexity gap: SPGD ≤ half of AdvT's (no SE)", paperGap, fmt.Sprintf("spgd %.2f, advt %.2f", g, a), a/2-g, 0, v, 0)
	}
	return lines, claims
}
