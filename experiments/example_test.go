package experiments_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/experiments"
	"github.com/textarmor/textarmor/internal/synth"
	"github.com/textarmor/textarmor/metrics"
)

// Reproduce a (tiny) FTML Table 1: a standard and an FTML row trained on
// a generated task and attacked with PWWS on the same 6 examples, as
// `textarmor bench ftml-table --quick` does on IMDB. A rerun into the same
// folder resumes: it trains and attacks nothing it finds there.
func ExampleRunFTMLTable() {
	dir, err := os.MkdirTemp("", "textarmor-table")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	synonyms := filepath.Join(dir, "synonyms.json")
	raw, _ := json.Marshal(synth.DefaultLexicon().Synonyms())
	if err := os.WriteFile(synonyms, raw, 0o644); err != nil {
		fmt.Println(err)
		return
	}
	c := experiments.NewFTMLTable()
	c.Dataset = synth.SentimentDataset(120, 0, 40, 5)
	c.Preset = dataset.Preset{Name: "synth", Tokenizer: "whitespace", MaxLen: 30, MinCount: 1}
	c.Quick, c.Out, c.Synonyms = true, dir, synonyms
	c.Defenses, c.Attacks, c.N, c.Workers = []string{"standard", "ftml"}, []string{"pwws"}, 6, 2
	rep, err := experiments.RunFTMLTable(context.Background(), c)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(rep.Cells), "cells")
	for _, line := range strings.Split(rep.Markdown, "\n") {
		if strings.HasPrefix(line, "| Defense") {
			fmt.Println(line)
		}
	}
	for _, check := range rep.Checks {
		fmt.Println(check[:strings.Index(check, ":")])
	}
	// Output:
	// 4 cells
	// | Defense | recipe | Clean | PWWS |
	// clean
	// pwws
}

// The reproduction report of one multi-seed table: a claim's margin over
// three trained instances, with its verdict.
func ExampleReproductionMarkdown() {
	c := experiments.Claim{Paper: "FTML", Table: "Table 1, IMDB, cnn", Claim: "pwws: FTML ≥ sem", PaperValue: "FTML 81.1, sem 62.2",
		Ours:       "FTML 70.0 ± 2.0 [68.0–72.0], sem 50.0 ± 3.0 [47.0–53.0]",
		Difference: metrics.SeedEstimate{Mean: 20, SE: 4, PerSeed: []float64{17, 20, 23}, N: 100}, Paired: true, Verdict: "holds"}
	md := experiments.ReproductionMarkdown([]*experiments.ReproTable{{Source: "ftml/cnn/table.json", Paper: "FTML", Table: c.Table,
		Seeds: []int64{0, 1, 2}, Claims: []experiments.Claim{c}}}, "")
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "| FTML") || strings.HasPrefix(line, "| pwws") {
			fmt.Println(line)
		}
	}
	// Output:
	// | FTML | Table 1, IMDB, cnn | 3 seeds | 1 | 1 | 0 | 0 |
	// | pwws: FTML ≥ sem | FTML 81.1, sem 62.2 | FTML 70.0 ± 2.0 [68.0–72.0], sem 50.0 ± 3.0 [47.0–53.0] | +20.0 ± 4.0 (paired, 100 ex.); per seed +17.0 to +23.0 | **holds** | — |
}
