package main

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"github.com/textarmor/textarmor/defense"
	"github.com/textarmor/textarmor/experiments"
	"github.com/textarmor/textarmor/tensor"
)

// runBenchDefenses implements `bench defenses`: one epoch of each defense on
// the same seeded training subset, same batches, one after another in this
// process (FTML spec §10 "training time per epoch", Table 3, §14 A17).
func runBenchDefenses(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench defenses", "bench defenses (--dataset NAME | --train FILE) --model cnn|bilstm [--n 2000] [--defenses LIST] [--json]", stderr)
	var df dataFlags
	df.register(fs, true)
	var nf netFlags
	nf.register(fs)
	var n, batch int
	var seed int64
	var lr float64
	var list, synPath string
	var asJSON, repeat bool
	var repeats int
	fs.IntVar(&n, "n", 2000, "training examples in the seeded subset (0 = the whole training split)")
	fs.StringVar(&list, "defenses", "standard,ftml,cml,sem,ascc,atfl,ibp", "defenses to time, comma-separated, in order")
	fs.IntVar(&batch, "batch", 64, "mini-batch size, the same for every defense (spec's standard recipe: 64)")
	fs.Float64Var(&lr, "lr", 1e-3, "learning rate (does not change the cost of a step)")
	fs.Int64Var(&seed, "seed", 42, "seed of the subset, the initial weights and the batches")
	fs.StringVar(&synPath, "synonyms", "", "synonym neighbour table (default DATA/counterfitted-neighbors-jia2019/counterfitted_neighbors.json)")
	fs.BoolVar(&repeat, "repeat-standard", true, "time standard training again at the end, to show the run-to-run noise")
	fs.IntVar(&repeats, "repeats", 1, "time each defense this many epochs (fresh model each time) and keep the fastest")
	fs.BoolVar(&asJSON, "json", false, "print one JSON object instead of the markdown table")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if err := checkNumbers(append([]numRule{
		{n >= 0, "n", n, "≥ 0 (0 = the whole training split)"},
		{batch >= 1, "batch", batch, "at least 1"},
		{finite(lr) && lr > 0, "lr", lr, "a positive number"},
		{repeats >= 1, "repeats", repeats, "at least 1"},
	}, df.numbers()...)...); err != nil {
		return err
	}
	if err := nf.check(); err != nil {
		return err
	}
	if err := useBLAS(nf.blasName); err != nil {
		return err
	}
	var names []string
	needSynonyms := false
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s != "" {
			d, err := defense.Lookup(s)
			if err != nil {
				return usageError{fmt.Errorf("--defenses: %v", err)}
			}
			if d.Rounds {
				return usageError{fmt.Errorf("--defenses: %s trains in attack rounds, not epochs of its own", s)}
			}
			needSynonyms = needSynonyms || d.Synonyms
			names = append(names, s)
		}
	}
	if len(names) == 0 {
		return usageError{fmt.Errorf("--defenses is empty")}
	}
	cfg, err := nf.config()
	if err != nil {
		return err
	}
	ds, preset, err := df.load()
	if err != nil {
		return err
	}
	opt := experiments.DefenseSpeedOptions{Data: ds, Preset: preset, Net: cfg, Defenses: names, RepeatStandard: repeat,
		N: n, Batch: batch, LR: lr, Seed: seed, Repeats: repeats, Progress: stderr}
	if needSynonyms {
		if opt.Synonyms, _, err = loadNeighborFile(synPath, df.Dir); err != nil {
			return err
		}
	}
	subset := len(ds.Train) // --n 0: all of them
	if n > 0 && n < subset {
		subset = n
	}
	fmt.Fprintf(stderr, "bench defenses: %s, %s, %d of %d training examples (seed %d), batch %d, max length %d; BLAS %s, %d cores\n",
		ds.Name, cfg.Arch, subset, len(ds.Train), seed, batch, preset.MaxLen, tensor.BackendDetail(), runtime.GOMAXPROCS(0))
	res, err := experiments.DefenseSpeed(opt)
	if err != nil {
		return err
	}
	rows := res.Rows
	if asJSON {
		return json.NewEncoder(stdout).Encode(map[string]any{"dataset": ds.Name, "arch": cfg.Arch, "n": res.N, "train_size": res.TrainSize,
			"batch": batch, "seed": seed, "repeats": repeats, "max_len": preset.MaxLen, "vocab": res.Vocab, "blas": tensor.BackendDetail(),
			"cores": runtime.GOMAXPROCS(0), "rows": rows, "time": time.Now().UTC().Format(time.RFC3339)})
	}
	fmt.Fprintf(stdout, "Training time per epoch, %s %s: %d of %d training examples, batch %d, same batches for every defense; BLAS %s, %d cores.\n\n",
		ds.Name, cfg.Arch, res.N, res.TrainSize, batch, tensor.BackendDetail(), runtime.GOMAXPROCS(0))
	fmt.Fprintln(stdout, "| defense | seconds/epoch | × standard | steps | s/step | full epoch (min, est.) |")
	fmt.Fprintln(stdout, "|---|---|---|---|---|---|")
	for _, r := range rows {
		name := r.Defense
		if r.Repeat {
			name += " (repeat)"
		}
		fmt.Fprintf(stdout, "| %s | %.1f | %.2f | %d | %.3f | %.1f |\n", name, r.Seconds, r.Ratio, r.Steps, r.SecondsPerStep, r.FullEpochMinutes)
	}
	return nil
}
