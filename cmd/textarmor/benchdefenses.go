package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/textarmor/textarmor/experiments"
)

// runBenchDefenses implements `bench defenses`: one epoch of each defense on
// the same seeded training subset, same batches, one after another in this
// process (FTML spec §10 "training time per epoch", Table 3, §14 A17).
func runBenchDefenses(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench defenses", "bench defenses (--dataset NAME | --train FILE) --model cnn|bilstm [--n 2000] [--defenses LIST] [--json]", stderr)
	c := experiments.NewDefenseSpeedConfig()
	df := dataFlags{c.Data}
	df.register(fs, true)
	var nf netFlags
	nf.register(fs)
	var list string
	var asJSON bool
	fs.IntVar(&c.N, "n", c.N, "training examples in the seeded subset (0 = the whole training split)")
	fs.StringVar(&list, "defenses", strings.Join(c.Defenses, ","), "defenses to time, comma-separated, in order")
	fs.IntVar(&c.Batch, "batch", c.Batch, "mini-batch size, the same for every defense (spec's standard recipe: 64)")
	fs.Float64Var(&c.LR, "lr", c.LR, "learning rate (does not change the cost of a step)")
	fs.Int64Var(&c.Seed, "seed", c.Seed, "seed of the subset, the initial weights and the batches")
	fs.StringVar(&c.Synonyms, "synonyms", "", "synonym neighbour table (default DATA/counterfitted-neighbors-jia2019/counterfitted_neighbors.json)")
	fs.BoolVar(&c.RepeatStandard, "repeat-standard", c.RepeatStandard, "time standard training again at the end, to show the run-to-run noise")
	fs.IntVar(&c.Repeats, "repeats", c.Repeats, "time each defense this many epochs (fresh model each time) and keep the fastest")
	fs.BoolVar(&asJSON, "json", false, "print one JSON object instead of the markdown table")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	c.Data, c.Defenses, c.Log = df.Data, strings.Split(list, ","), stderr
	if err := c.Check(); err != nil { // before the network flags, as it always was
		return err
	}
	if err := nf.check(); err != nil {
		return err
	}
	var err error
	if c.Net, err = nf.config(); err != nil {
		return err
	}
	c.BLAS = nf.blasName
	r, err := experiments.RunDefenseSpeed(context.Background(), c)
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(stdout).Encode(map[string]any{"dataset": r.Dataset, "arch": r.Arch, "n": r.N, "train_size": r.TrainSize,
			"batch": c.Batch, "seed": c.Seed, "repeats": c.Repeats, "max_len": r.MaxLen, "vocab": r.Vocab, "blas": r.BLAS,
			"cores": r.Cores, "rows": r.Rows, "time": time.Now().UTC().Format(time.RFC3339)})
	}
	fmt.Fprintf(stdout, "Training time per epoch, %s %s: %d of %d training examples, batch %d, same batches for every defense; BLAS %s, %d cores.\n\n",
		r.Dataset, r.Arch, r.N, r.TrainSize, c.Batch, r.BLAS, r.Cores)
	fmt.Fprintln(stdout, "| defense | seconds/epoch | × standard | steps | s/step | full epoch (min, est.) |")
	fmt.Fprintln(stdout, "|---|---|---|---|---|---|")
	for _, row := range r.Rows {
		name := row.Defense
		if row.Repeat {
			name += " (repeat)"
		}
		fmt.Fprintf(stdout, "| %s | %.1f | %.2f | %d | %.3f | %.1f |\n", name, row.Seconds, row.Ratio, row.Steps, row.SecondsPerStep, row.FullEpochMinutes)
	}
	return nil
}
