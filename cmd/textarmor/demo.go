package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/textarmor/textarmor/experiments"
)

func runDemo(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("demo", "demo [flags]", stderr)
	c := experiments.NewDemoConfig()
	var quiet bool
	fs.Int64Var(&c.Seed, "seed", c.Seed, "random seed for the generated task and training")
	fs.IntVar(&c.Epochs, "epochs", c.Epochs, "training epochs per model")
	fs.StringVar(&c.Out, "out", "", "keep the trained models under this folder (default: a temporary folder, removed)")
	fs.BoolVar(&quiet, "quiet", false, "no progress bars")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if !quiet {
		c.Progress = stderr
	}
	r, err := experiments.RunDemo(context.Background(), c)
	if err != nil {
		return err
	}
	task := r.Task
	fmt.Fprintf(stdout, "textarmor demo: a generated sentiment task (%d train / %d dev / %d test sentences; the label is the majority polarity of 1-3 sentiment words among neutral filler).\n"+
		"Each synonym group has one common word; its synonyms are rare (%.0f%% of draws), so a model sees them a few times only.\n\n",
		task.Train, task.Dev, task.Test, 100*task.Rare)
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "model\tdefense\tparameters\tepochs\ttrain time\tdev acc\ttest acc\ttest macro-F1\tacc under attack\tsuccess rate\t")
	for _, row := range r.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%.1f%%\t%.1f%%\t%.3f\t%.1f%%\t%.1f%%\t\n", row.Arch, row.Defense, row.Params, row.Epochs,
			row.TrainTime.Round(10*time.Millisecond), 100*row.DevAcc, 100*row.TestAcc, row.TestMacroF1,
			100*row.UnderAttack.AccuracyUnderAttack, 100*row.UnderAttack.AttackSuccessRate)
	}
	tw.Flush()
	fmt.Fprintf(stdout, "\nAttack: PWWS (FTML protocol settings: ≤ 25%% words, 21 stop words) on the first %d test sentences, swapping words within the task's synonym groups (e.g. good/fine/decent/nice).\n", task.AttackN)
	fmt.Fprintln(stdout, "\nNext: set TEXTARMOR_DATA to the benchmark data folder and train on real data with 'textarmor train --dataset sst2 --out sst2-cnn'.")
	return nil
}
