package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/textarmor/textarmor/experiments"
	"github.com/textarmor/textarmor/internal/cli"
)

// runBenchCARLTable implements `bench carl-table`: CARL/RAR's Tables 2, 4
// and 5 at the scale of carl-rar.md §9, resumably.
func runBenchCARLTable(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench carl-table", "bench carl-table --data DIR --out DIR [flags]", stderr)
	var dir string
	c := experiments.NewCARLTable("")
	sets, rows, words := strings.Join(c.Datasets, ","), strings.Join(c.Rows, ","), strings.Join(c.WordAttacks, ",")
	fs.StringVar(&dir, "data", "../shared/data", "the shared data folder (datasets and models/all-MiniLM-L6-v2)")
	fs.StringVar(&c.Out, "out", c.Out, "output folder: a folder per dataset and row, table.md, table.json (rerun to resume)")
	fs.StringVar(&sets, "datasets", sets, "datasets: "+strings.Join(experiments.CARLDatasets, ", "))
	fs.StringVar(&rows, "rows", rows, "rows: "+strings.Join(experiments.CARLRows, ", "))
	fs.IntVar(&c.Train.Options.Epochs, "epochs", c.Train.Options.Epochs, "each row's epochs (the best on dev is kept)")
	fs.IntVar(&c.Train.TrainN, "train-n", c.Train.TrainN, "train on a seeded subset of this many examples (0 = all)")
	fs.IntVar(&c.Train.Data.MaxLen, "max-len", c.Train.Data.MaxLen, "word pieces per text")
	fs.Float64Var(&c.Train.Options.LR, "lr", c.Train.Options.LR, "learning rate")
	fs.IntVar(&c.Train.Defense.Settings.CARL.StartEpoch, "carl-start-epoch", c.Train.Defense.Settings.CARL.StartEpoch, "carl: L_D joins after this many epochs")
	fs.IntVar(&c.TestN, "test-n", c.TestN, "test examples of a seed-0 sample measured per dataset")
	fs.Var((*cli.Floats)(&c.Eps), "eps", "k-PGD's ε grid")
	fs.StringVar(&words, "word-attacks", words, "word-level recipes run on --word-n examples")
	fs.IntVar(&c.WordN, "word-n", c.WordN, "test examples of a seed-0 sample each word-level attack runs on (0 = none)")
	fs.BoolVar(&c.ReportOnly, "report", false, "print the table from the cells already there, computing and writing nothing")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	c.Train.TrainSubset = c.Train.TrainN > 0
	c.Data.Dir, c.Train.FineTune.Init = dir, experiments.NewCARLTable(dir).Train.FineTune.Init
	c.Datasets, c.Rows, c.WordAttacks, c.Log = cli.SplitList(sets), cli.SplitList(rows), cli.SplitList(words), stderr
	rep, err := experiments.RunCARLTable(context.Background(), c)
	if err != nil {
		return err
	}
	_, err = fmt.Fprint(stdout, rep.Markdown)
	return err
}
