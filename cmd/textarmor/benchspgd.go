package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/textarmor/textarmor/experiments"
	"github.com/textarmor/textarmor/internal/cli"
)

// runBenchSPGDTable implements `bench spgd-table`: SPGD's Tables 3 and 1
// at the scale of spgd.md §10, resumably.
func runBenchSPGDTable(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench spgd-table", "bench spgd-table --data DIR --out DIR [flags]", stderr)
	c := experiments.NewSPGDTable()
	df := dataFlags{c.Data}
	df.register(fs, false)
	rows := strings.Join(c.Rows, ",")
	fs.StringVar(&c.Out, "out", c.Out, "output folder: the language model, a folder per row, table.md, table.json (rerun to resume)")
	fs.StringVar(&rows, "rows", rows, "rows: "+strings.Join(experiments.SPGDRows, ", "))
	fs.IntVar(&c.LM.Options.Epochs, "lm-epochs", c.LM.Options.Epochs, "the language model's epochs")
	fs.IntVar(&c.Train.Options.Epochs, "epochs", c.Train.Options.Epochs, "each classifier's epochs (the best on dev is kept)")
	fs.IntVar(&c.Train.TrainN, "train-n", 0, "train the classifiers on a seeded subset of this many examples (0 = all)")
	eps := map[string]*float64{}
	for _, m := range []string{"advt", "iadvt", "spgd"} {
		eps[m] = fs.Float64(m+"-eps", c.Eps[m], m+"'s ε")
	}
	fs.Var((*cli.Floats)(&c.Grid), "eps-grid", "train each adversarial row at every ε of this comma-separated list and keep each method's best on dev (spec §10: 0.5,1,2.5,5,10,25)")
	fs.IntVar(&c.PPLN, "ppl-n", c.PPLN, "test texts of a seed-0 sample that judge the perturbations")
	fs.BoolVar(&c.ReportOnly, "report", false, "print the table from the cells already there, computing and writing nothing")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	c.Data, c.Rows, c.Log = df.Data, cli.SplitList(rows), stderr
	for m, e := range eps {
		c.Eps[m] = *e
	}
	c.Train.TrainSubset = c.Train.TrainN > 0
	rep, err := experiments.RunSPGDTable(context.Background(), c)
	if err != nil {
		return err
	}
	_, err = fmt.Fprint(stdout, rep.Markdown)
	return err
}
