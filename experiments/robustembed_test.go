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
	c.DataDir, c.Out, c.Rows, c.STSSets, c.AdvSets, c.AdvAttacks, c.AdvN, c.Workers = dir, filepath.Join(dir, "tab"), []string{"start", "simcse"},
		[]string{"stsb"}, []string{"stsb"}, []string{"textfooler"}, 10, 2
	c.Train.Corpus, c.Train.EvalEvery, c.Train.MaxLen = corpus, 2, 16
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
