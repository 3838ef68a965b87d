package experiments

import (
	"encoding/csv"
	"encoding/json"
	"maps"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/attack"
	"github.com/textarmor/textarmor/checkpoint"
	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/metrics"
	"github.com/textarmor/textarmor/pipeline"
)

// testRun is a table run over a 25,000-example test set (IMDB's size)
// that only reads and writes cells.
func testRun(dir string, n int, seed int64, defenses, attacks []string) *ftmlRun {
	c := NewFTMLTable()
	c.N, c.Seed, c.Defenses, c.Attacks = n, seed, defenses, attacks
	tb := &Table{Dir: dir, Name: "ftml-table"}
	return &ftmlRun{FTMLTable: &c, root: tb, t: tb, recipes: c.recipes(), passN: n,
		ds: &dataset.Dataset{Name: "imdb", Test: make([]dataset.Example, 25000)}}
}

// A cell on fewer examples than --n (a --first preview) is marked.
func TestFTMLTableMarksPartialCells(t *testing.T) {
	dir := t.TempDir()
	tb := testRun(dir, 1000, 0, []string{"ftml"}, []string{"pwws", "ga"})
	for col, n := range map[string]int{"clean": 25000, "pwws": 1000, "ga": 200} {
		if err := os.MkdirAll(filepath.Join(dir, "ftml"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := WriteJSON(filepath.Join(dir, "ftml", col+".json"), FTMLCell{Defense: "ftml", Column: col, Accuracy: 80, N: n}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tb.report(true); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "table.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "| 80.0 (88.1) | 80.0 (81.1) | 80.0 (81.4) n=200 |") || !strings.Contains(string(md), "first k of the 1000 examples so far") {
		t.Errorf("table.md:\n%s", md)
	}
}

// writePWWSCell writes a defense's clean and PWWS cells and a PWWS results
// file of rows examples taken in order (kept: result Failed).
func writePWWSCell(t *testing.T, dir, def string, order []int, rows int, kept func(k int) bool, n int, acc float64) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, def), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, def, "pwws.csv"))
	if err != nil {
		t.Fatal(err)
	}
	w := csv.NewWriter(f)
	w.Write(attack.Columns)
	for k := range rows {
		typ := attack.Successful
		if kept(k) {
			typ = attack.Failed
		}
		w.Write([]string{"a b", "a c", "1", "0", "1", "10", string(typ), strconv.Itoa(order[k]), "0.1", "2", "1", "12"})
	}
	w.Flush()
	if err := f.Close(); err != nil || w.Error() != nil {
		t.Fatal(err, w.Error())
	}
	for col, c := range map[string]FTMLCell{"clean": {Accuracy: 88, N: 25000}, "pwws": {Accuracy: acc, N: n}} {
		c.Defense, c.Column = def, col
		if err := WriteJSON(filepath.Join(dir, def, col+".json"), c); err != nil {
			t.Fatal(err)
		}
	}
}

// writePairedCells lays out an FTML cell on 1,000 examples and a SEM cell
// on their first 200, whose results file a later pass has already
// extended to 300. On the 200: FTML 50 %, SEM 25 %; the per-example
// differences are 0 (k%4 == 0), +1 (k%4 == 2) and 0 otherwise: mean 0.25,
// variance 0.1875, SE √(0.1875/200) = 3.1 points.
func writePairedCells(t *testing.T, dir string, seed int64) {
	order := rand.New(rand.NewSource(seed)).Perm(25000)
	writePWWSCell(t, dir, "ftml", order, 1000, func(k int) bool { return k%2 == 0 }, 1000, 50)
	writePWWSCell(t, dir, "sem", order, 300, func(k int) bool { return k >= 200 || k%4 == 0 }, 200, 25)
}

const pairedCheckLine = "pwws: FTML 50.0 ≥ sem 25.0 on the 200 examples both attacked (FTML 50.0 on its 1000; paired difference +25.0 ± 3.1 SE): holds"

// An attack cell extended to more examples resumes its CSV, so its time
// adds the earlier pass's; a recomputed clean cell does not.
func TestFTMLTableCellTimeAccumulates(t *testing.T) {
	dir := t.TempDir()
	tb := testRun(dir, 5, 0, []string{"ftml"}, nil)
	tb.passN = 5
	if err := os.MkdirAll(filepath.Join(dir, "ftml"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, col := range []string{"pwws", "clean"} {
		if err := WriteJSON(filepath.Join(dir, "ftml", col+".json"), FTMLCell{Defense: "ftml", Column: col, N: 2, Seconds: 1000}); err != nil {
			t.Fatal(err)
		}
		if err := tb.cell("ftml", col, 5, func() (FTMLCell, error) { return FTMLCell{N: 5, Accuracy: 50}, nil }); err != nil {
			t.Fatal(err)
		}
		var c FTMLCell
		b, err := os.ReadFile(filepath.Join(dir, "ftml", col+".json"))
		if err == nil {
			err = json.Unmarshal(b, &c)
		}
		if err != nil {
			t.Fatal(err)
		}
		if got, carried := c.Seconds >= 1000, col != "clean"; c.N != 5 || got != carried {
			t.Errorf("%s: extended cell %+v: want n 5 and the earlier 1000 s carried = %v", col, c, carried)
		}
	}
}

// The table's checks read each attack cell's results file and keep only
// the cell's own examples: a baseline at n=200 whose file a later pass has
// already extended to 300 is compared with FTML on those 200.
func TestFTMLTablePairsOwnExamples(t *testing.T) {
	dir := t.TempDir()
	tb := testRun(dir, 1000, 3, []string{"ftml", "sem"}, []string{"pwws"})
	writePairedCells(t, dir, tb.Seed)
	rep, err := tb.report(true)
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "table.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), pairedCheckLine) {
		t.Errorf("table.md:\n%s\nlacks %q", md, pairedCheckLine)
	}
	// With one instance the claim's SE is the check's paired SE.
	var found bool
	for _, c := range rep.Claims {
		if c.Claim == "pwws: FTML ≥ sem" {
			found = true
			d := c.Difference
			if !c.Paired || d.N != 200 || math.Abs(d.Mean-25) > 1e-9 || math.Abs(d.SE-100*math.Sqrt(0.1875/199)) > 0.05 || c.Verdict != "holds" {
				t.Errorf("claim %+v", c)
			}
		}
	}
	if !found {
		t.Errorf("no pwws: FTML ≥ sem claim in %+v", rep.Claims)
	}
}

// A clean cell that carries its per-example results makes the clean claim
// paired example by example (on 2,000 seeded test examples: FTML right on
// k%4 != 3, standard on k%2 == 0, so the difference per example is +1 on
// k%4 == 1, 0 otherwise: mean 25 points, SE √(0.1875/1999)); cells without
// them keep the unpaired estimate from the two binomial SEs.
func TestFTMLCleanClaimPaired(t *testing.T) {
	for _, perExample := range []bool{true, false} {
		dir := t.TempDir()
		tb := testRun(dir, 1000, 3, []string{"ftml", "standard"}, nil)
		tb.CleanN = 2000
		for def, right := range map[string]func(int) bool{"ftml": func(k int) bool { return k%4 != 3 }, "standard": func(k int) bool { return k%2 == 0 }} {
			c := FTMLCell{Defense: def, Column: "clean", N: 2000}
			correct := make([]byte, 2000)
			n := 0
			for k := range correct {
				correct[k] = '0'
				if right(k) {
					correct[k] = '1'
					n++
				}
			}
			c.Accuracy = 100 * float64(n) / 2000
			if perExample {
				c.Correct = string(correct)
			}
			if err := os.MkdirAll(filepath.Join(dir, def), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := WriteJSON(filepath.Join(dir, def, "clean.json"), c); err != nil {
				t.Fatal(err)
			}
		}
		rep, err := tb.report(true)
		if err != nil {
			t.Fatal(err)
		}
		var got *Claim
		for i, c := range rep.Claims {
			if c.Claim == "clean: FTML ≥ standard − 3.5" {
				got = &rep.Claims[i]
			}
		}
		if got == nil {
			t.Fatalf("no clean claim in %+v", rep.Claims)
		}
		d := got.Difference
		wantSE := 100 * math.Sqrt(0.1875/1999)
		if !perExample {
			wantSE = 100 * math.Hypot(metrics.BinomialSE(0.75, 2000), metrics.BinomialSE(0.5, 2000))
		}
		if got.Paired != perExample || math.Abs(d.Mean-28.5) > 1e-9 || math.Abs(d.SE-wantSE) > 0.01 || got.Verdict != "holds" {
			t.Errorf("per-example %v: claim %+v, want margin 28.5 ± %.3f", perExample, *got, wantSE)
		}
	}
}

// --seeds: instance 0 in the table's folder, instance 1 in seed-1, both
// attacked on the same examples; cells over both, claims paired per
// example with both instances.
func TestFTMLTableSeeds(t *testing.T) {
	dir := t.TempDir()
	tb := testRun(dir, 200, 3, []string{"ftml", "sem"}, []string{"pwws"})
	tb.Seeds = []int64{0, 1}
	order := rand.New(rand.NewSource(tb.Seed)).Perm(25000)
	// Instance 0: FTML 50 %, SEM 25 %; instance 1: FTML 75 %, SEM 25 %.
	writePWWSCell(t, dir, "ftml", order, 200, func(k int) bool { return k%2 == 0 }, 200, 50)
	writePWWSCell(t, dir, "sem", order, 200, func(k int) bool { return k%4 == 0 }, 200, 25)
	seed1 := filepath.Join(dir, "seed-1")
	writePWWSCell(t, seed1, "ftml", order, 200, func(k int) bool { return k%4 != 3 }, 200, 75)
	writePWWSCell(t, seed1, "sem", order, 200, func(k int) bool { return k%4 == 0 }, 200, 25)
	rep, err := tb.report(true)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rep.Markdown, "| 62.5 ± 17.7 [50.0–75.0] (81.1) |") || !strings.Contains(rep.Markdown, "Every row trained 2 times (training seeds 42, 43") {
		t.Errorf("table:\n%s", rep.Markdown)
	}
	var c *Claim
	for i := range rep.Claims {
		if rep.Claims[i].Claim == "pwws: FTML ≥ sem" {
			c = &rep.Claims[i]
		}
	}
	if c == nil {
		t.Fatalf("no FTML ≥ sem claim: %+v", rep.Claims)
	}
	d := c.Difference
	if !c.Paired || d.Seeds() != 2 || d.N != 200 || math.Abs(d.Mean-37.5) > 1e-9 || d.SeedSE < 12.4 || d.SE < d.SeedSE || c.Verdict != "holds" {
		t.Errorf("claim %+v: want paired, 2 seeds × 200, margin 37.5 with the seeds' SE 12.5 in it (holds: beyond 2 SE)", c)
	}
	var js struct {
		Seeds  []int64 `json:"seeds"`
		Claims []Claim `json:"claims"`
	}
	raw, err := os.ReadFile(filepath.Join(dir, "table.json"))
	if err == nil {
		err = json.Unmarshal(raw, &js)
	}
	if err != nil || len(js.Seeds) != 2 || len(js.Claims) != len(rep.Claims) {
		t.Errorf("table.json: %v, %+v", err, js)
	}
}

// The quick recipes keep every defense's own flags and cut the costly
// inner loops.
func TestQuickRecipes(t *testing.T) {
	for _, r := range FTMLRecipes() {
		q := r.Quick()
		if q.Defense != r.Defense || q.Epochs < 1 || q.Epochs > 8 {
			t.Errorf("%s: quick %d epochs, full %d", r.Defense, q.Epochs, r.Epochs)
		}
		if q.Batch != 16 || q.DecayEpochs != nil || q.LR != r.LR {
			t.Errorf("%s: quick batch %d, decay %v, lr %g: want batch 16, no decay, the recipe's rate", r.Defense, q.Batch, q.DecayEpochs, q.LR)
		}
		want := map[string]int{"ascc": q.ASCCSteps - 3, "atfl": q.ATFLSteps - 5, "ibp": q.IBPRampEpochs - 1, "sem": q.SEMK - r.SEMK}[r.Defense]
		if want != 0 {
			t.Errorf("%s: quick recipe %+v does not cut its inner loop as it should", r.Defense, q)
		}
	}
}

// The Table 1 targets are stated on the cells present, with the right
// verdicts.
func TestFTMLChecks(t *testing.T) {
	cells := []FTMLCell{
		{Defense: "standard", Column: "clean", Accuracy: 89.7}, {Defense: "standard", Column: "pwws", Accuracy: 0.5},
		{Defense: "ftml", Column: "clean", Accuracy: 86.5}, {Defense: "ftml", Column: "pwws", Accuracy: 76.0},
		{Defense: "ftml", Column: "hla", Accuracy: 60.0},
		{Defense: "sem", Column: "clean", Accuracy: 88.0}, {Defense: "sem", Column: "pwws", Accuracy: 77.0},
		{Defense: "sem", Column: "hla", Accuracy: 50.0},
	}
	got := strings.Join(FTMLChecks(cells, []string{"pwws", "ga", "hla"}, nil), "\n")
	want := strings.Join([]string{
		"clean: FTML 86.5 ≥ standard 89.7 − 3.5: holds",
		"pwws: FTML 76.0 ≥ 70: holds",
		"pwws: FTML 76.0 ≥ sem 77.0: fails",
		"hla: FTML 60.0 ≥ sem 50.0: holds",
	}, "\n")
	if got != want {
		t.Errorf("checks:\n%s\nwant:\n%s", got, want)
	}
	// With the cells' sizes, a margin carries its standard error
	// (√(.76·.24/1000 + .77·.23/200) = 3.3 points) and a difference within
	// two of them is a tie; FTML's 6-point lead over 70 is beyond them.
	for i := range cells {
		cells[i].N = 1000
		if cells[i].Defense == "sem" {
			cells[i].N = 200
		}
	}
	got = strings.Join(FTMLChecks(cells, []string{"pwws"}, nil), "\n")
	if w := "pwws: FTML 76.0 ≥ 70 (± 1.4 SE): holds"; !strings.Contains(got, w) {
		t.Errorf("checks:\n%s\nlack %q", got, w)
	}
	if w := "pwws: FTML 76.0 ≥ sem 77.0 (difference -1.0 ± 3.3 SE): tie"; !strings.Contains(got, w) {
		t.Errorf("checks:\n%s\nlack %q", got, w)
	}
}

// With per-example results, FTML and a baseline are compared on the
// examples both attacked: a baseline cell on the first 5 of FTML's 10 is
// compared with FTML's result on those 5, not with its 10, and the
// standard error is the paired one.
func TestFTMLChecksPaired(t *testing.T) {
	ftml := map[int]bool{}
	for i := range 10 {
		ftml[100+i] = i < 5 // kept the first 5, lost the rest: 50 % on 10
	}
	sem := map[int]bool{100: true, 101: true, 102: true, 103: false, 104: false} // 60 % on the first 5
	cells := []FTMLCell{
		{Defense: "ftml", Column: "clean", Accuracy: 88, N: 25000}, {Defense: "ftml", Column: "pwws", Accuracy: 50, N: 10},
		{Defense: "sem", Column: "clean", Accuracy: 88, N: 25000}, {Defense: "sem", Column: "pwws", Accuracy: 60, N: 5},
	}
	kept := map[[2]string]map[int]bool{{"ftml", "pwws"}: ftml, {"sem", "pwws"}: sem}
	got := strings.Join(FTMLChecks(cells, []string{"pwws"}, kept), "\n")
	// Differences per example: 0 0 0 1 1, mean 0.4, sample variance 0.3, SE √(0.3/5) = 24.5 points.
	// +40 within two SE (49.0): a tie.
	if w := "pwws: FTML 100.0 ≥ sem 60.0 on the 5 examples both attacked (FTML 50.0 on its 10; paired difference +40.0 ± 24.5 SE): tie"; !strings.Contains(got, w) {
		t.Errorf("checks:\n%s\nlack %q", got, w)
	}
	// The same examples on both sides: one line with the sample size.
	for i := 105; i < 110; i++ {
		sem[i] = true
	}
	cells[3] = FTMLCell{Defense: "sem", Column: "pwws", Accuracy: 80, N: 10}
	got = strings.Join(FTMLChecks(cells, []string{"pwws"}, kept), "\n")
	// Differences: 0 0 0 1 1 -1 -1 -1 -1 -1, mean -0.3, mean square 0.7, sample variance 0.61·10/9, SE √(0.0678) = 26.0 points.
	if w := "pwws: FTML 50.0 ≥ sem 80.0 (paired difference -30.0 ± 26.0 SE over 10): tie"; !strings.Contains(got, w) {
		t.Errorf("checks:\n%s\nlack %q", got, w)
	}
}

// --report prints the table from the cells there while another run holds
// the table's lock, and computes and writes nothing: a missing cell stays
// missing.
func TestFTMLTableReport(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "tab")
	writePairedCells(t, filepath.Join(out, "cnn"), 3)
	unlock, err := checkpoint.LockDir(filepath.Join(out, "cnn"))
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	c := NewFTMLTable()
	c.Dataset, c.Out, c.Defenses, c.Attacks, c.Seed = &dataset.Dataset{Name: "imdb", Test: make([]dataset.Example, 25000)}, out,
		[]string{"standard", "ftml", "sem"}, []string{"pwws"}, 3
	rep, err := ReportFTMLTable(c)
	if err != nil {
		t.Fatal(err)
	}
	if stdout := rep.Markdown; !strings.Contains(stdout, pairedCheckLine) || !strings.Contains(stdout, "| standard | 2 ep batch 64, lr 0.001 | — | — |") {
		t.Errorf("report:\n%s", rep.Markdown)
	}
	for _, f := range []string{"table.md", "table.json", "standard"} {
		if _, err := os.Stat(filepath.Join(out, "cnn", f)); !os.IsNotExist(err) {
			t.Errorf("--report wrote %s (%v)", f, err)
		}
	}
}

// A row's record compares only its own defense's settings: another
// defense's setting, or a setting added later and off by default, does
// not make a finished row look different; its own settings still do.
func TestIdentityComparesOwnSettings(t *testing.T) {
	tc := pipeline.NewTrainConfig()
	tc.Defense.Name = "spgd"
	want, err := identity(tc)
	if err != nil {
		t.Fatal(err)
	}
	// A record written before ownSettings, by a version without FGM, PGD,
	// FreeLB, CARL, RAR and AdvTextConfig.Step, with another AdvT ε.
	full, err := json.Marshal(tc.Defense.Settings)
	if err != nil {
		t.Fatal(err)
	}
	var old map[string]any
	if err := json.Unmarshal(full, &old); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"FGM", "PGD", "FreeLB", "CARL", "RAR"} {
		delete(old, k)
	}
	delete(old["SPGD"].(map[string]any), "Step")
	old["AdvT"].(map[string]any)["Eps"] = 99.0
	had := maps.Clone(want)
	had["settings"] = old
	if d := differs(had, want); d != "" {
		t.Fatalf("an old record of the same spgd settings differs: %s", d)
	}
	old["SPGD"].(map[string]any)["Eps"] = 3.0
	if d := differs(had, want); !strings.Contains(d, "settings") {
		t.Fatalf("a record of another SPGD ε: %q", d)
	}
	old["SPGD"].(map[string]any)["Eps"] = want["settings"].(map[string]any)["SPGD"].(map[string]any)["Eps"]
	want["settings"].(map[string]any)["SPGD"].(map[string]any)["Step"] = 0.5 // a new setting, on
	if d := differs(had, want); !strings.Contains(d, "settings") {
		t.Fatalf("a new setting away from its zero default: %q", d)
	}
}

func TestVerdicts(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{OrderVerdict(1, 0.4), "holds"}, {OrderVerdict(0.7, 0.4), "tie"}, {OrderVerdict(-0.9, 0.4), "fails"}, {OrderVerdict(0, 0), "tie"},
		{WithinVerdict(0.1, 0.1, 0.5), "holds"}, {WithinVerdict(-0.64, 0.3, 0.5), "tie"}, {WithinVerdict(-1.2, 0.3, 0.5), "fails"},
	} {
		if c.got != c.want {
			t.Errorf("got %s, want %s", c.got, c.want)
		}
	}
}
