package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/textarmor/textarmor/experiments"
	"github.com/textarmor/textarmor/internal/cli"
	"github.com/textarmor/textarmor/pipeline"
)

// runBenchFLATTable implements `bench flat-table`: FLAT's Tables 2, 3 and
// 8 for one dataset, model and training attack (base, adv and FLAT rows).
func runBenchFLATTable(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench flat-table", "bench flat-table (--dataset NAME | --train FILE --test FILE) --model cnn|lstm --attack textfooler|pwws --out DIR [flags]", stderr)
	c := experiments.NewFLATTable()
	var df dataFlags
	df.register(fs, true)
	var rows, attacks, methods, trainArgs string
	var use cli.List
	var report bool
	var seeds cli.Seeds
	fs.StringVar(&c.Out, "out", "", "output folder: one folder per row (model, training log, attack CSVs and JSON summaries), table.md, table.json; rerun to resume (required)")
	fs.StringVar(&c.Arch, "model", c.Arch, "architecture: cnn or lstm, FLAT's (spec §5)")
	fs.StringVar(&c.TrainAttack, "attack", c.TrainAttack, "attack the adv and FLAT rows train against: textfooler or pwws")
	fs.StringVar(&attacks, "attacks", "", "attacks to evaluate every row with, comma-separated (default: --attack; the other one is Table 4's unforeseen attack)")
	fs.StringVar(&rows, "rows", strings.Join(c.Rows, ","), "rows to train and evaluate")
	fs.StringVar(&methods, "explain", strings.Join(c.Explain, ","), "interpretation agreement (KT, TI) with ig, lime or both (ig,lime); \"none\" for none")
	fs.IntVar(&c.N, "n", c.N, "attacked test examples, the first N in file order (default: the paper's protocol, the whole test set but IMDB's first 10,000; 0 = the whole test set)")
	fs.IntVar(&c.Workers, "workers", c.Workers, "examples attacked in parallel, in the rounds' attacks and in the evaluation")
	fs.StringVar(&trainArgs, "train-args", "", "extra train flags for every row, space-separated (e.g. \"--embeddings V --freeze-embeddings\"); they come last and override the defaults")
	fs.Float64Var(&c.FlatLR, "flat-lr", c.FlatLR, "FLAT's learning rate (spec: 0.005, which collapsed the word masks on frozen vectors here; spec F16 allows tuning)")
	fs.StringVar(&c.Synonyms, "synonyms", "", "counter-fitted neighbour JSON for the attacks (default: under --data)")
	fs.StringVar(&c.WordNet, "wordnet", "", "WordNet dict directory for the attacks (default: the system's)")
	fs.Var(&use, "use", "ROW=DIR: take a row's model from DIR (trained elsewhere, e.g. with textarmor train) instead of training it; repeatable")
	fs.BoolVar(&c.ByRound, "by-round", false, "also attack each round's best-dev model of the adv and FLAT rows (ROW/model.roundR, kept by --train-args --round-keep) with every --attacks on the same examples, and print their AA by round (no interpretations)")
	fs.BoolVar(&report, "report", false, "print the table and its checks from the cells already there, training, attacking and writing nothing (safe beside a running block)")
	fs.Var(&seeds, "seeds", "train every row several times: a count N (instances 0..N-1) or offsets 0,1,2; instance k trains with seed 1+k and is attacked on the same examples, in DIR/seed-k (instance 0: DIR itself, the single-seed layout); cells show mean ± SD [min–max], claims a SE with the seed-to-seed variance")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	c.Data, c.Log, c.Seeds = df.Data, stderr, seeds
	c.Attacks, c.Rows = cli.SplitList(attacks), cli.SplitList(rows)
	c.Explain = nil
	for _, m := range cli.SplitList(methods) {
		if m != "none" {
			c.Explain = append(c.Explain, m)
		}
	}
	c.Use = map[string]string{}
	for _, u := range use {
		row, dir, ok := strings.Cut(u, "=")
		if !ok || dir == "" {
			return usageError{fmt.Errorf("--use %q: want ROW=DIR with ROW base, adv or flat", u)}
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			return err
		}
		c.Use[row] = abs
	}
	if trainArgs != "" {
		apply, _, err := trainOverlay("--train-args", strings.Fields(trainArgs))
		if err != nil {
			return err
		}
		c.TuneNote = trainArgs
		c.Tune = func(row string, tc *pipeline.TrainConfig) error {
			// The rounds' flags are not base's, FLAT's own not adv's.
			apply(tc, func(name string) bool {
				return row == "flat" || (row == "adv" && !strings.HasPrefix(name, "flat-")) || (row == "base" && !slices.Contains(flatOnly, name))
			})
			return nil
		}
	}
	var rep *experiments.FLATReport
	var err error
	if report {
		rep, err = experiments.ReportFLATTable(c)
	} else {
		rep, err = experiments.RunFLATTable(context.Background(), c)
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprint(stdout, rep.Markdown)
	return err
}
