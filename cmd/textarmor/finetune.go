package main

import (
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/train"
)

// notWithInit are train flags that shape a network or a word vocabulary:
// a checkpoint brings its own.
var notWithInit = []string{"embed-dim", "filters", "widths", "hidden", "tanh", "input-layer", "head-hidden",
	"embed-init", "embeddings", "freeze-embeddings", "embeddings-from", "retrofit", "min-count", "max-vocab"}

// runFineTune is train --init: a pretrained transformer fine-tuned on the
// dataset with fine-tuning's defaults for the training flags not given.
func runFineTune(fs *flag.FlagSet, df *dataFlags, nf *netFlags, dfl *defenseFlags, opt train.Options, asJSON bool, stdout, stderr io.Writer) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, name := range notWithInit {
		if set[name] {
			return usageError{fmt.Errorf("--%s does not apply with --init (the checkpoint sets the network and its vocabulary)", name)}
		}
	}
	if nf.arch != "transformer" {
		return usageError{fmt.Errorf("--init needs --model transformer, not %q", nf.arch)}
	}
	if dfl.name != "standard" && dfl.name != "adv" {
		return usageError{fmt.Errorf("--defense %s is not available for transformers yet (standard and adv are)", dfl.name)}
	}
	ft := train.FineTuneDefaults()
	for name, apply := range map[string]func(){
		"epochs": func() { opt.Epochs = ft.Epochs }, "batch": func() { opt.BatchSize = ft.BatchSize },
		"optimizer": func() { opt.Optimizer = ft.Optimizer }, "lr": func() { opt.LR = ft.LR },
		"weight-decay": func() { opt.WeightDecay = ft.WeightDecay }, "clip": func() { opt.Clip = ft.Clip },
		"schedule": func() { opt.Schedule = ft.Schedule }, "warmup": func() { opt.Warmup = ft.Warmup },
	} {
		if !set[name] {
			apply()
		}
	}
	if dfl.name == "adv" {
		// The rate stays fine-tuning's (FLAT's 0.01 is for CNNs and LSTMs).
		if err := dfl.fl.checkAttack(); err != nil {
			return err
		}
	}
	ds, preset, err := df.load()
	if err != nil {
		return err
	}
	pool := ""
	if set["pool"] {
		pool = nf.pool
	}
	start := time.Now()
	m, err := model.ImportHF(nf.init, model.ImportOptions{Classes: ds.Classes, Pool: pool, MaxLen: df.MaxLen, Tokenizer: preset.Tokenizer, Seed: opt.Seed})
	if err != nil {
		return err
	}
	if w, ok := m.Training["import_warnings"].([]string); ok {
		for _, line := range w {
			fmt.Fprintf(stderr, "warning: %s: %s\n", nf.init, line)
		}
	}
	if df.MaxLen == 0 { // the preset's length, within the model's positions
		if err := m.SetMaxLen(min(preset.PieceLen(), m.Net.Cfg.Transformer.MaxPositions)); err != nil {
			return err
		}
	}
	maxLen := m.MaxLen
	if set["dropout"] {
		m.Net.Cfg.Dropout = nf.dropout
		if err := m.Net.Cfg.Validate(); err != nil {
			return usageError{fmt.Errorf("--dropout: %v", err)}
		}
	}
	if nf.freezeEncoder {
		m.FreezeEncoder()
	}
	trainEx, devEx := train.Encode(m, ds.Train), train.Encode(m, ds.Dev)
	fmt.Fprintf(stderr, "data: %s, %d train / %d dev / %d test, %d classes; %s: %d word pieces, max length %d (%d training texts truncated); pooling %s; BLAS %s\n",
		ds.Name, len(ds.Train), len(ds.Dev), len(ds.Test), len(ds.Classes), nf.init, m.Pieces.Size(), maxLen,
		truncatedCount(m, ds.Train), m.Net.Cfg.Transformer.Pool, tensor.BackendDetail())
	opt.Info = map[string]any{"dataset": ds.Name, "arch": "transformer", "init": nf.init, "blas": tensor.BackendDetail(),
		"pool": m.Net.Cfg.Transformer.Pool, "max_len": maxLen, "defense": dfl.name}
	if nf.freezeEncoder {
		opt.Info["frozen_encoder"] = true
	}
	fmt.Fprintf(stderr, "fine-tuning: %d epochs, batch %d, %s lr %g, weight decay %g, %s schedule with warm-up %g, clip %g%s\n",
		opt.Epochs, opt.BatchSize, opt.Optimizer, opt.LR, opt.WeightDecay, scheduleName(opt.Schedule), opt.Warmup, opt.Clip,
		map[bool]string{true: "; encoder frozen"}[nf.freezeEncoder])
	var res *train.Result
	if dfl.name == "adv" {
		res, err = dfl.fl.run(dfl.name, m, train.Standard{}, ds.Train, ds.Dev, opt, dfl.synonyms, df.Dir, stderr)
	} else {
		res, err = train.Run(m, train.Standard{}, trainEx, devEx, opt)
	}
	if err != nil {
		return err
	}
	return reportTrained(ds, opt, res, time.Since(start), asJSON, stdout, stderr)
}

func scheduleName(s string) string {
	if s == "" {
		return "constant"
	}
	return s
}

// truncatedCount counts the texts longer than the model's maximum length.
func truncatedCount(m *model.Model, texts []dataset.Example) int {
	n := 0
	for _, e := range texts {
		if _, dropped := m.EncodeCounted(e.Text); dropped > 0 {
			n++
		}
	}
	return n
}
