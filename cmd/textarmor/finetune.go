package main

import (
	"fmt"

	"github.com/textarmor/textarmor/pipeline"
	"github.com/textarmor/textarmor/train"
)

// notWithInit are train flags that shape a network or a word vocabulary:
// a checkpoint brings its own.
var notWithInit = []string{"embed-dim", "filters", "widths", "hidden", "tanh", "input-layer", "head-hidden",
	"embed-init", "embeddings", "freeze-embeddings", "embeddings-from", "retrofit", "min-count", "max-vocab"}

// fineTuneFlags refuses the flags --init does not take and gives the
// training flags not given fine-tuning's defaults.
func fineTuneFlags(c *pipeline.TrainConfig, set map[string]bool, net pipeline.Network) error {
	for _, name := range notWithInit {
		if set[name] {
			return usageError{fmt.Errorf("--%s does not apply with --init (the checkpoint sets the network and its vocabulary)", name)}
		}
	}
	ft, opt := train.FineTuneDefaults(), &c.Options
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
	if set["pool"] {
		c.FineTune.Pool = net.Pool
	}
	if set["dropout"] {
		c.FineTune.Dropout = net.Dropout
	}
	return nil
}
