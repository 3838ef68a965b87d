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
