package experiments

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/internal/realdata"
	"github.com/textarmor/textarmor/pipeline"
)

// A tiny CARL table on the shared SST-2 and MiniLM: every row trains and
// is measured on the same examples, the checks compare them pairwise, a
// rerun resumes without training, and a row of other settings is refused.
func TestCARLTableRealData(t *testing.T) {
	dir := realdata.Dir(t)
	if _, err := os.Stat(filepath.Join(dir, "models", "all-MiniLM-L6-v2", "model.safetensors")); err != nil {
		t.Skipf("no MiniLM checkpoint: %v", err)
	}
	c := NewCARLTable(dir)
	c.Datasets, c.Rows, c.Out = []string{"sst2"}, []string{"plain", "freelb", "carl"}, t.TempDir()
	c.Train.TrainN, c.Train.Options.Epochs, c.Train.Data.MaxLen, c.Train.Options.LR = 48, 2, 24, 1e-4
	c.Train.Defense.Settings.CARL.StartEpoch = 1
	c.Train.NoDev = true // the last epoch's model: no dev passes over SST-2's 872
	c.TestN, c.Eps, c.WordN = 24, []float64{0.1}, 0
	rep, err := RunCARLTable(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| carl |", "sst2: clean accuracy (points) carl > freelb", "sst2: cosine at ε 0.1 freelb > plain"} {
		if !strings.Contains(rep.Markdown, want) {
			t.Errorf("table lacks %q:\n%s", want, rep.Markdown)
		}
	}
	log, err := os.ReadFile(filepath.Join(c.Out, "sst2-carl", "train.log.jsonl"))
	if err != nil || !strings.Contains(string(log), `"carl":`) {
		t.Errorf("the CARL row's log has no L_D: %v %s", err, log)
	}
	again, err := RunCARLTable(context.Background(), c)
	if err != nil || again.Markdown != rep.Markdown {
		t.Errorf("the rerun: %v\n%s", err, again.Markdown)
	}
	c.Train.Options.LR = 2e-4
	if _, err := RunCARLTable(context.Background(), c); err == nil || !strings.Contains(err.Error(), "trained.json") {
		t.Errorf("a row of another learning rate: %v", err)
	}
	c.Rows = []string{"plain", "bogus"}
	if _, err := RunCARLTable(context.Background(), c); err == nil || !strings.Contains(err.Error(), "--rows") {
		t.Errorf("an unknown row: %v", err)
	}
}

// The orderings are structured claims (for table.json and the
// reproduction report) whose lines are the table's check lines: here
// freelb beats plain under k-PGD on 6 of 8 examples where plain fails.
func TestCARLChecksAreClaims(t *testing.T) {
	ex := func(attacked ...bool) *pipeline.EmbeddingAttackReport {
		r := &pipeline.EmbeddingAttackReport{}
		for _, a := range attacked {
			r.Examples = append(r.Examples, pipeline.EmbeddingExample{Clean: true, Attacked: a, Cosine: 0.9, Euclidean: 1})
		}
		return r
	}
	all := func(v bool) []bool { return []bool{v, v, v, v, v, v, v, v} }
	cells := map[string]map[string]carlCell{"sst2": {
		"plain":  {PGD: map[string]*pipeline.EmbeddingAttackReport{"0.1": ex(all(false)...)}},
		"freelb": {PGD: map[string]*pipeline.EmbeddingAttackReport{"0.1": ex(true, true, true, true, true, true, false, false)}},
	}}
	claims := carlChecks(CARLTable{Datasets: []string{"sst2"}, Eps: []float64{0.1}}, cells)
	var pgd *Claim
	for i, c := range claims {
		if c.Paper != "CARL/RAR" || c.Table != carlTableName || !c.Paired {
			t.Errorf("claim %+v", c)
		}
		if c.Claim == "sst2: k-PGD ε 0.1 accuracy (points) freelb > plain" {
			pgd = &claims[i]
		}
	}
	if pgd == nil {
		t.Fatalf("no k-PGD claim among %+v", claims)
	}
	// d = 0.75 (75 points), SE = sqrt(0.75·0.25·8/7/8) = 0.1637 (16.4 points): holds.
	if math.Abs(pgd.Difference.Mean-75) > 1e-9 || math.Abs(pgd.Difference.SE-16.366) > 1e-3 || pgd.Verdict != "holds" {
		t.Errorf("k-PGD claim %+v", *pgd)
	}
	if got, want := carlCheckLine(*pgd), "sst2: k-PGD ε 0.1 accuracy (points) freelb > plain: +75.0 ± 16.4: holds"; got != want {
		t.Errorf("line %q, want %q", got, want)
	}
}
