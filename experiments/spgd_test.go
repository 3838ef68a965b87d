package experiments

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/internal/synth"
	"github.com/textarmor/textarmor/metrics"
	"github.com/textarmor/textarmor/pipeline"
)

func writeSynthCSV(t *testing.T, path string, n int, seed int64) {
	t.Helper()
	var b strings.Builder
	b.WriteString("text,label\n")
	for _, e := range synth.Sentiment(n, 0, seed) {
		fmt.Fprintf(&b, "%q,%d\n", e.Text, e.Label)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// tinySPGDTable is the table at a tiny scale on a generated task in dir.
func tinySPGDTable(t *testing.T, dir string, train int, seed int64) SPGDTable {
	c := NewSPGDTable()
	c.Data.Preset = ""
	c.Data.Train, c.Data.Dev, c.Data.Test = filepath.Join(dir, "tr.csv"), filepath.Join(dir, "dv.csv"), filepath.Join(dir, "te.csv")
	for i, f := range []string{c.Data.Train, c.Data.Dev, c.Data.Test} {
		writeSynthCSV(t, f, []int{train, 40, 40}[i], seed+int64(i))
	}
	c.LM.Model.EmbedDim, c.LM.Model.Hidden, c.LM.Options.Batch, c.LM.Options.LR = 8, 12, 8, 1e-2
	c.Train.Net.HeadHidden, c.Train.Options.Epochs, c.Train.Options.LR = 10, 2, 1e-2
	c.PPLN, c.Out = 20, filepath.Join(dir, "table")
	return c
}

// The SPGD table trains its language model and every row on a generated
// task, measures them, and a rerun computes nothing; a row of other
// settings is refused.
func TestSPGDTable(t *testing.T) {
	c := tinySPGDTable(t, t.TempDir(), 240, 1)
	var log strings.Builder
	c.Log = &log
	rep, err := RunSPGDTable(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Accuracy) != 5 || len(rep.Gap) != 3 || len(rep.Checks) != 8 {
		t.Fatalf("accuracy %v, gaps %v, checks %v", rep.Accuracy, rep.Gap, rep.Checks)
	}
	// The cells keep their per-example results, so the checks are paired.
	for _, l := range rep.Checks[:6] {
		if !strings.Contains(l, "paired SE") {
			t.Errorf("check not paired: %q", l)
		}
	}
	for _, want := range []string{"| spgd | 2.5 |", "(93.54)", "(1.09)", "LM-initialised", "perplexity gap SPGD"} {
		if !strings.Contains(rep.Markdown, want) {
			t.Errorf("table lacks %q:\n%s", want, rep.Markdown)
		}
	}
	log.Reset()
	again, err := RunSPGDTable(context.Background(), c)
	if err != nil || again.Markdown != rep.Markdown || strings.Contains(log.String(), "training") {
		t.Errorf("rerun: %v, same table %v, log:\n%s", err, again.Markdown == rep.Markdown, log.String())
	}
	c.Eps["spgd"] = 1
	if _, err := RunSPGDTable(context.Background(), c); err == nil || !strings.Contains(err.Error(), "remove") {
		t.Errorf("a row of another ε: %v", err)
	}
}

// With an ε grid each adversarial method trains at every ε and the table
// takes the one with the best dev accuracy.
func TestSPGDTableGrid(t *testing.T) {
	c := tinySPGDTable(t, t.TempDir(), 200, 4)
	c.PPLN, c.Rows, c.Grid = 10, []string{"lm", "spgd"}, []float64{0.1, 3}
	rep, err := RunSPGDTable(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	var devs []float64
	for _, e := range c.Grid {
		var cell spgdCell
		if ok, err := (&Table{Dir: c.Out}).ReadJSON(rowDir(fmt.Sprintf("spgd@%g", e)), "cell.json", &cell); !ok || err != nil {
			t.Fatalf("grid row %g: %v", e, err)
		}
		devs = append(devs, cell.DevAccuracy)
	}
	best := 0
	if devs[1] > devs[0] {
		best = 1
	}
	if !strings.Contains(rep.Markdown, fmt.Sprintf("| spgd@%g * |", c.Grid[best])) || !strings.Contains(rep.Markdown, fmt.Sprintf("| spgd | %g |", c.Grid[best])) {
		t.Errorf("dev accuracies %v; table:\n%s", devs, rep.Markdown)
	}
}

// The table's checks are also structured claims with the same verdicts:
// an ordering with its SE, a "within" bound, and a comparison without SE.
func TestSPGDChecksAreClaims(t *testing.T) {
	ppl := func(gap float64) *pipeline.PerturbationPerplexityReport {
		return &pipeline.PerturbationPerplexityReport{Gap: gap}
	}
	cells := map[string]spgdCell{
		"random": {Accuracy: 84.5, N: 25000}, "lm": {Accuracy: 85.3, N: 25000},
		"advt":  {Accuracy: 86.9, N: 25000, PerturbationPerplexityReport: ppl(0.39)},
		"iadvt": {Accuracy: 87.3, N: 25000, PerturbationPerplexityReport: ppl(1.09)},
		"spgd":  {Accuracy: 86.7, N: 25000, PerturbationPerplexityReport: ppl(0.32)},
	}
	lines, claims := spgdChecks(cells)
	if len(lines) != len(claims) || len(claims) != 8 {
		t.Fatalf("%d lines, %d claims", len(lines), len(claims))
	}
	for i, c := range claims {
		if c.Paper != "SPGD" || c.Table != spgdTableName || !strings.HasSuffix(lines[i], ": "+c.Verdict) {
			t.Errorf("claim %d %+v against line %q", i, c, lines[i])
		}
	}
	if c := claims[0]; c.Verdict != "fails" || math.Abs(c.Difference.Mean-(85.3-84.5-1.5)) > 1e-9 || c.Difference.SE <= 0 {
		t.Errorf("LM ≥ random + 1.5: %+v", c)
	}
	if c := claims[6]; c.Verdict != "holds" || c.Difference.SE != 0 || !strings.Contains(c.Claim, "SPGD < AdvT < iAdvT") {
		t.Errorf("gap ordering: %+v", c)
	}
}

// Cells that hold their per-example results compare paired: two rows
// that differ on a few examples only have a far smaller SE than their two
// binomial SEs, so "SPGD within 0.5 of AdvT" can be decided; without the
// results the unpaired SE stays.
func TestSPGDChecksPaired(t *testing.T) {
	const n = 20000
	row := func(wrong func(k int) bool) spgdCell {
		b := make([]bool, n)
		right := 0
		for k := range b {
			if b[k] = !wrong(k); b[k] {
				right++
			}
		}
		return spgdCell{Accuracy: 100 * float64(right) / n, N: n, Correct: correctString(b)}
	}
	// AdvT wrong on k%8 == 0 (87.5 %); SPGD on the same and on the 200 odd
	// k%100 == 1 as well (86.5 %, a point lower): 0.5 outside the bound, a
	// tie unpaired (SE ≈ 0.34), a fail paired (SE ≈ 0.070).
	advt := row(func(k int) bool { return k%8 == 0 })
	spgd := row(func(k int) bool { return k%8 == 0 || k%100 == 1 })
	for _, paired := range []bool{true, false} {
		a, s := advt, spgd
		if !paired {
			a.Correct, s.Correct = "", ""
		}
		_, claims := spgdChecks(map[string]spgdCell{"advt": a, "spgd": s})
		var c *Claim
		for i := range claims {
			if claims[i].Claim == "accuracy: SPGD within 0.5 of advt" {
				c = &claims[i]
			}
		}
		if c == nil {
			t.Fatalf("no within claim: %+v", claims)
		}
		wantSE, wantVerdict := 100*math.Sqrt(metrics.MeanVariance(-200, 200, n)), "fails"
		if !paired {
			wantSE = math.Hypot(100*metrics.BinomialSE(a.Accuracy/100, n), 100*metrics.BinomialSE(s.Accuracy/100, n))
			wantVerdict = "tie"
		}
		if c.Paired != paired || (c.Difference.N == n) != paired || math.Abs(c.Difference.SE-wantSE) > 1e-9 || c.Verdict != wantVerdict {
			t.Errorf("paired %v: %+v, want SE %.4f and %s", paired, *c, wantSE, wantVerdict)
		}
	}
}
