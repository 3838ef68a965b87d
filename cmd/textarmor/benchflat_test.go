package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/attack"
	"github.com/textarmor/textarmor/checkpoint"
	"github.com/textarmor/textarmor/explain"
	"github.com/textarmor/textarmor/metrics"
	"github.com/textarmor/textarmor/model"
)

// TestBenchFLATTable runs the three rows end to end on a generated task,
// checks the table and its checks, that a rerun resumes without training,
// and that changed training flags are refused.
// flatTableFixture writes a small generated task (train, dev, test and a
// synonym table) into a fresh folder.
func flatTableFixture(t *testing.T) (dir, tr, dv, te, syn string) {
	t.Helper()
	dir = t.TempDir()
	tr, dv, te, syn = filepath.Join(dir, "train.csv"), filepath.Join(dir, "dev.csv"), filepath.Join(dir, "test.csv"), filepath.Join(dir, "syn.json")
	writeCSV(t, tr, 200, 1)
	writeCSV(t, dv, 60, 2)
	writeCSV(t, te, 40, 3)
	writeSynonyms(t, syn)
	return dir, tr, dv, te, syn
}

func TestBenchFLATTable(t *testing.T) {
	dir, tr, dv, te, syn := flatTableFixture(t)
	out := filepath.Join(dir, "table")
	small := "--embed-dim 16 --filters 8 --epochs 2 --rounds 1 --round-epochs 1 --round-examples 40 --batch 32"
	args := []string{"bench", "flat-table", "--train", tr, "--dev", dv, "--test", te, "--synonyms", syn,
		"--wordnet", filepath.Join(dir, "no-wordnet"), "--model", "cnn", "--attack", "textfooler", "--max-len", "30",
		"--explain", "ig,lime", "--workers", "2", "--flat-lr", "0.01", "--out", out, "--train-args", small}
	code, stdout, stderr := runCmd(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	t.Logf("table:\n%s", stdout)
	for _, want := range []string{"| CNN-base |", "| CNN-adv (textfooler) |", "| CNN-FLAT (textfooler) |", "AA textfooler", "KT / TI LIME, textfooler",
		"check 11, textfooler: AA(FLAT)", "check 12: SA(FLAT)", "check 13, KT IG textfooler", "Train arguments of every row (each keeps those its defense takes): `" + small + "`."} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, " — |") {
		t.Errorf("table has empty cells:\n%s", stdout)
	}
	md, err := os.ReadFile(filepath.Join(out, "table.md"))
	if err != nil || string(md) != stdout {
		t.Errorf("table.md differs from the printed table (%v)", err)
	}
	var tab struct {
		Values map[string]float64 `json:"values"`
	}
	raw, _ := os.ReadFile(filepath.Join(out, "table.json"))
	if err := json.Unmarshal(raw, &tab); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"flat/sa", "adv/aa/textfooler", "base/kt/textfooler.lime", "adv/ti/textfooler.ig", "adv/pairs/textfooler.lime"} {
		if _, ok := tab.Values[k]; !ok {
			t.Errorf("table.json lacks %s: %v", k, tab.Values)
		}
	}
	// Every ordering check carries its difference's standard error:
	// check 13 √(SE_FLAT² + SE_other²) from the cells' own SEs, check 11
	// the paired one below.
	for _, line := range strings.Split(stdout, "\n") {
		if (strings.HasPrefix(line, "- check 11") || strings.HasPrefix(line, "- check 13, ")) && !strings.Contains(line, " SE): ") && !strings.Contains(line, " SE, ") {
			t.Errorf("check without its standard error: %s", line)
		}
	}
	v := tab.Values
	kt := fmt.Sprintf("check 13, KT IG textfooler: FLAT %.3f ≥ base %.3f (difference %+.3f ± %.3f SE)", v["flat/kt/textfooler.ig"], v["base/kt/textfooler.ig"],
		v["flat/kt/textfooler.ig"]-v["base/kt/textfooler.ig"], math.Hypot(v["flat/kt_se/textfooler.ig"], v["base/kt_se/textfooler.ig"]))
	// Check 11 pairs the rows' results on the same test examples: the SE
	// of the mean per-example difference of "kept its label" (0 or 1).
	d, se := pairedByHand(t, filepath.Join(out, "flat", "textfooler.csv"), filepath.Join(out, "adv", "textfooler.csv"))
	n := int(v["flat/n/textfooler"])
	aa := fmt.Sprintf("check 11, textfooler: AA(FLAT) %.1f > AA(adv) %.1f (paired difference %+.1f ± %.1f SE, %d examples)", v["flat/aa/textfooler"], v["adv/aa/textfooler"],
		100*d, 100*se, n)
	aa += fmt.Sprintf(": %s; AA(FLAT) ≥ AA(adv) − 1: %s", map[bool]string{true: "holds", false: "fails"}[v["flat/aa/textfooler"] > v["adv/aa/textfooler"]],
		map[bool]string{true: "holds", false: "fails"}[v["flat/aa/textfooler"] >= v["adv/aa/textfooler"]-1])
	// Check 13's per-method share: a KT or TI cell holds when FLAT is at
	// least both baselines.
	for _, m := range []string{"ig", "lime"} {
		held := 0
		for _, what := range []string{"kt", "ti"} {
			col := what + "/textfooler." + m
			if v["flat/"+col] >= v["base/"+col] && v["flat/"+col] >= v["adv/"+col] {
				held++
			}
		}
		want := fmt.Sprintf("- check 13 cells, %s: %d of 2 KT/TI cells hold against both baselines", strings.ToUpper(m), held)
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
	for _, want := range []string{kt, aa} {
		if !strings.Contains(stdout, want) || v["flat/kt_se/textfooler.ig"] <= 0 || v["adv/aa_se/textfooler"] <= 0 {
			t.Errorf("table lacks %q (or a zero SE):\n%s", want, stdout)
		}
	}
	// The FLAT row is a masked model trained against textfooler.
	fm, err := model.Load(filepath.Join(out, "flat", "model"))
	if err != nil || !fm.Net.Cfg.Mask || fm.Training["defense"] != "flat" || fm.MaxLen != 30 {
		t.Fatalf("flat row model: max length %d, %v", fm.MaxLen, err)
	}
	// The table reports that model's masks: φ over its vocabulary.
	phi := fm.Net.WordImportance()
	ps := explain.SummarizePhi(phi)
	masks := fmt.Sprintf("FLAT word masks (inference φ over %d vocabulary words): median %.3f; %.1f %% above 0.9, %.1f %% below 0.1, %.1f %% within (0.4, 0.6).",
		len(fm.Vocab.Words())-2, ps.Median, 100*ps.ShareAbove09, 100*ps.ShareBelow01, 100*ps.Share04to06)
	if !strings.Contains(stdout, masks) || v["flat/phi_median"] != ps.Median || ps.Median <= 0 {
		t.Errorf("table lacks %q (table.json median %v):\n%s", masks, v["flat/phi_median"], stdout)
	}
	// A rerun trains and attacks nothing and prints the same table.
	code, again, stderr := runCmd(t, args...)
	if code != 0 || again != stdout || strings.Contains(stderr, ": training") || strings.Contains(stderr, ": attacking") {
		t.Errorf("rerun: exit %d, same table %v, stderr:\n%s", code, again == stdout, stderr)
	}
	// A report asking for no interpretations still finds SA and AA, in the
	// cells the IG and LIME runs wrote.
	if code, plain, _ := runCmd(t, append(append([]string{}, args...), "--report", "--explain", "none")...); code != 0 || strings.Contains(plain, " — |") {
		t.Errorf("--report --explain none: exit %d:\n%s", code, plain)
	}
	// --report prints the table beside a run holding a row's lock and
	// trains, attacks and writes nothing: a removed cell stays missing.
	unlock, err := checkpoint.LockDir(filepath.Join(out, "flat"))
	if err != nil {
		t.Fatal(err)
	}
	lime := filepath.Join(out, "flat", "textfooler.lime.json")
	saved, err := os.ReadFile(lime)
	if err != nil || os.Remove(lime) != nil {
		t.Fatal(err)
	}
	code, report, stderr := runCmd(t, append(append([]string{}, args...), "--report")...)
	unlock()
	if code != 0 || !strings.Contains(report, "| CNN-FLAT (textfooler) |") || !strings.Contains(report, " — |") || strings.Contains(stderr, ": training") || strings.Contains(stderr, ": attacking") {
		t.Errorf("--report: exit %d:\n%s\nstderr:\n%s", code, report, stderr)
	}
	if _, err := os.Stat(lime); !os.IsNotExist(err) {
		t.Errorf("--report recomputed %s", lime)
	}
	if md, err := os.ReadFile(filepath.Join(out, "table.md")); err != nil || string(md) != stdout {
		t.Errorf("--report rewrote table.md (%v)", err)
	}
	if err := os.WriteFile(lime, saved, 0o644); err != nil {
		t.Fatal(err)
	}
	// Another --n is not served by the 40-example cells: each is recomputed
	// from its CSV (the first 30 rows of the same order; nothing trained).
	n30 := append(append([]string{}, args...), "--n", "30")
	code, table30, stderr := runCmd(t, n30...)
	if code != 0 || strings.Count(stderr, "not this run's --n 30: recomputing") != 3*2 || strings.Contains(stderr, ": training") {
		t.Errorf("--n 30 rerun: exit %d:\n%s", code, stderr)
	}
	// The CSVs still hold the 40 examples of the first run; check 11 pairs
	// the 30 the cells cover.
	if strings.Count(table30, "SE, 30 examples)") != 2 {
		t.Errorf("--n 30: check 11 not paired over the cells' 30 examples:\n%s", table30)
	}
	var cell struct {
		N      int `json:"n"`
		BenchN int `json:"bench_n"`
	}
	if raw, err := os.ReadFile(filepath.Join(out, "base", "textfooler.ig.json")); err != nil || json.Unmarshal(raw, &cell) != nil || cell.N != 30 || cell.BenchN != 30 {
		t.Errorf("base IG cell after --n 30: %+v (%v)", cell, err)
	}
	// The worker count does not decide a model: a rerun with another one
	// trains nothing.
	workers1 := append(append([]string{}, args...), "--workers", "1")
	if code, _, stderr := runCmd(t, workers1...); code != 0 || strings.Contains(stderr, ": training") {
		t.Errorf("rerun with --workers 1: exit %d:\n%s", code, stderr)
	}
	// A second run on a row is refused while another run holds the row;
	// a run on the other rows goes ahead, and its table shows every row
	// in the folder, not only its own.
	lock := filepath.Join(out, "base", ".lock")
	if err := os.WriteFile(lock, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCmd(t, args...); code == 0 || !strings.Contains(stderr, "in use by process") {
		t.Errorf("locked row: exit %d: %s", code, stderr)
	}
	others := append(append([]string{}, args...), "--rows", "adv,flat")
	if code, table, stderr := runCmd(t, others...); code != 0 || !strings.Contains(table, "| CNN-base |") || !strings.Contains(table, "check 11") {
		t.Errorf("--rows adv,flat beside a run on base: exit %d:\n%s\nstderr:\n%s", code, table, stderr)
	}
	os.Remove(lock)
	// Other training flags for a finished row are refused.
	args[len(args)-1] = small + " --dropout 0.1"
	if code, _, stderr := runCmd(t, args...); code == 0 || !strings.Contains(stderr, "remove") {
		t.Errorf("changed --train-args: exit %d: %s", code, stderr)
	}
	// A row can take a model trained elsewhere: it is evaluated, not trained,
	// and marked; a model of the wrong kind for the row is refused.
	used := filepath.Join(dir, "used")
	useArgs := []string{"bench", "flat-table", "--train", tr, "--dev", dv, "--test", te, "--synonyms", syn,
		"--wordnet", filepath.Join(dir, "no-wordnet"), "--rows", "flat", "--explain", "none", "--out", used,
		"--use", "flat=" + filepath.Join(out, "flat", "model")}
	code, stdout, stderr = runCmd(t, useArgs...)
	if code != 0 || strings.Contains(stderr, ": training") || !strings.Contains(stdout, "| CNN-FLAT (textfooler) ‡ |") ||
		!strings.Contains(stdout, "model taken from") {
		t.Errorf("--use: exit %d\n%s\n%s", code, stdout, stderr)
	}
	badUse := append(append([]string{}, useArgs[:len(useArgs)-4]...), "--rows", "base", "--out", filepath.Join(dir, "used2"),
		"--use", "base="+filepath.Join(out, "flat", "model"))
	if code, _, stderr := runCmd(t, badUse...); code == 0 || !strings.Contains(stderr, "word mask true") {
		t.Errorf("--use of a masked model as base: exit %d: %s", code, stderr)
	}
	// A model trained on another dataset is refused, naming both.
	other := filepath.Join(dir, "trec-model")
	fm.Training["dataset"] = "trec"
	if err := fm.Save(other); err != nil {
		t.Fatal(err)
	}
	presetDir := filepath.Join(dir, "presets")
	writeSST2Sent(t, presetDir)
	wrongData := []string{"bench", "flat-table", "--dataset", "sst2-sent", "--data", presetDir, "--synonyms", syn,
		"--wordnet", filepath.Join(dir, "no-wordnet"), "--rows", "flat", "--explain", "none", "--out", filepath.Join(dir, "used3"),
		"--use", "flat=" + other}
	if code, _, stderr := runCmd(t, wrongData...); code == 0 || !strings.Contains(stderr, "trained on trec, the table is on sst2-sent") {
		t.Errorf("--use of a TREC model in an SST-2 table: exit %d: %s", code, stderr)
	}
	fm.Training["dataset"] = "sst2-sent"
	if err := fm.Save(other); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCmd(t, wrongData...); code != 0 || !strings.Contains(stderr, "model taken from") {
		t.Errorf("--use of a model trained on the table's dataset: exit %d: %s", code, stderr)
	}
	for _, bad := range [][]string{{"--model", "bilstm"}, {"--attack", "ga"}, {"--rows", "base,x"}, {"--explain", "shap"}, {"--use", "flat"}, {"--use", "x=dir"}} {
		a := append([]string{"bench", "flat-table", "--out", filepath.Join(dir, "bad")}, bad...)
		if code, _, _ := runCmd(t, a...); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
}

// The IMDB default reaches the attacks: a table on the imdb preset attacks
// the first 10,000 test reviews unless --n is given. (The model is taken
// with --use; the attack itself then fails on the empty data folder, after
// printing its command.)
func TestFlatTableIMDBDefaultN(t *testing.T) {
	dir := t.TempDir()
	_, _, mdir := attackFixture(t, dir)
	m, err := model.Load(mdir)
	if err != nil {
		t.Fatal(err)
	}
	m.Training["dataset"] = "imdb"
	if err := m.Save(mdir); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		extra []string
		want  string
	}{{nil, "n 10000"}, {[]string{"--n", "0"}, "n 0"}} {
		args := append([]string{"bench", "flat-table", "--dataset", "imdb", "--data", filepath.Join(dir, "empty"), "--rows", "base",
			"--explain", "none", "--use", "base=" + mdir, "--out", filepath.Join(dir, "t"+strings.Join(c.extra, ""))}, c.extra...)
		_, _, stderr := runCmd(t, args...)
		if !strings.Contains(stderr, ": attacking") || !strings.Contains(stderr, c.want+",") {
			t.Errorf("%v: the attack does not run with %s:\n%s", c.extra, c.want, stderr)
		}
	}
}

// TestBenchFLATTableByRound: --by-round attacks each round's kept model on
// the table's examples; the dev-selected round's model is the row's own, so
// its AA must equal the row's AA.
func TestBenchFLATTableByRound(t *testing.T) {
	dir, tr, dv, te, syn := flatTableFixture(t)
	out := filepath.Join(dir, "table")
	small := "--embed-dim 16 --filters 8 --epochs 2 --rounds 2 --round-epochs 1 --round-examples 40 --batch 32 --round-keep"
	args := []string{"bench", "flat-table", "--train", tr, "--dev", dv, "--test", te, "--synonyms", syn,
		"--wordnet", filepath.Join(dir, "no-wordnet"), "--model", "cnn", "--attack", "textfooler", "--max-len", "30",
		"--explain", "none", "--rows", "base,adv,flat", "--workers", "2", "--flat-lr", "0.01", "--out", out, "--train-args", small, "--by-round"}
	code, stdout, stderr := runCmd(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	t.Logf("table:\n%s", stdout)
	var rec roundsTraining
	raw, err := os.ReadFile(filepath.Join(out, "flat", "model", "config.json"))
	if err == nil {
		err = json.Unmarshal(raw, &rec)
	}
	if err != nil || rec.Config.Training.BestRound == nil || len(rec.Config.Training.RoundStats) != 2 {
		t.Fatalf("flat row's training record: %v %+v", err, rec)
	}
	best := *rec.Config.Training.BestRound
	row, ok, err := readFlatCell(out, "flat", "textfooler")
	if !ok || err != nil {
		t.Fatalf("flat row cell: %v", err)
	}
	want := "| CNN-FLAT (textfooler) | AA textfooler |"
	dev := "| CNN-FLAT (textfooler) | best dev accuracy |"
	sa := "| CNN-FLAT (textfooler) | SA |"
	for r := 1; r <= 2; r++ {
		c, ok, err := readFlatCell(out, "flat", fmt.Sprintf("round%d.textfooler", r))
		if !ok || err != nil || c.N != 40 {
			t.Fatalf("round %d cell: %v (n %d)", r, err, c.N)
		}
		mark := ""
		if r == best {
			mark = " *"
			if c.AfterAttack != row.AfterAttack || c.OriginalAccuracy != row.OriginalAccuracy {
				t.Errorf("selected round %d: SA/AA %v/%v, the row's %v/%v", r, c.OriginalAccuracy, c.AfterAttack, row.OriginalAccuracy, row.AfterAttack)
			}
		}
		want += fmt.Sprintf(" %.1f ± %.1f%s |", 100*c.AfterAttack, 100*metrics.BinomialSE(c.AfterAttack, c.N), mark)
		dev += fmt.Sprintf(" %.2f |", 100*rec.Config.Training.RoundStats[r-1].BestDevAcc)
		sa += fmt.Sprintf(" %.1f |", 100*c.OriginalAccuracy)
	}
	// The other round's cell is that round's own model under attack.
	other := 3 - best
	code, direct, stderr := runCmd(t, "attack", "--model", filepath.Join(out, "flat", fmt.Sprintf("model.round%d", other)), "--recipe", "textfooler", "--protocol", "flat",
		"--test", te, "--synonyms", syn, "--wordnet", filepath.Join(dir, "no-wordnet"), "--n", "40", "--json", "--quiet")
	var d flatCell
	if code != 0 || json.Unmarshal([]byte(direct), &d) != nil {
		t.Fatalf("attack round %d: exit %d: %s", other, code, stderr)
	}
	if c, _, _ := readFlatCell(out, "flat", fmt.Sprintf("round%d.textfooler", other)); c.AfterAttack != d.AfterAttack || c.OriginalAccuracy != d.OriginalAccuracy {
		t.Errorf("round %d cell SA/AA %v/%v, its model attacked directly %v/%v", other, c.OriginalAccuracy, c.AfterAttack, d.OriginalAccuracy, d.AfterAttack)
	}
	// The paired differences: each round against base, and FLAT against
	// adv in the same round, worked out here from the attack CSVs.
	vsBase := "| CNN-FLAT (textfooler) | AA textfooler − base (paired) |"
	vsAdv := "| CNN-FLAT − adv (textfooler) | AA textfooler, same round (paired) |"
	for r := 1; r <= 2; r++ {
		name := fmt.Sprintf("round%d.textfooler.csv", r)
		d, se := pairedByHand(t, filepath.Join(out, "flat", name), filepath.Join(out, "base", "textfooler.csv"))
		vsBase += fmt.Sprintf(" %+.1f ± %.1f |", 100*d, 100*se)
		d, se = pairedByHand(t, filepath.Join(out, "flat", name), filepath.Join(out, "adv", name))
		vsAdv += fmt.Sprintf(" %+.1f ± %.1f |", 100*d, 100*se)
	}
	for _, w := range []string{"| model | | round 1 | round 2 |", want, dev, sa, vsBase, vsAdv, "| CNN-adv (textfooler) | AA textfooler |"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("table lacks %q:\n%s", w, stdout)
		}
	}
	// --report shows the section from the files alone; a rerun attacks nothing.
	if code, report, _ := runCmd(t, "bench", "flat-table", "--train", tr, "--test", te, "--model", "cnn", "--rows", "base,adv,flat", "--explain", "none", "--out", out, "--report"); code != 0 || !strings.Contains(report, want) {
		t.Errorf("--report lacks %q:\n%s", want, report)
	}
	if code, _, stderr := runCmd(t, args...); code != 0 || strings.Contains(stderr, ": attacking") {
		t.Errorf("rerun: exit %d, stderr:\n%s", code, stderr)
	}
	// Cells made on other weights are refused, not reused or resumed: put
	// round 1's model where round 2's was.
	r1, err := model.Load(filepath.Join(out, "flat", "model.round1"))
	if err != nil {
		t.Fatal(err)
	}
	if err := r1.Save(filepath.Join(out, "flat", "model.round2")); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCmd(t, args...); code == 0 || !strings.Contains(stderr, "round2.textfooler.csv and its summaries are attacks on other weights") {
		t.Errorf("rerun with another round-2 model: exit %d, stderr:\n%s", code, stderr)
	}
}

// pairedByHand is AA(a) − AA(b) over the test examples both CSVs hold, with
// the SE of the mean per-example difference of "kept its label".
func pairedByHand(t *testing.T, a, b string) (diff, se float64) {
	t.Helper()
	kept := func(path string) map[int]float64 {
		rs, _, err := attack.ReadCSV(path)
		if err != nil {
			t.Fatal(err)
		}
		m := map[int]float64{}
		for _, r := range rs {
			m[r.Index] = map[bool]float64{true: 1}[r.Type == attack.Failed]
		}
		return m
	}
	ka, kb := kept(a), kept(b)
	var xs []float64
	for i, x := range ka {
		if y, ok := kb[i]; ok {
			xs = append(xs, x-y)
		}
	}
	// The SE of a mean: sample standard deviation (n − 1) over √n.
	n := float64(len(xs))
	var mean, ss float64
	for _, x := range xs {
		mean += x / n
	}
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / (n - 1) / n)
}

// flatCell and roundsTraining are what the by-round test reads of a cell
// and of a row's training record.
type flatCell struct {
	OriginalAccuracy float64 `json:"original_accuracy"`
	AfterAttack      float64 `json:"accuracy_under_attack"`
	N                int     `json:"n"`
}

type roundsTraining struct {
	Config struct {
		Training struct {
			BestRound  *int `json:"best_round"`
			RoundStats []struct {
				BestDevAcc float64 `json:"best_dev_acc"`
			} `json:"round_stats"`
		} `json:"training"`
	} `json:"config"`
}

func readFlatCell(out, row, name string) (flatCell, bool, error) {
	var c flatCell
	raw, err := os.ReadFile(filepath.Join(out, row, name+".json"))
	if os.IsNotExist(err) {
		return c, false, nil
	}
	if err == nil {
		err = json.Unmarshal(raw, &c)
	}
	return c, err == nil, err
}

// --seeds 2 trains every row twice: instance 0 in the block's folder (the
// single-seed layout), instance 1 in seed-1 with another training seed,
// both attacked on the same examples; the table shows each cell over both
// and table.json holds the claims over both.
func TestBenchFLATTableSeeds(t *testing.T) {
	dir, tr, dv, te, syn := flatTableFixture(t)
	out := filepath.Join(dir, "table")
	small := "--embed-dim 16 --filters 8 --epochs 2 --rounds 1 --round-epochs 1 --round-examples 40 --batch 32"
	args := []string{"bench", "flat-table", "--train", tr, "--dev", dv, "--test", te, "--synonyms", syn,
		"--wordnet", filepath.Join(dir, "no-wordnet"), "--model", "cnn", "--attack", "textfooler", "--max-len", "30",
		"--explain", "ig", "--workers", "2", "--flat-lr", "0.01", "--out", out, "--train-args", small, "--seeds", "2"}
	code, stdout, stderr := runCmd(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	t.Logf("table:\n%s", stdout)
	for _, want := range []string{"Every row trained 2 times (training seeds 1, 2)", "| CNN-FLAT (textfooler) |", "check 11, textfooler: AA(FLAT) > AA(base)",
		"check 12: SA(FLAT) ≥ SA(base) − 2.5", "over 2 seeds", "per seed"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q", want)
		}
	}
	for _, row := range []string{"base", "adv", "flat"} {
		for _, inst := range []string{out, filepath.Join(out, "seed-1")} {
			if _, err := os.Stat(filepath.Join(inst, row, "textfooler.csv")); err != nil {
				t.Errorf("instance %s row %s: %v", inst, row, err)
			}
		}
	}
	// The instances differ: another training seed, recorded.
	var r0, r1 struct {
		Identity map[string]any `json:"identity"`
	}
	for p, v := range map[string]any{filepath.Join(out, "base", "trained.json"): &r0, filepath.Join(out, "seed-1", "base", "trained.json"): &r1} {
		raw, err := os.ReadFile(p)
		if err != nil || json.Unmarshal(raw, v) != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	if r0.Identity["seed"] != 1.0 || r1.Identity["seed"] != 2.0 {
		t.Errorf("training seeds %v and %v, want 1 and 2", r0.Identity["seed"], r1.Identity["seed"])
	}
	var tab struct {
		Claims []struct {
			Claim      string               `json:"claim"`
			Verdict    string               `json:"verdict"`
			Paired     bool                 `json:"paired"`
			Difference metrics.SeedEstimate `json:"difference"`
		} `json:"claims"`
		Seeds []int64 `json:"seeds"`
	}
	raw, _ := os.ReadFile(filepath.Join(out, "table.json"))
	if err := json.Unmarshal(raw, &tab); err != nil {
		t.Fatal(err)
	}
	if len(tab.Seeds) != 2 || len(tab.Claims) == 0 {
		t.Fatalf("table.json: seeds %v, %d claims", tab.Seeds, len(tab.Claims))
	}
	for _, c := range tab.Claims {
		if len(c.Difference.PerSeed) != 2 || (c.Verdict != "holds" && c.Verdict != "fails" && c.Verdict != "tie") {
			t.Errorf("claim %q: %d seeds, verdict %q", c.Claim, len(c.Difference.PerSeed), c.Verdict)
		}
		if (strings.HasPrefix(c.Claim, "check 11") || strings.HasPrefix(c.Claim, "check 12")) && !c.Paired {
			t.Errorf("claim %q is not paired", c.Claim)
		}
	}
	// A rerun resumes every instance: nothing is trained again.
	code, _, stderr = runCmd(t, args...)
	if code != 0 || strings.Count(stderr, "model exists, skipping training") != 6 {
		t.Errorf("rerun: exit %d, stderr:\n%s", code, stderr)
	}
}

// bench reproduction writes the report of a table folder atomically and
// names a path it cannot read.
func TestBenchReproduction(t *testing.T) {
	dir := t.TempDir()
	table := filepath.Join(dir, "t")
	if err := os.MkdirAll(table, 0o755); err != nil {
		t.Fatal(err)
	}
	js := `{"arch": "cnn", "dataset": "imdb", "n": 1000, "cells": [], "paper": {}, "checks": ["pwws: FTML 80.0 ≥ 70: holds"]}`
	if err := os.WriteFile(filepath.Join(table, "table.json"), []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "reproduction.md")
	code, _, stderr := runCmd(t, "bench", "reproduction", "--out", out, table)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	md, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(md), "| pwws: FTML 80.0 ≥ 70 | FTML 81.1 | holds |") {
		t.Errorf("report (%v):\n%s", err, md)
	}
	if code, _, stderr := runCmd(t, "bench", "reproduction", filepath.Join(dir, "missing")); code == 0 || !strings.Contains(stderr, "missing") {
		t.Errorf("missing table: exit %d, %s", code, stderr)
	}
	if code, _, _ := runCmd(t, "bench", "reproduction"); code == 0 {
		t.Error("no tables: want a usage error")
	}
}
