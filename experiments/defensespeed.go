package experiments

import (
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"

	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/defense"
	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/text"
	"github.com/textarmor/textarmor/train"
)

// DefenseSpeedOptions configure DefenseSpeed.
type DefenseSpeedOptions struct {
	Data   *dataset.Dataset
	Preset dataset.Preset // tokenizer, length, vocabulary of the data
	Net    nn.Config      // the architecture every defense trains
	// Defenses to time, in order; standard training is timed first when
	// it is not the first (the ratios are to it), and again at the end
	// with RepeatStandard, to show the run-to-run noise.
	Defenses       []string
	RepeatStandard bool
	Synonyms       *lexicon.Neighbors // for the synonym-based defenses, with their spec settings
	N              int                // training examples in the seeded subset (0: all)
	Batch          int
	LR             float64
	Seed           int64     // the subset, the initial weights and the batches
	Repeats        int       // epochs per defense (a fresh model each); the fastest is kept (0: 1)
	Progress       io.Writer // a line per defense, or nil
}

// DefenseTiming is one defense's epoch.
type DefenseTiming struct {
	Defense        string  `json:"defense"`
	Seconds        float64 `json:"seconds_per_epoch"`
	Ratio          float64 `json:"ratio_to_standard"`
	Steps          int     `json:"steps"`
	SecondsPerStep float64 `json:"seconds_per_step"`
	// FullEpochMinutes extrapolates to the whole training split.
	FullEpochMinutes float64 `json:"full_epoch_minutes_est"`
	Repeat           bool    `json:"repeat,omitempty"`
}

// DefenseSpeedResult is the timing table and what it was measured on.
type DefenseSpeedResult struct {
	Rows      []DefenseTiming
	N         int // examples timed
	TrainSize int // the whole training split
	Vocab     int
}

// DefenseSpeed times one training epoch of each defense on the same seeded
// training subset, with the same batches and initial weights, one after
// another in this process (FTML spec §10 "training time per epoch", Table
// 3, §14 A17), after an untimed warm-up epoch.
func DefenseSpeed(opt DefenseSpeedOptions) (*DefenseSpeedResult, error) {
	if opt.Data == nil || len(opt.Defenses) == 0 {
		return nil, errors.New("experiments: DefenseSpeed needs data and defenses")
	}
	names := append([]string(nil), opt.Defenses...)
	for _, name := range names {
		d, err := defense.Lookup(name)
		if err != nil {
			return nil, err
		}
		if d.Rounds {
			return nil, fmt.Errorf("experiments: %s trains in attack rounds, not epochs of its own", name)
		}
		if d.Synonyms && opt.Synonyms == nil {
			return nil, fmt.Errorf("experiments: %s needs a synonym table", name)
		}
	}
	if names[0] != "standard" {
		names = append([]string{"standard"}, names...)
	}
	if opt.RepeatStandard {
		names = append(names, "standard")
	}
	progress := opt.Progress
	if progress == nil {
		progress = io.Discard
	}
	ds := opt.Data
	tok, err := text.NewTokenizer(opt.Preset.Tokenizer)
	if err != nil {
		return nil, err
	}
	vocab := train.BuildVocab(tok, ds.Train, opt.Preset.MinCount, opt.Preset.MaxVocab)
	sub := dataset.SeededSubset(ds.Train, opt.N, opt.Seed)
	tmp, err := os.MkdirTemp("", "textarmor-defense-speed-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	var enc []train.Example
	// epoch trains a fresh model (same initial weights) for one epoch with
	// the named defense and returns the epoch's stats.
	epoch := func(name, out string) (train.EpochStats, error) {
		m, err := model.New(model.Meta{Net: opt.Net, Tokenizer: opt.Preset.Tokenizer, MaxLen: opt.Preset.MaxLen, Classes: ds.Classes},
			vocab, rand.New(rand.NewSource(opt.Seed)))
		if err != nil {
			return train.EpochStats{}, err
		}
		if enc == nil {
			enc = train.Encode(m, sub)
		}
		var obj train.Objective = train.Standard{}
		if name != "standard" {
			s := defense.DefaultSettings()
			var syn *defense.SynonymTable
			if opt.Synonyms != nil {
				syn = defense.NewSynonymTable(opt.Synonyms, vocab, s.K)
			}
			if obj, err = defense.NewObjective(name, s, syn, m.Net.Emb.W.Value); err != nil {
				return train.EpochStats{}, err
			}
		}
		topt := train.Options{Epochs: 1, BatchSize: opt.Batch, LR: opt.LR, Seed: opt.Seed, Out: out}
		if p, ok := obj.(*defense.IBP); ok {
			if err := p.Prepare(m.Net, len(sub), topt.Epochs, topt.BatchSize, -1); err != nil {
				return train.EpochStats{}, err
			}
		}
		defer os.RemoveAll(out)
		res, err := train.Run(m, obj, enc, nil, topt)
		if err != nil {
			return train.EpochStats{}, fmt.Errorf("%s: %w", name, err)
		}
		return res.Epochs[0], nil
	}
	// Warm-up (not reported): page in the data, start the BLAS threads.
	if _, err := epoch("standard", filepath.Join(tmp, "warmup")); err != nil {
		return nil, err
	}
	out := &DefenseSpeedResult{N: len(sub), TrainSize: len(ds.Train), Vocab: vocab.Len()}
	var stdSec float64
	for i, name := range names {
		var e train.EpochStats
		for r := 0; r < max(opt.Repeats, 1); r++ {
			got, err := epoch(name, filepath.Join(tmp, fmt.Sprintf("%d-%d-%s", i, r, name)))
			if err != nil {
				return nil, err
			}
			if r == 0 || got.Seconds < e.Seconds {
				e = got
			}
		}
		row := DefenseTiming{Defense: name, Seconds: e.Seconds, Steps: e.Steps, SecondsPerStep: e.Seconds / float64(max(e.Steps, 1)),
			FullEpochMinutes: e.Seconds * float64(len(ds.Train)) / float64(max(len(sub), 1)) / 60, Repeat: i > 0 && name == "standard"}
		if i == 0 {
			stdSec = e.Seconds
		}
		row.Ratio = e.Seconds / stdSec
		out.Rows = append(out.Rows, row)
		fmt.Fprintf(progress, "  %-8s %8.1f s/epoch  %5.2f× standard\n", name, row.Seconds, row.Ratio)
	}
	return out, nil
}
