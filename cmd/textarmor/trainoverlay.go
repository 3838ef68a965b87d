package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/textarmor/textarmor/internal/cli"
	"github.com/textarmor/textarmor/pipeline"
)

// overlayFields maps each train flag a table may set on its rows
// (--recipe-flags, --train-args) to the pipeline.TrainConfig fields it
// decides. Flags the table itself owns (data, output, --model, --defense,
// --attack) are not here and are refused.
var overlayFields = map[string][]string{
	"dropout": {"Net.Dropout"}, "embed-dropout": {"Net.EmbedDropout"}, "embed-dim": {"Net.EmbedDim"}, "embed-init": {"Net.EmbedInit"}, "filters": {"Net.Filters"},
	"widths": {"Net.Widths"}, "hidden": {"Net.Hidden"}, "pool": {"Net.Pool"}, "tanh": {"Net.Tanh"},
	"input-layer": {"Net.InputLayer"}, "head-hidden": {"Net.HeadHidden"}, "embeddings": {"Embeddings"},
	"freeze-embeddings": {"Net.FreezeEmbeddings", "EmbeddingsFromTrainable"}, "embeddings-from": {"EmbeddingsFrom"},
	"retrofit": {"Retrofit"}, "init-lm": {"InitLM"},
	"epochs": {"Options.Epochs"}, "batch": {"Options.BatchSize"}, "lr": {"Options.LR", "DefenseLR"},
	"optimizer": {"Options.Optimizer"}, "schedule": {"Options.Schedule"}, "warmup": {"Options.Warmup"},
	"momentum": {"Options.Momentum"}, "weight-decay": {"Options.WeightDecay"}, "clip": {"Options.Clip"},
	"lr-decay": {"Options.DecayGamma"}, "lr-decay-epochs": {"Options.DecayEpochs"}, "seed": {"Options.Seed"},
	"patience": {"Options.Patience"}, "checkpoint-every": {"Options.CheckpointEvery"}, "embed-lr-scale": {"EmbedLRScale"},
	"synonyms": {"Defense.Synonyms"}, "ftml-beta": {"Defense.Settings.Beta"}, "ftml-alpha": {"Defense.Settings.Alpha"},
	"ftml-k": {"Defense.Settings.K"}, "ftml-norm": {"Defense.Settings.Norm"}, "ftml-squared": {"Defense.Settings.Squared"},
	"ftml-ce-updates-embedding": {"Defense.Settings.CEUpdatesEmbedding"}, "cml-tau": {"Defense.Settings.CMLTau"},
	"sem-k": {"Defense.Settings.SEMK"}, "atfl-steps": {"Defense.Settings.ATFLSteps"}, "ascc-steps": {"Defense.Settings.ASCCSteps"},
	"ascc-lr": {"Defense.Settings.ASCCLR"}, "ascc-entropy": {"Defense.Settings.ASCCEntropy"}, "ascc-beta": {"Defense.Settings.ASCCBeta"},
	"ibp-kappa": {"Defense.Settings.IBPKappa"}, "ibp-eps": {"Defense.Settings.IBPEps"}, "ibp-hull": {"Defense.Settings.IBPHull"},
	"ibp-ramp-epochs": {"Defense.IBPRampEpochs"}, "prob-inputs-to-ce": {"Defense.ProbInputs"},
	"flat-beta": {"Defense.Rounds.Beta"}, "flat-gamma": {"Defense.Rounds.Gamma"}, "flat-entropy-reduction": {"Defense.Rounds.Entropy"},
	"rounds": {"Defense.Rounds.Rounds"}, "round-epochs": {"Defense.Rounds.RoundEpochs"}, "round-examples": {"Defense.Rounds.PerRound"},
	"round-workers": {"Defense.Rounds.Workers"}, "wordnet": {"Defense.Rounds.WordNet"}, "vectors": {"Defense.Rounds.Vectors"},
	"round-keep": {"Defense.Rounds.KeepRounds"}, "group-mask": {"Defense.GroupMask.Groups"},
	"group-vectors": {"Defense.GroupMask.Vectors"},
}

// trainOverlay parses train flags given to a table (what names the table's
// option, for errors) and returns the function that sets them on a row's
// training configuration (those keep accepts; nil: all), and the names
// given.
func trainOverlay(what string, args []string) (func(c *pipeline.TrainConfig, keep func(name string) bool), []string, error) {
	fs := flag.NewFlagSet(what, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var t trainFlags
	t.register(fs)
	if err := parseNoArgs(fs, args); err != nil {
		return nil, nil, usageError{fmt.Errorf("%s: %v", what, err)}
	}
	var names []string
	var bad error
	fs.Visit(func(f *flag.Flag) {
		name := canonicalFlag(f.Name)
		switch _, ok := overlayFields[name]; {
		case bad != nil:
		case !ok:
			bad = usageError{fmt.Errorf("%s: --%s is the table's own setting, not a row's", what, f.Name)}
		}
		names = append(names, name)
	})
	if bad != nil {
		return nil, nil, bad
	}
	// The values as train would take them: flags given as text (widths,
	// norms, hull, decay epochs) parsed the same way.
	full := pipeline.NewTrainConfig()
	var err error
	if full.Defense, err = t.dfl.config(); err == nil {
		if full.Net, err = t.nf.network(); err == nil {
			full.Options.DecayEpochs, err = cli.Epochs("--lr-decay-epochs", t.decay)
		}
	}
	if err != nil {
		return nil, nil, usageError{fmt.Errorf("%s: %v", what, err)}
	}
	opt := t.opt
	opt.DecayEpochs = full.Options.DecayEpochs
	full.Options = opt
	full.Embeddings, full.EmbeddingsFrom, full.Retrofit, full.EmbedLRScale = t.nf.embeddings, t.nf.embFrom, t.nf.retrofit, t.embedLRScale
	full.EmbeddingsFromTrainable = !t.nf.net.FreezeEmbeddings
	full.DefenseLR = false // an explicit --lr is the row's rate, whatever its defense
	// Values out of range are refused now, not when the row's turn comes
	// hours into the table.
	if err = full.Defense.Check(); err == nil {
		if err = full.Net.Check(); err == nil {
			err = pipeline.CheckTrainOptions(full.Options)
		}
	}
	if err != nil {
		return nil, nil, err
	}
	apply := func(c *pipeline.TrainConfig, keep func(string) bool) {
		for _, name := range names {
			if keep == nil || keep(name) {
				cli.CopyFields(c, &full, overlayFields[name])
			}
		}
	}
	return apply, names, nil
}
