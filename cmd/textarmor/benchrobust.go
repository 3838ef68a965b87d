package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/textarmor/textarmor/experiments"
	"github.com/textarmor/textarmor/internal/cli"
)

// runBenchRobustEmbedTable implements `bench robustembed-table` (RobustEmbed
// Tables 1 and 4).
func runBenchRobustEmbedTable(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench robustembed-table", "bench robustembed-table --data DIR --out DIR [flags]", stderr)
	c := experiments.NewRobustEmbedTable()
	tr, o := &c.Train, &c.Train.Options
	rows, sets, atks, advSets := strings.Join(c.Rows, ","), strings.Join(c.STSSets, ","), strings.Join(c.AdvAttacks, ","), strings.Join(c.AdvSets, ",")
	tasks, taskAtks, transfer := strings.Join(c.Tasks, ","), strings.Join(c.TaskAttacks, ","), strings.Join(c.TransferTasks, ",")
	fs.StringVar(&c.DataDir, "data", defaultDataDir(), "data folder (STS sets, corpus, synonyms; env TEXTARMOR_DATA)")
	fs.StringVar(&c.Init, "init", "", "checkpoint every row starts from (default DATA/models/all-MiniLM-L6-v2)")
	fs.StringVar(&c.Out, "out", c.Out, "output folder: a folder per row (model, cells), table.md, table.json (rerun to resume)")
	fs.StringVar(&rows, "rows", rows, "rows: start (the checkpoint as it is), simcse, robustembed")
	fs.StringVar(&sets, "sts-sets", sets, "Table 1's columns (eval-sts names)")
	fs.StringVar(&transfer, "transfer-tasks", transfer, "Table 2's columns (eval-transfer names; '' = none)")
	fs.StringVar(&atks, "adv-attacks", atks, "Table 4's recipes (bae and bert-attack need --mlm)")
	fs.StringVar(&advSets, "adv-sets", advSets, "Table 4's test splits: stsb, sickr")
	fs.IntVar(&c.AdvN, "adv-n", c.AdvN, "pairs attacked per split (the first N)")
	fs.StringVar(&c.MLM, "mlm", "", "masked-LM directory for bae and bert-attack ('mlm train-head')")
	fs.StringVar(&tasks, "tasks", tasks, "Table 3's tasks (dataset presets; '' = none): each row's encoder fine-tuned on each")
	fs.StringVar(&taskAtks, "task-attacks", taskAtks, "Table 3's recipes")
	fs.IntVar(&c.TrainN, "train-n", c.TrainN, "Table 3: a seeded subset of each task's training split (0 = all)")
	fs.IntVar(&c.TaskN, "task-n", c.TaskN, "Table 3: test examples attacked per repetition")
	fs.IntVar(&c.Reps, "reps", c.Reps, "Table 3: repetitions, each on its own seeded sample (spec: 5)")
	fs.IntVar(&tr.Sentences, "sentences", 0, "training rows: a seeded sample of the offline corpus (0 = all)")
	fs.StringVar(&tr.Corpus, "corpus", "", "training rows: one sentence per line instead of the offline corpus")
	fs.IntVar(&o.Epochs, "epochs", o.Epochs, "training rows: epochs")
	fs.IntVar(&o.BatchSize, "batch", o.BatchSize, "training rows: sentences per batch")
	fs.Float64Var(&o.LR, "lr", o.LR, "training rows: AdamW learning rate")
	fs.IntVar(&tr.EvalEvery, "eval-every", tr.EvalEvery, "training rows: steps between STS-B dev evaluations")
	fs.Int64Var(&c.Seed, "seed", 0, "seed of the attacks")
	fs.IntVar(&c.Workers, "workers", c.Workers, "pairs attacked in parallel")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	c.Rows, c.STSSets, c.AdvAttacks, c.AdvSets, c.Log = cli.SplitList(rows), cli.SplitList(sets), cli.SplitList(atks), cli.SplitList(advSets), stderr
	c.Tasks, c.TaskAttacks, c.TransferTasks = cli.SplitList(tasks), cli.SplitList(taskAtks), cli.SplitList(transfer)
	rep, err := experiments.RunRobustEmbedTable(context.Background(), c)
	if err != nil {
		return err
	}
	_, err = fmt.Fprint(stdout, rep.Markdown)
	return err
}
