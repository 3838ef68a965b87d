package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/text"
	"github.com/textarmor/textarmor/train"
)

// defenseTiming is one row of `bench defenses`.
type defenseTiming struct {
	Defense        string  `json:"defense"`
	Seconds        float64 `json:"seconds_per_epoch"`
	Ratio          float64 `json:"ratio_to_standard"`
	Steps          int     `json:"steps"`
	SecondsPerStep float64 `json:"seconds_per_step"`
	// FullEpochMinutes extrapolates to the whole training split.
	FullEpochMinutes float64 `json:"full_epoch_minutes_est"`
	Repeat           bool    `json:"repeat,omitempty"`
}

// defenseObjectiveFlags returns defense flags with their CLI defaults (the
// spec's settings), as `train --defense NAME` would build them.
func defenseObjectiveFlags(name, synonyms string) (*defenseFlags, error) {
	var d defenseFlags
	fs := flag.NewFlagSet("defaults", flag.ContinueOnError)
	d.register(fs)
	if err := fs.Parse(nil); err != nil {
		return nil, err
	}
	d.name, d.synonyms = name, synonyms
	return &d, d.check(fs)
}

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
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s != "" {
			if _, err := defenseObjectiveFlags(s, synPath); err != nil {
				return err
			}
			names = append(names, s)
		}
	}
	if len(names) == 0 {
		return usageError{fmt.Errorf("--defenses is empty")}
	}
	if names[0] != "standard" {
		names = append([]string{"standard"}, names...)
	}
	if repeat {
		names = append(names, "standard")
	}
	cfg, err := nf.config()
	if err != nil {
		return err
	}
	ds, preset, err := df.load()
	if err != nil {
		return err
	}
	tok, err := text.NewTokenizer(preset.Tokenizer)
	if err != nil {
		return usageError{err}
	}
	vocab := train.BuildVocab(tok, ds.Train, preset.MinCount, preset.MaxVocab)
	sub := seededSubset(ds.Train, n, seed)
	tmp, err := os.MkdirTemp("", "textarmor-bench-defenses-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	fmt.Fprintf(stderr, "bench defenses: %s, %s, %d of %d training examples (seed %d), batch %d, vocabulary %d, max length %d; BLAS %s, %d cores\n",
		ds.Name, cfg.Arch, len(sub), len(ds.Train), seed, batch, vocab.Len(), preset.MaxLen, tensor.BackendDetail(), runtime.GOMAXPROCS(0))
	var rows []defenseTiming
	var enc []train.Example
	var stdSec float64
	// timeEpoch trains a fresh model (same initial weights) for one epoch
	// with the named defense and returns the epoch's stats.
	timeEpoch := func(name, out string) (train.EpochStats, error) {
		m, err := model.New(model.Meta{Net: cfg, Tokenizer: preset.Tokenizer, MaxLen: preset.MaxLen, Classes: ds.Classes}, vocab, rand.New(rand.NewSource(seed)))
		if err != nil {
			return train.EpochStats{}, usageError{err}
		}
		if enc == nil {
			enc = train.Encode(m, sub)
		}
		dfl, err := defenseObjectiveFlags(name, synPath)
		if err != nil {
			return train.EpochStats{}, err
		}
		obj, err := dfl.objective(m, df.dir, io.Discard)
		if err != nil {
			return train.EpochStats{}, err
		}
		opt := train.Options{Epochs: 1, BatchSize: batch, LR: lr, Seed: seed, Out: out}
		if err := dfl.bl.setupRun(obj, m, sub, opt); err != nil {
			return train.EpochStats{}, err
		}
		defer os.RemoveAll(out)
		res, err := train.Run(m, obj, enc, nil, opt)
		if err != nil {
			return train.EpochStats{}, fmt.Errorf("%s: %w", name, err)
		}
		return res.Epochs[0], nil
	}
	// Warm-up (not reported): page in the data, start the BLAS threads.
	if _, err := timeEpoch("standard", filepath.Join(tmp, "warmup")); err != nil {
		return err
	}
	for i, name := range names {
		var e train.EpochStats
		for r := 0; r < repeats; r++ {
			got, err := timeEpoch(name, filepath.Join(tmp, fmt.Sprintf("%d-%d-%s", i, r, name)))
			if err != nil {
				return err
			}
			if r == 0 || got.Seconds < e.Seconds {
				e = got
			}
		}
		row := defenseTiming{Defense: name, Seconds: e.Seconds, Steps: e.Steps, SecondsPerStep: e.Seconds / float64(max(e.Steps, 1)),
			FullEpochMinutes: e.Seconds * float64(len(ds.Train)) / float64(max(len(sub), 1)) / 60, Repeat: i > 0 && name == "standard"}
		if i == 0 {
			stdSec = e.Seconds
		}
		row.Ratio = e.Seconds / stdSec
		rows = append(rows, row)
		fmt.Fprintf(stderr, "  %-8s %8.1f s/epoch  %5.2f× standard\n", name, row.Seconds, row.Ratio)
	}
	if asJSON {
		return json.NewEncoder(stdout).Encode(map[string]any{"dataset": ds.Name, "arch": cfg.Arch, "n": len(sub), "train_size": len(ds.Train),
			"batch": batch, "seed": seed, "repeats": repeats, "max_len": preset.MaxLen, "vocab": vocab.Len(), "blas": tensor.BackendDetail(),
			"cores": runtime.GOMAXPROCS(0), "rows": rows, "time": time.Now().UTC().Format(time.RFC3339)})
	}
	fmt.Fprintf(stdout, "Training time per epoch, %s %s: %d of %d training examples, batch %d, same batches for every defense; BLAS %s, %d cores.\n\n",
		ds.Name, cfg.Arch, len(sub), len(ds.Train), batch, tensor.BackendDetail(), runtime.GOMAXPROCS(0))
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

// seededSubset returns n examples of ex drawn by a seeded permutation (all
// of them, permuted, when n is 0 or at least len(ex)).
func seededSubset(ex []dataset.Example, n int, seed int64) []dataset.Example {
	perm := rand.New(rand.NewSource(seed)).Perm(len(ex))
	if n > 0 && n < len(perm) {
		perm = perm[:n]
	}
	out := make([]dataset.Example, len(perm))
	for i, j := range perm {
		out[i] = ex[j]
	}
	return out
}
