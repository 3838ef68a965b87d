package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/defense"
	"github.com/textarmor/textarmor/experiments"
	"github.com/textarmor/textarmor/internal/synth"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/pipeline"
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
		"clean: FTML", "pwws: FTML", "≥ 70 (± ", "hla: FTML", "≥ sem ", "≥ ibp ", "paired difference"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
	var tab struct {
		Cells []experiments.FTMLCell `json:"cells"`
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
	var hla experiments.FTMLCell
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
	var cert, ibpClean experiments.FTMLCell
	for name, c := range map[string]*experiments.FTMLCell{"certified": &cert, "clean": &ibpClean} {
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
	ibpSyn, _, err := pipeline.LoadSynonyms(syn, dir, ibpModel.Vocab, 8)
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
	var a, b experiments.FTMLCell
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
	if !strings.Contains(stdout, "| ibp | 12 ep (reference 1 ep) ibp-ramp-epochs 8, batch 16, lr 0.001, --input-layer=16 --head-hidden=12 --clip=5 |") || !strings.Contains(stdout, "| sem |") || !strings.Contains(stdout, " n=8") {
		t.Errorf("the folder's other rows are not shown as recorded:\n%s", stdout)
	}
}

// --recipe-epochs changes a row's epochs (IBP's ramp with them), the
// table shows the reference count, and a model trained for other epochs
// is refused instead of filling the row.
func TestFTMLTableRecipeEpochs(t *testing.T) {
	recipes, err := tableRecipes(experiments.FTMLRecipes(), false, "ibp=30,ftml=5", nil)
	if err != nil {
		t.Fatal(err)
	}
	ibp, ftml := recipes["ibp"], recipes["ftml"]
	if ibp.Epochs != 30 || ibp.Reference != 60 || ibp.IBPRampEpochs != 20 {
		t.Errorf("ibp recipe %+v", ibp)
	}
	if ftml.Epochs != 5 || ftml.Reference != 20 || ftml.Batch != 32 || ftml.LR != 5e-4 || !slices.Equal(ftml.DecayEpochs, []int{16}) {
		t.Errorf("ftml recipe %+v", ftml)
	}
	for _, bad := range []string{"ibp", "ibp=0", "ibp=x", "nope=3"} {
		if _, err := tableRecipes(experiments.FTMLRecipes(), false, bad, nil); err == nil {
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
	if err := experiments.WriteJSON(filepath.Join(out, "cnn", "sem", "started.json"), map[string]any{"identity": map[string]any{"epochs": 9}, "epochs": 9}); err != nil {
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
