package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/attack"
	"github.com/textarmor/textarmor/checkpoint"
	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/defense"
	"github.com/textarmor/textarmor/experiments"
	"github.com/textarmor/textarmor/internal/synth"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/train"
)

func TestBenchDefenses(t *testing.T) {
	dir := t.TempDir()
	tr, syn := filepath.Join(dir, "train.csv"), filepath.Join(dir, "nb.json")
	writeCSV(t, tr, 200, 1)
	writeSynonyms(t, syn)
	args := []string{"bench", "defenses", "--train", tr, "--model", "cnn", "--embed-dim", "16", "--filters", "8",
		"--n", "100", "--batch", "32", "--synonyms", syn, "--atfl-steps", "3", "--defenses", "ftml,sem,atfl,ibp"}
	// Baseline flags are not part of bench defenses: the defaults are the spec's.
	if code, _, _ := runCmd(t, args...); code != 2 {
		t.Fatalf("unknown flag --atfl-steps accepted")
	}
	args = append(args[:len(args)-4], "--defenses", "ftml,sem,ibp", "--json")
	code, stdout, stderr := runCmd(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var out struct {
		N    int                         `json:"n"`
		Rows []experiments.DefenseTiming `json:"rows"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	var names []string
	for _, r := range out.Rows {
		names = append(names, r.Defense)
		if r.Seconds <= 0 || r.Steps != 4 || r.Ratio <= 0 {
			t.Errorf("row %+v", r)
		}
	}
	if got := strings.Join(names, ","); got != "standard,ftml,sem,ibp,standard" || out.N != 100 {
		t.Errorf("rows %s, n %d", got, out.N)
	}
	if out.Rows[0].Ratio != 1 || !out.Rows[4].Repeat {
		t.Errorf("standard ratio %v, repeat %v", out.Rows[0].Ratio, out.Rows[4].Repeat)
	}
	// Markdown.
	code, stdout, stderr = runCmd(t, args[:len(args)-1]...)
	if code != 0 || !strings.Contains(stdout, "| ftml |") || !strings.Contains(stdout, "| standard (repeat) |") {
		t.Fatalf("exit %d: %s %s", code, stdout, stderr)
	}
	if code, _, _ := runCmd(t, "bench", "defenses", "--train", tr, "--defenses", "nope"); code != 2 {
		t.Errorf("unknown defense: exit %d, want 2", code)
	}
}

func TestBenchFTMLTable(t *testing.T) {
	dir := t.TempDir()
	syn := filepath.Join(dir, "nb.json")
	writeSynonyms(t, syn)
	old := ftmlTableData
	defer func() { ftmlTableData = old }()
	loads := 0
	ftmlTableData = func(string) (*dataset.Dataset, dataset.Preset, error) {
		loads++
		ds := synth.SentimentDataset(120, 0, 40, 5)
		return ds, dataset.Preset{Name: "synth", Tokenizer: "whitespace", MaxLen: 30, MinCount: 1}, nil
	}
	out := filepath.Join(dir, "tab")
	args := []string{"bench", "ftml-table", "--data", dir, "--synonyms", syn, "--model", "cnn", "--out", out, "--quick",
		"--defenses", "standard,ftml,sem,ibp", "--attacks", "pwws,hla", "--n", "6", "--workers", "2",
		"--recipe-epochs", "ibp=12", // long enough for IBP to certify some examples
		"--recipe-flags", "ibp=--input-layer=16 --head-hidden=12 --clip=5"} // Jia et al.'s layers (and a clip) for the IBP row only
	// A run that stops inside the first row (its HLA results cannot be
	// written) leaves table.md with that row's finished cells.
	blocked := filepath.Join(out, "cnn", "standard", "hla.csv")
	if err := os.MkdirAll(blocked, 0o755); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCmd(t, args...); code == 0 {
		t.Fatalf("a run that cannot write a cell succeeded: %s", stderr)
	}
	if md, err := os.ReadFile(filepath.Join(out, "cnn", "table.md")); err != nil || !strings.Contains(string(md), "| standard |") ||
		strings.Count(strings.Split(strings.SplitAfter(string(md), "| standard |")[1], "\n")[0], "—") != 1 {
		t.Fatalf("table.md after the interrupted row (%v):\n%s", err, md)
	}
	os.Remove(blocked)
	code, stdout, stderr := runCmd(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"| standard |", "| ftml |", "HLA†", "(89.7)", "(81.1)",
		"clean: FTML", "pwws: FTML", "≥ 70: ", "hla: FTML", "≥ sem ", "≥ ibp ", "paired difference"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
	var tab struct {
		Cells []tableCell `json:"cells"`
	}
	raw, err := os.ReadFile(filepath.Join(out, "cnn", "table.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &tab); err != nil {
		t.Fatal(err)
	}
	if len(tab.Cells) != 4*3 {
		t.Fatalf("%d cells, want 12", len(tab.Cells))
	}
	for _, c := range tab.Cells {
		if c.Accuracy < 0 || c.Accuracy > 100 || (c.Column != "clean" && c.N != 6) {
			t.Errorf("cell %+v", c)
		}
	}
	// The spec's §7 CNN: 128 filters per width, dropout 0.2.
	m, err := model.Load(filepath.Join(out, "cnn", "standard", "model"))
	if err != nil {
		t.Fatal(err)
	}
	if c := m.Net.Cfg; c.Filters != 128 || c.Dropout != 0.2 {
		t.Errorf("table CNN has %d filters and dropout %g, want the spec's 128 and 0.2", c.Filters, c.Dropout)
	}
	var hla tableCell
	if raw, err := os.ReadFile(filepath.Join(out, "cnn", "standard", "hla.json")); err != nil {
		t.Fatal(err)
	} else if err := json.Unmarshal(raw, &hla); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(hla.Notes, "\n"), "quick: search budget cut to population 15 × 50 generations, 500 initialisation queries") {
		t.Errorf("quick HLA cell does not record its cut budget: %q", hla.Notes)
	}
	// The IBP row's certified accuracy is its model's certificate on the
	// clean cell's examples, and never above its clean accuracy.
	var cert, ibpClean tableCell
	for name, c := range map[string]*tableCell{"certified": &cert, "clean": &ibpClean} {
		raw, err := os.ReadFile(filepath.Join(out, "cnn", "ibp", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, c); err != nil {
			t.Fatal(err)
		}
	}
	ibpModel, err := model.Load(filepath.Join(out, "cnn", "ibp", "model"))
	if err != nil {
		t.Fatal(err)
	}
	if c := ibpModel.Net.Cfg; c.InputLayer != 16 || c.HeadHidden != 12 || c.Filters != 128 || m.Net.Cfg.InputLayer != 0 || m.Net.Cfg.HeadHidden != 0 {
		t.Errorf("IBP row: input layer %d, head hidden %d, %d filters; standard row: %d, %d; want 16, 12, 128 and none",
			c.InputLayer, c.HeadHidden, c.Filters, m.Net.Cfg.InputLayer, m.Net.Cfg.HeadHidden)
	}
	if rec, _ := ibpModel.Training["ibp"].(map[string]any); rec == nil || rec["ramp_steps"] == nil || rec["ramp_steps"].(float64) <= 0 {
		t.Errorf("IBP row's training record %v: want its ramp's steps", ibpModel.Training["ibp"])
	}
	if ibpModel.Training["clip"] != 5.0 || m.Training["clip"] != nil {
		t.Errorf("clip recorded %v for the IBP row, %v for standard; want 5 and none", ibpModel.Training["clip"], m.Training["clip"])
	}
	if !strings.Contains(stdout, "--input-layer=16 --head-hidden=12 --clip=5") {
		t.Errorf("table does not show the IBP row's architecture flags:\n%s", stdout)
	}
	ibpSyn, _, err := loadSynonyms(syn, dir, ibpModel.Vocab, 8)
	if err != nil {
		t.Fatal(err)
	}
	ds := synth.SentimentDataset(120, 0, 40, 5)
	wantCert, err := defense.CertifiedAccuracy(ibpModel.Net, ibpSyn, train.Encode(ibpModel, ds.Test), 8, 1, defense.HullEmbedding)
	if err != nil {
		t.Fatal(err)
	}
	if cert.Accuracy != 100*wantCert || cert.N != len(ds.Test) || cert.Accuracy > ibpClean.Accuracy {
		t.Errorf("certified cell %.2f %% on %d, want %.2f %% on %d and at most clean %.2f", cert.Accuracy, cert.N, 100*wantCert, len(ds.Test), ibpClean.Accuracy)
	}
	if line := fmt.Sprintf("IBP certified accuracy: %.1f %% on the clean column's %d examples", cert.Accuracy, cert.N); !strings.Contains(stdout, line) {
		t.Errorf("table lacks %q:\n%s", line, stdout)
	}
	// Resumable: a rerun skips every existing cell; removing one recomputes
	// just that one, with the same value.
	cell := filepath.Join(out, "cnn", "ftml", "pwws.json")
	before, _ := os.ReadFile(cell)
	if err := os.Remove(cell); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(out, "cnn", "ftml", "pwws.csv"))
	code, _, stderr = runCmd(t, args...)
	if code != 0 {
		t.Fatalf("rerun exit %d: %s", code, stderr)
	}
	if strings.Contains(stderr, "training standard") || strings.Count(stderr, "ftml-table: ") != 1+4+1 {
		t.Errorf("rerun did more than the missing cell:\n%s", stderr)
	}
	after, _ := os.ReadFile(cell)
	var a, b tableCell
	json.Unmarshal(before, &a)
	json.Unmarshal(after, &b)
	if a.Accuracy != b.Accuracy {
		t.Errorf("recomputed cell %v, was %v", b.Accuracy, a.Accuracy)
	}
	if loads != 3 {
		t.Errorf("loader called %d times", loads)
	}
	// A larger --n extends every attack cell (6 examples) from its CSV, the
	// first 6 of the same permutation, and keeps the clean cells.
	csvPath := filepath.Join(out, "cnn", "standard", "pwws.csv")
	csvBefore, err := os.ReadFile(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	argsN := append([]string(nil), args...)
	for i := range argsN {
		if argsN[i] == "--n" {
			argsN[i+1] = "8"
		}
	}
	code, _, stderr = runCmd(t, argsN...)
	if code != 0 {
		t.Fatalf("--n 8 rerun exit %d: %s", code, stderr)
	}
	if got := strings.Count(stderr, "covers 6 examples, this run 8: recomputing"); got != 4*2 {
		t.Errorf("%d cells recomputed for the larger sample, want 8:\n%s", got, stderr)
	}
	if csvAfter, _ := os.ReadFile(csvPath); !strings.HasPrefix(string(csvAfter), string(csvBefore)) || len(csvAfter) == len(csvBefore) {
		t.Errorf("the PWWS CSV was not extended in place:\nbefore %d bytes, after %d", len(csvBefore), len(csvAfter))
	}
	raw, err = os.ReadFile(filepath.Join(out, "cnn", "table.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &tab); err != nil {
		t.Fatal(err)
	}
	for _, c := range tab.Cells {
		if c.Column != "clean" && c.N != 8 {
			t.Errorf("after --n 8: cell %s/%s covers %d examples", c.Defense, c.Column, c.N)
		}
	}
	// --first: every row's cells reach 10 examples before any reaches 12.
	argsFirst := append([]string(nil), argsN...)
	for i := range argsFirst {
		switch argsFirst[i] {
		case "--n":
			argsFirst[i+1] = "12"
		case "--defenses":
			argsFirst[i+1] = "standard,ftml"
		}
	}
	argsFirst = append(argsFirst, "--first", "10")
	code, stdout, stderr = runCmd(t, argsFirst...)
	if code != 0 {
		t.Fatalf("--first rerun exit %d: %s", code, stderr)
	}
	var order []string
	for _, line := range strings.Split(stderr, "\n") {
		var def, col string
		var acc float64
		var n int
		if k, _ := fmt.Sscanf(line, "ftml-table: %s %s %f%% (%d examples", &def, &col, &acc, &n); k == 4 {
			order = append(order, fmt.Sprintf("%s %s%d", def, col, n))
		}
	}
	want := "standard pwws:10 standard hla:10 ftml pwws:10 ftml hla:10 standard pwws:12 standard hla:12 ftml pwws:12 ftml hla:12"
	if got := strings.Join(order, " "); got != want {
		t.Errorf("--first cells in order\n %s\nwant\n %s", got, want)
	}
	// The rows this run extended are complete; the rows an earlier run left
	// in the folder (sem, ibp at --n 8) are shown too, with the recipe that
	// run recorded, and marked as partial.
	for _, line := range strings.Split(stdout, "\n") {
		if (strings.HasPrefix(line, "| standard |") || strings.HasPrefix(line, "| ftml |")) && strings.Contains(line, " n=") {
			t.Errorf("final table still marks partial cells: %s", line)
		}
	}
	if !strings.Contains(stdout, "| ibp | 12 ep (reference 1 ep) --ibp-ramp-epochs 8 --batch 16 --lr 1e-3 --input-layer=16 --head-hidden=12 --clip=5 |") || !strings.Contains(stdout, "| sem |") || !strings.Contains(stdout, " n=8") {
		t.Errorf("the folder's other rows are not shown as recorded:\n%s", stdout)
	}
}

// A cell on fewer examples than --n (a --first preview) is marked.
func TestFTMLTableMarksPartialCells(t *testing.T) {
	dir := t.TempDir()
	tb := &ftmlTable{out: dir, arch: "cnn", n: 1000, ds: &dataset.Dataset{Name: "imdb", Test: make([]dataset.Example, 25000)}}
	for col, n := range map[string]int{"clean": 25000, "pwws": 1000, "ga": 200} {
		if err := os.MkdirAll(filepath.Join(dir, "ftml"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := writeJSON(filepath.Join(dir, "ftml", col+".json"), tableCell{Defense: "ftml", Column: col, Accuracy: 80, N: n}); err != nil {
			t.Fatal(err)
		}
	}
	recipes := map[string]tableRecipe{"ftml": {Defense: "ftml", Epochs: 1}}
	if err := tb.writeTable(io.Discard, []string{"ftml"}, []string{"pwws", "ga"}, recipes, false); err != nil {
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
	for col, c := range map[string]tableCell{"clean": {Accuracy: 88, N: 25000}, "pwws": {Accuracy: acc, N: n}} {
		c.Defense, c.Column = def, col
		if err := writeJSON(filepath.Join(dir, def, col+".json"), c); err != nil {
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
	tb := &ftmlTable{out: dir, n: 5, passN: 5, stderr: io.Discard}
	if err := os.MkdirAll(filepath.Join(dir, "ftml"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, col := range []string{"pwws", "clean"} {
		if err := writeJSON(filepath.Join(dir, "ftml", col+".json"), tableCell{Defense: "ftml", Column: col, N: 2, Seconds: 1000}); err != nil {
			t.Fatal(err)
		}
		if err := tb.cell("ftml", col, 5, func() (tableCell, error) { return tableCell{N: 5, Accuracy: 50}, nil }); err != nil {
			t.Fatal(err)
		}
		var c tableCell
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
	tb := &ftmlTable{out: dir, arch: "cnn", n: 1000, seed: 3, ds: &dataset.Dataset{Name: "imdb", Test: make([]dataset.Example, 25000)}}
	writePairedCells(t, dir, tb.seed)
	recipes := map[string]tableRecipe{"ftml": {Defense: "ftml", Epochs: 1}, "sem": {Defense: "sem", Epochs: 1}}
	if err := tb.writeTable(io.Discard, []string{"ftml", "sem"}, []string{"pwws"}, recipes, false); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "table.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), pairedCheckLine) {
		t.Errorf("table.md:\n%s\nlacks %q", md, pairedCheckLine)
	}
}

// --report prints the table from the cells there while another run holds
// the table's lock, and computes and writes nothing: a missing cell stays
// missing.
func TestFTMLTableReport(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "tab")
	writePairedCells(t, filepath.Join(out, "cnn"), 3)
	old := ftmlTableData
	defer func() { ftmlTableData = old }()
	ftmlTableData = func(string) (*dataset.Dataset, dataset.Preset, error) {
		return &dataset.Dataset{Name: "imdb", Test: make([]dataset.Example, 25000)}, dataset.Preset{Name: "imdb"}, nil
	}
	unlock, err := checkpoint.LockDir(filepath.Join(out, "cnn"))
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	code, stdout, stderr := runCmd(t, "bench", "ftml-table", "--report", "--data", dir, "--out", out, "--defenses", "standard,ftml,sem",
		"--attacks", "pwws", "--seed", "3")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, pairedCheckLine) || !strings.Contains(stdout, "| standard | 2 ep --batch 64 --lr 1e-3 | — | — |") {
		t.Errorf("report:\n%s", stdout)
	}
	for _, f := range []string{"table.md", "table.json", "standard"} {
		if _, err := os.Stat(filepath.Join(out, "cnn", f)); !os.IsNotExist(err) {
			t.Errorf("--report wrote %s (%v)", f, err)
		}
	}
}

// The quick recipes keep every defense's own flags and cut the costly
// inner loops.
func TestQuickRecipes(t *testing.T) {
	for _, r := range ftmlRecipes() {
		q := quickRecipe(r)
		if q.Defense != r.Defense || q.Epochs < 1 || q.Epochs > 8 {
			t.Errorf("%s: quick %d epochs, full %d", r.Defense, q.Epochs, r.Epochs)
		}
		args := strings.Join(q.Args, " ")
		if !strings.Contains(args, "--batch 16") {
			t.Errorf("%s: quick args %q lack --batch 16", r.Defense, args)
		}
		if strings.Contains(args, "--lr-decay-epochs") {
			t.Errorf("%s: quick args %q keep the full-run decay", r.Defense, args)
		}
		want := map[string]string{"ascc": "--ascc-steps 3", "atfl": "--atfl-steps 5", "ibp": "--ibp-ramp-epochs 1"}[r.Defense]
		if want != "" && !strings.Contains(args, want) {
			t.Errorf("%s: quick args %q lack %q", r.Defense, args, want)
		}
	}
}

// The Table 1 targets are stated on the cells present, with the right
// verdicts.
func TestFTMLChecks(t *testing.T) {
	cells := []tableCell{
		{Defense: "standard", Column: "clean", Accuracy: 89.7}, {Defense: "standard", Column: "pwws", Accuracy: 0.5},
		{Defense: "ftml", Column: "clean", Accuracy: 86.5}, {Defense: "ftml", Column: "pwws", Accuracy: 76.0},
		{Defense: "ftml", Column: "hla", Accuracy: 60.0},
		{Defense: "sem", Column: "clean", Accuracy: 88.0}, {Defense: "sem", Column: "pwws", Accuracy: 77.0},
		{Defense: "sem", Column: "hla", Accuracy: 50.0},
	}
	got := strings.Join(ftmlChecks(cells, []string{"pwws", "ga", "hla"}, nil), "\n")
	want := strings.Join([]string{
		"clean: FTML 86.5 ≥ standard 89.7 − 3.5: holds",
		"pwws: FTML 76.0 ≥ 70: holds",
		"pwws: FTML 76.0 ≥ sem 77.0: fails",
		"hla: FTML 60.0 ≥ sem 50.0: holds",
	}, "\n")
	if got != want {
		t.Errorf("checks:\n%s\nwant:\n%s", got, want)
	}
	// With the cells' sizes, a margin carries its standard error:
	// √(.76·.24/1000 + .77·.23/200) = 3.3 points.
	for i := range cells {
		cells[i].N = 1000
		if cells[i].Defense == "sem" {
			cells[i].N = 200
		}
	}
	got = strings.Join(ftmlChecks(cells, []string{"pwws"}, nil), "\n")
	if w := "pwws: FTML 76.0 ≥ sem 77.0 (difference -1.0 ± 3.3 SE): fails"; !strings.Contains(got, w) {
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
	cells := []tableCell{
		{Defense: "ftml", Column: "clean", Accuracy: 88, N: 25000}, {Defense: "ftml", Column: "pwws", Accuracy: 50, N: 10},
		{Defense: "sem", Column: "clean", Accuracy: 88, N: 25000}, {Defense: "sem", Column: "pwws", Accuracy: 60, N: 5},
	}
	kept := map[[2]string]map[int]bool{{"ftml", "pwws"}: ftml, {"sem", "pwws"}: sem}
	got := strings.Join(ftmlChecks(cells, []string{"pwws"}, kept), "\n")
	// Differences per example: 0 0 0 1 1, mean 0.4, sample variance 0.3, SE √(0.3/5) = 24.5 points.
	if w := "pwws: FTML 100.0 ≥ sem 60.0 on the 5 examples both attacked (FTML 50.0 on its 10; paired difference +40.0 ± 24.5 SE): holds"; !strings.Contains(got, w) {
		t.Errorf("checks:\n%s\nlack %q", got, w)
	}
	// The same examples on both sides: one line with the sample size.
	for i := 105; i < 110; i++ {
		sem[i] = true
	}
	cells[3] = tableCell{Defense: "sem", Column: "pwws", Accuracy: 80, N: 10}
	got = strings.Join(ftmlChecks(cells, []string{"pwws"}, kept), "\n")
	// Differences: 0 0 0 1 1 -1 -1 -1 -1 -1, mean -0.3, mean square 0.7, sample variance 0.61·10/9, SE √(0.0678) = 26.0 points.
	if w := "pwws: FTML 50.0 ≥ sem 80.0 (paired difference -30.0 ± 26.0 SE over 10): fails"; !strings.Contains(got, w) {
		t.Errorf("checks:\n%s\nlack %q", got, w)
	}
}

// --recipe-epochs changes a row's epochs (IBP's ramp with them), the
// table shows the reference count, and a model trained for other epochs
// is refused instead of filling the row.
func TestFTMLTableRecipeEpochs(t *testing.T) {
	recipes := map[string]tableRecipe{}
	for _, r := range ftmlRecipes() {
		recipes[r.Defense] = r
	}
	if err := overrideEpochs(recipes, "ibp=30,ftml=5"); err != nil {
		t.Fatal(err)
	}
	ibp, ftml := recipes["ibp"], recipes["ftml"]
	if ibp.Epochs != 30 || ibp.Reference != 60 || strings.Join(ibp.Args[:2], " ") != "--ibp-ramp-epochs 20" {
		t.Errorf("ibp recipe %+v", ibp)
	}
	if ftml.Epochs != 5 || ftml.Reference != 20 || strings.Join(ftml.Args, " ") != "--batch 32 --lr 5e-4 --lr-decay-epochs 16" {
		t.Errorf("ftml recipe %+v", ftml)
	}
	for _, bad := range []string{"ibp", "ibp=0", "ibp=x", "nope=3"} {
		if err := overrideEpochs(recipes, bad); err == nil {
			t.Errorf("--recipe-epochs %q accepted", bad)
		}
	}

	dir := t.TempDir()
	syn := filepath.Join(dir, "nb.json")
	writeSynonyms(t, syn)
	old := ftmlTableData
	defer func() { ftmlTableData = old }()
	ftmlTableData = func(string) (*dataset.Dataset, dataset.Preset, error) {
		return synth.SentimentDataset(80, 0, 40, 5), dataset.Preset{Name: "synth", Tokenizer: "whitespace", MaxLen: 30, MinCount: 1}, nil
	}
	out := filepath.Join(dir, "tab")
	args := []string{"bench", "ftml-table", "--data", dir, "--synonyms", syn, "--model", "cnn", "--out", out, "--quick",
		"--defenses", "standard", "--attacks", "pwws", "--n", "4", "--workers", "1"}
	code, stdout, stderr := runCmd(t, append(args, "--recipe-epochs", "standard=1")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "| standard | 1 ep (reference 3 ep) ") {
		t.Errorf("the table does not mark the shortened row:\n%s", stdout)
	}
	// The shortened row kept its checkpoint: more epochs continue it, to
	// the weights a run of that many epochs from scratch reaches, and the
	// shorter model's cells move aside.
	row := filepath.Join(out, "cnn", "standard")
	if _, err := os.Stat(filepath.Join(row, "model.ckpt")); err != nil {
		t.Fatalf("the shortened row kept no checkpoint: %v", err)
	}
	code, stdout, stderr = runCmd(t, append(args, "--recipe-epochs", "standard=2")...)
	if code != 0 || !strings.Contains(stderr, "extending the 1-epoch model to 2 epochs") || !strings.Contains(stdout, "| standard | 2 ep (reference 3 ep) ") {
		t.Fatalf("extending the row: exit %d:\n%s\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(row, "epochs-1", "pwws.json")); err != nil {
		t.Errorf("the 1-epoch cells were not kept aside: %v", err)
	}
	fresh := filepath.Join(dir, "fresh")
	freshArgs := append([]string(nil), args...)
	freshArgs[slices.Index(freshArgs, out)] = fresh
	if code, _, stderr := runCmd(t, append(freshArgs, "--recipe-epochs", "standard=2")...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	extended, err := model.Load(filepath.Join(row, "model"))
	if err != nil {
		t.Fatal(err)
	}
	direct, err := model.Load(filepath.Join(fresh, "cnn", "standard", "model"))
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range extended.Net.Params() {
		if d := tensor.MaxAbsDiff(p.Value.Data, direct.Net.Params()[i].Value.Data); d != 0 {
			t.Fatalf("the extended row's %s differs from a 2-epoch training by %g", p.Name, d)
		}
	}
	// Fewer epochs, or more without a kept checkpoint, are refused.
	if err := os.RemoveAll(filepath.Join(row, "model.ckpt")); err != nil {
		t.Fatal(err)
	}
	for _, again := range [][]string{append(args, "--recipe-epochs", "standard=1"), args} {
		code, _, stderr := runCmd(t, again...)
		if code == 0 || !strings.Contains(stderr, "trained for 2 epochs") || !strings.Contains(stderr, "trained.json") {
			t.Errorf("a 2-epoch model filled a row of another recipe: exit %d: %s", code, stderr)
		}
	}
	if code, _, stderr := runCmd(t, append(args, "--recipe-epochs", "standard=2")...); code != 0 {
		t.Errorf("resuming the same recipe: exit %d: %s", code, stderr)
	}
	// An interrupted training of other epochs is not resumed either.
	if err := os.MkdirAll(filepath.Join(out, "cnn", "sem"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeJSON(filepath.Join(out, "cnn", "sem", "started.json"), map[string]any{"recipe": []string{"--defense", "sem", "--epochs", "9"}}); err != nil {
		t.Fatal(err)
	}
	semArgs := append([]string(nil), args...)
	semArgs[slices.Index(semArgs, "standard")] = "sem"
	if code, _, stderr := runCmd(t, semArgs...); code == 0 || !strings.Contains(stderr, "started.json: the model there trained for 9 epochs, this run asks for 3") {
		t.Errorf("a checkpoint of other epochs was resumed: exit %d: %s", code, stderr)
	}
	// Runs lock rows, not the folder: a row another run holds is refused,
	// while a run on another row goes ahead, and its table shows the held
	// row with the recipe recorded for it.
	if err := os.RemoveAll(filepath.Join(out, "cnn", "sem")); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(out, "cnn", "standard", ".lock")
	if err := os.WriteFile(lock, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(lock)
	if code, _, stderr := runCmd(t, append(args, "--recipe-epochs", "standard=2")...); code == 0 || !strings.Contains(stderr, "in use by process") {
		t.Errorf("a held row was run again: exit %d: %s", code, stderr)
	}
	code, stdout, stderr = runCmd(t, semArgs...)
	if code != 0 || !strings.Contains(stdout, "| standard | 2 ep (reference 3 ep) ") || !strings.Contains(stdout, "| sem | 3 ep ") {
		t.Errorf("a run beside a held row: exit %d:\n%s\n%s", code, stdout, stderr)
	}
}
