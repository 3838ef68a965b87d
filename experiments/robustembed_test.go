package experiments

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/text"
)

// embedTableData writes a tiny Hugging Face checkpoint under
// DIR/models/all-MiniLM-L6-v2, STS-B dev and test files, a synonym table
// at its default place and a training corpus.
func embedTableData(t *testing.T) (dir, corpus string) {
	t.Helper()
	dir = t.TempDir()
	words := strings.Fields("the a film movie plot story good great fine bad awful poor long short dull funny")
	wp, err := text.NewWordPiece(append([]string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "."}, words...), text.DefaultWordPieceOptions())
	if err != nil {
		t.Fatal(err)
	}
	cfg := nn.DefaultConfig("transformer")
	tc := *cfg.Transformer
	tc.Layers, tc.Intermediate, tc.MaxPositions, tc.Pool, tc.Pooler = 1, 32, 32, "pooler", true
	cfg.Transformer, cfg.EmbedDim = &tc, 16
	opts := wp.Options()
	m, err := model.NewTransformer(model.Meta{Net: cfg, Tokenizer: "whitespace", MaxLen: 32, Classes: []string{"0", "1"}, Pieces: &opts}, wp, rand.New(rand.NewSource(1)))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.ExportHF(filepath.Join(dir, "models", "all-MiniLM-L6-v2"), false); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(2))
	sent := func() string {
		s := make([]string, 3+r.Intn(4))
		for i := range s {
			s[i] = words[r.Intn(len(words))]
		}
		return strings.Join(s, " ")
	}
	var c strings.Builder
	for range 64 {
		c.WriteString(sent() + " .\n")
	}
	corpus = filepath.Join(dir, "corpus.txt")
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(corpus, []byte(c.String()), 0o644))
	must(os.MkdirAll(filepath.Join(dir, "stsb"), 0o755))
	for _, split := range []string{"dev", "test"} {
		var b strings.Builder
		for i := range 20 {
			fmt.Fprintf(&b, "g\tf\t2012\t%04d\t%.1f\t%s\t%s\n", i, float64(i%6), sent(), sent())
		}
		must(os.WriteFile(filepath.Join(dir, "stsb", "sts-"+split+".csv"), []byte(b.String()), 0o644))
	}
	syn := map[string][]string{"good": {"great", "fine"}, "great": {"good", "fine"}, "fine": {"good", "great"}, "bad": {"awful", "poor"},
		"awful": {"bad", "poor"}, "poor": {"bad", "awful"}, "film": {"movie"}, "movie": {"film"}, "plot": {"story"}, "story": {"plot"}}
	raw, _ := json.Marshal(syn)
	must(os.MkdirAll(filepath.Join(dir, "counterfitted-neighbors-jia2019"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "counterfitted-neighbors-jia2019", "counterfitted_neighbors.json"), raw, 0o644))
	return dir, corpus
}

// The table trains its SimCSE row, scores STS and AdvSTS for both rows,
// resumes without recomputing, and refuses a row trained otherwise.
func TestRobustEmbedTable(t *testing.T) {
	dir, corpus := embedTableData(t)
	c := NewRobustEmbedTable()
	c.DataDir, c.Out, c.Rows, c.STSSets, c.AdvSets, c.AdvAttacks, c.AdvN, c.Workers = dir, filepath.Join(dir, "tab"), []string{"start", "simcse", "robustembed"},
		[]string{"stsb"}, []string{"stsb"}, []string{"textfooler"}, 10, 2
	c.Train.Corpus, c.Train.EvalEvery, c.Train.MaxLen = corpus, 2, 16
	c.Tasks, c.TransferTasks = nil, nil // Tables 2 and 3: TestRobustEmbedTableTasks
	c.Train.RobustEmbed.K, c.Train.RobustEmbed.T = 1, 1
	c.Train.Options.Epochs, c.Train.Options.BatchSize, c.Train.Options.LR = 1, 16, 1e-3
	rep, err := RunRobustEmbedTable(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range c.Rows {
		if _, ok := rep.STS[row]["stsb"]; !ok {
			t.Errorf("%s: no STS-B cell: %v", row, rep.STS)
		}
		cell, ok := rep.Adv[row]["textfooler/stsb"]
		if !ok || cell.N != 10 || cell.Skipped+cell.Successful+cell.Failed != 10 {
			t.Errorf("%s: AdvSTS cell %+v", row, cell)
		}
	}
	if len(rep.Claims) != 1 {
		t.Fatalf("claims %+v", rep.Claims)
	}
	cl := rep.Claims[0]
	if cl.Paper != "RobustEmbed" || cl.Claim != "textfooler stsb: success rate (points) RobustEmbed < SimCSE" || cl.PaperValue != "SimCSE 21.07, RobustEmbed 7.48" ||
		!cl.Paired || cl.Seeds() != 1 || cl.Difference.N < 2 || cl.Difference.N > 10 || !contains([]string{"holds", "tie", "fails"}, cl.Verdict) {
		t.Errorf("claim %+v", cl)
	}
	if !strings.Contains(rep.Markdown, "- "+cl.Line()) {
		t.Errorf("the claim's line is not in the table:\n%s", rep.Markdown)
	}
	if !strings.Contains(rep.Markdown, "| simcse |") || !strings.Contains(rep.Markdown, "Table 4") {
		t.Errorf("markdown:\n%s", rep.Markdown)
	}
	stat := func() int64 {
		st, err := os.Stat(filepath.Join(c.Out, "simcse", "sts.json"))
		if err != nil {
			t.Fatal(err)
		}
		return st.ModTime().UnixNano()
	}
	before := stat()
	if _, err := RunRobustEmbedTable(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if stat() != before {
		t.Error("a rerun recomputed a cell")
	}
	c.Train.Options.LR = 2e-3
	if _, err := RunRobustEmbedTable(context.Background(), c); err == nil || !strings.Contains(err.Error(), "remove") {
		t.Errorf("a row trained with another lr was accepted: %v", err)
	}
	c.Rows = []string{"bert"}
	if _, err := RunRobustEmbedTable(context.Background(), c); err == nil {
		t.Error("an unknown row accepted")
	}
}

// Table 3: a row's encoder initialises a classifier fine-tuned on a task
// (MR's file format, generated), attacked in two repetitions.
func TestRobustEmbedTableTasks(t *testing.T) {
	dir, _ := embedTableData(t)
	r := rand.New(rand.NewSource(5))
	pos, neg := []string{"good", "great", "fine"}, []string{"bad", "awful", "poor"}
	var b strings.Builder
	for i := range 240 {
		label, ws := i%2, pos
		if label == 0 {
			ws = neg
		}
		fmt.Fprintf(&b, "%d\tthe %s film was %s\n", label, []string{"long", "short", "dull"}[r.Intn(3)], ws[r.Intn(3)])
	}
	if err := os.MkdirAll(filepath.Join(dir, "mr"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mr", "rt-polarity.utf8.tsv"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	c := NewRobustEmbedTable()
	c.DataDir, c.Out, c.Rows, c.STSSets, c.AdvAttacks, c.Workers = dir, filepath.Join(dir, "tab"), []string{"start"}, []string{"stsb"}, nil, 2
	c.Tasks, c.TaskAttacks, c.TrainN, c.TaskN, c.Reps, c.TaskMaxLen = []string{"mr"}, []string{"textfooler"}, 0, 6, 2, 16
	c.TransferTasks = []string{"mr"} // Table 2 on the same file
	rep, err := RunRobustEmbedTable(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	cell, ok := rep.Task["start"]["mr/textfooler"]
	if !ok || cell.N != 12 || cell.Reps != 2 {
		t.Fatalf("Table 3 cell %+v (%v)", cell, rep.Task)
	}
	if acc := rep.Transfer["start"]["mr"]; !(acc > 0) {
		t.Errorf("Table 2: %v", rep.Transfer)
	}
	if !strings.Contains(rep.Markdown, "Table 3") || !strings.Contains(rep.Markdown, "mr textfooler") || !strings.Contains(rep.Markdown, "Table 2") {
		t.Errorf("markdown:\n%s", rep.Markdown)
	}
	for _, f := range []string{"model", "trained.json", "textfooler-rep0.csv", "textfooler-rep1.csv"} {
		if _, err := os.Stat(filepath.Join(c.Out, "start", "mr", f)); err != nil {
			t.Error(err)
		}
	}
}
