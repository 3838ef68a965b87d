package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/textarmor/textarmor/defense"
	"github.com/textarmor/textarmor/internal/cli"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/pipeline"
	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/train"
)

// netFlags are the architecture flags: a pipeline.Network, the window
// widths as given, and the model's starting points.
type netFlags struct {
	net                  pipeline.Network
	widths               string
	embeddings, blasName string
	embFrom, initLM      string
	retrofit, vocabSupp  int
	init                 string
	freezeEncoder        bool
}

func (n *netFlags) register(fs *flag.FlagSet) {
	d := pipeline.NewNetwork()
	fs.StringVar(&n.net.Arch, "model", d.Arch, "architecture: "+strings.Join(nn.Archs, ", "))
	fs.IntVar(&n.net.EmbedDim, "embed-dim", d.EmbedDim, "embedding size (taken from --embeddings when given)")
	fs.IntVar(&n.net.Filters, "filters", d.Filters, "cnn: filters per window width")
	fs.StringVar(&n.widths, "widths", "3,4,5", "cnn: comma-separated window widths")
	fs.IntVar(&n.net.Hidden, "hidden", d.Hidden, "lstm/bilstm: hidden units per direction")
	fs.StringVar(&n.net.Pool, "pool", d.Pool, "lstm/bilstm: pooling over time, max or mean; lstm also last (the final hidden state)")
	fs.BoolVar(&n.net.Tanh, "tanh", false, "lstm/bilstm: tanh before and after pooling (FLAT's LSTM)")
	fs.IntVar(&n.net.InputLayer, "input-layer", 0, "width of a linear layer with ReLU applied to each word vector before the encoder (Jia et al.'s IBP models: 100; 0 = none)")
	fs.IntVar(&n.net.HeadHidden, "head-hidden", 0, "width of a hidden layer with ReLU between the pooled sentence and the output layer (Jia et al.: 100; 0 = none)")
	fs.Float64Var(&n.net.Dropout, "dropout", d.Dropout, "dropout before the output layer (and before --head-hidden's layer)")
	fs.Float64Var(&n.net.EmbedDropout, "embed-dropout", 0, "dropout of the embedding entries in training (SPGD's classifier: 0.5)")
	fs.Float64Var(&n.net.EmbedInit, "embed-init", d.EmbedInit, "random embedding rows are drawn from U(-a, a)")
	fs.StringVar(&n.embeddings, "embeddings", "", "word vectors (GloVe/word2vec text or fastText .vec, .gz ok); words missing from the file start random")
	fs.BoolVar(&n.net.FreezeEmbeddings, "freeze-embeddings", false, "keep the embedding table fixed during training")
	fs.StringVar(&n.initLM, "init-lm", "", "lstm: start from this LSTM language model ('lm train --type lstm'): its vocabulary, embeddings and LSTM; --embed-dim and --hidden are its (SPGD spec §4.1)")
	fs.StringVar(&n.embFrom, "embeddings-from", "", "model directory: take its vocabulary and embedding table, frozen (implies --freeze-embeddings; FTML spec §12.1)")
	fs.IntVar(&n.retrofit, "retrofit", 0, "retrofit the initial embedding table to the --synonyms neighbour graph with this many sweeps (Faruqui et al. 2015; 10 in the paper; 0 = off)")
	fs.StringVar(&n.blasName, "blas", "", "BLAS backend: "+strings.Join(tensor.Backends(), ", ")+" (default "+tensor.BackendName()+")")
	fs.StringVar(&n.init, "init", "", "transformer: start from this Hugging Face BERT-architecture directory (config.json, model.safetensors, vocab.txt) or a textarmor transformer model (its encoder; e.g. embed-train's); --pool is then pooler (default), cls or mean, --max-len counts word pieces, and the training flags not given take fine-tuning's defaults (3 epochs, batch 32, adamw, lr 2e-5, weight decay 0.01, linear warm-up 0.1, clip 1)")
	fs.BoolVar(&n.freezeEncoder, "freeze-encoder", false, "transformer with --init: train the classification head only (a quick baseline)")
	fs.IntVar(&n.vocabSupp, "vocab-supplement", -1, "transformer with --init: add the N most frequent alphabetic training words as whole tokens, rows the mean of their pieces (FTML spec §7.3; -1 = 50000 for ftml, cml, sem and ascc, else 0)")
}

// network is the architecture with --widths parsed.
func (n *netFlags) network() (pipeline.Network, error) {
	net := n.net
	net.Widths = nil
	for _, s := range strings.Split(n.widths, ",") {
		w, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return net, usageError{fmt.Errorf("--widths %q: %v", n.widths, err)}
		}
		net.Widths = append(net.Widths, w)
	}
	return net, nil
}

func (n *netFlags) config() (nn.Config, error) {
	net, err := n.network()
	if err != nil {
		return nn.Config{}, err
	}
	return net.Config()
}

// check validates the architecture flags before any data is read.
func (n *netFlags) check() error {
	net, err := n.network()
	if err == nil {
		err = net.Check()
	}
	return err
}

func useBLAS(name string) error {
	if name == "" {
		return nil
	}
	if err := tensor.UseBackend(name); err != nil {
		return usageError{err}
	}
	return nil
}

// defaultCheckpointEvery is bench ftml-table's checkpoint interval too.
const defaultCheckpointEvery = pipeline.DefaultCheckpointEvery

// trainFlags are every flag of `train`.
type trainFlags struct {
	df            dataFlags
	nf            netFlags
	dfl           defenseFlags
	opt           train.Options
	decay         string
	trainN        int
	embedLRScale  float64
	quiet, asJSON bool
}

func (t *trainFlags) register(fs *flag.FlagSet) {
	d := pipeline.NewTrainConfig().Options
	t.df.register(fs, true)
	t.nf.register(fs)
	opt := &t.opt
	fs.IntVar(&opt.Epochs, "epochs", d.Epochs, "training epochs")
	fs.IntVar(&opt.BatchSize, "batch", d.BatchSize, "mini-batch size")
	fs.Float64Var(&opt.LR, "lr", d.LR, "learning rate (when not given: adv 0.01 and flat 0.005, FLAT spec §5)")
	fs.StringVar(&opt.Optimizer, "optimizer", d.Optimizer, "adam, adamw (decoupled weight decay; biases and LayerNorms exempt) or sgd")
	fs.StringVar(&opt.Schedule, "schedule", "", "learning-rate schedule: linear (warm-up over --warmup of all steps, then linear decay to 0) or empty for a constant rate")
	fs.Float64Var(&opt.Warmup, "warmup", 0, "with --schedule linear: the share of all steps that warm the rate up")
	fs.Float64Var(&opt.Momentum, "momentum", 0, "sgd momentum")
	fs.Float64Var(&opt.WeightDecay, "weight-decay", 0, "L2 weight decay")
	fs.Float64Var(&opt.Clip, "clip", 0, "clip the global gradient norm to this value (0 = off)")
	fs.Float64Var(&t.embedLRScale, "embed-lr-scale", 0, "multiply the word-embedding table's learning rate by this (adam, adamw; 0 or 1 = off): FTML on a transformer in a short run, docs/ftml.md")
	fs.StringVar(&t.decay, "lr-decay-epochs", "", "comma-separated epochs at which the learning rate is multiplied by --lr-decay")
	fs.Float64Var(&opt.DecayGamma, "lr-decay", d.DecayGamma, "learning-rate factor at each --lr-decay-epochs epoch")
	fs.Int64Var(&opt.Seed, "seed", d.Seed, "random seed (same seed, same numbers)")
	fs.IntVar(&t.trainN, "train-n", 0, "train on a seeded subset (seed --seed) of this many training examples (0 = all; the vocabulary still comes from all of them)")
	fs.IntVar(&opt.Patience, "patience", 0, "stop after this many epochs without a better dev accuracy (0 = never)")
	fs.StringVar(&opt.Out, "out", "", "model directory to write (required); checkpoints go to OUT.ckpt")
	fs.BoolVar(&opt.Resume, "resume", false, "continue an interrupted run from OUT.ckpt")
	fs.DurationVar(&opt.CheckpointEvery, "checkpoint-every", d.CheckpointEvery, "also checkpoint inside an epoch once this much time has passed since the last checkpoint (0 = at epoch ends only)")
	fs.StringVar(&opt.LogPath, "log", "", "append per-epoch metrics as JSON lines to this file (default OUT.log.jsonl)")
	fs.BoolVar(&t.quiet, "quiet", false, "no progress bar")
	fs.BoolVar(&t.asJSON, "json", false, "print the final test evaluation as one JSON object")
	t.dfl.register(fs)
}

// config maps the parsed flags (fs: which were given) to a checked
// pipeline.TrainConfig.
func (t *trainFlags) config(fs *flag.FlagSet, stderr io.Writer) (pipeline.TrainConfig, error) {
	c := pipeline.NewTrainConfig()
	if err := t.dfl.check(fs); err != nil {
		return c, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var err error
	if c.Defense, err = t.dfl.config(); err != nil {
		return c, err
	}
	if c.Net, err = t.nf.network(); err != nil {
		return c, err
	}
	c.Data, c.Options, c.Log = t.df.Data, t.opt, stderr
	if c.Options.DecayEpochs, err = cli.Epochs("--lr-decay-epochs", t.decay); err != nil {
		return c, err
	}
	if !t.quiet {
		c.Options.Progress = stderr
	}
	c.Embeddings, c.EmbeddingsFrom, c.Retrofit, c.InitLM = t.nf.embeddings, t.nf.embFrom, t.nf.retrofit, t.nf.initLM
	c.EmbeddingsFromTrainable = set["freeze-embeddings"] && !t.nf.net.FreezeEmbeddings
	c.DefenseLR = !set["lr"]
	c.TrainSubset, c.TrainN, c.EmbedLRScale = t.trainN > 0, t.trainN, t.embedLRScale
	c.FineTune.Init, c.FineTune.FreezeEncoder, c.FineTune.VocabSupplement = t.nf.init, t.nf.freezeEncoder, t.nf.vocabSupp
	if t.nf.init != "" {
		if err := fineTuneFlags(&c, set, t.nf.net); err != nil {
			return c, err
		}
	}
	return c, c.Check()
}

func runTrain(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("train", "train --dataset NAME | --train FILE [--dev FILE --test FILE] --out DIR [flags]", stderr)
	var t trainFlags
	t.register(fs)
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	c, err := t.config(fs, stderr)
	if err != nil {
		return err
	}
	if err := useBLAS(t.nf.blasName); err != nil {
		return err
	}
	rep, err := pipeline.Train(context.Background(), c)
	if err != nil || rep.Test == nil {
		return err
	}
	if !t.asJSON {
		fmt.Fprint(stdout, rep.Test.Format())
		return nil
	}
	obj, err := rep.JSON()
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(obj)
}

// defenseFlags choose the training objective of `train`: a
// pipeline.DefenseConfig and the flags given as text.
type defenseFlags struct {
	cfg  pipeline.DefenseConfig
	norm string
	bl   baselineFlags
	fl   flatFlags
}

func (d *defenseFlags) register(fs *flag.FlagSet) {
	def := pipeline.NewDefenseConfig()
	d.cfg = def // the settings no flag sets keep their defaults
	s := &d.cfg.Settings
	fs.StringVar(&d.cfg.Name, "defense", def.Name, "training objective: "+defenseList())
	fs.StringVar(&d.cfg.Synonyms, "synonyms", "", "ftml/cml (and --group-mask): synonym neighbour table (JSON word -> [neighbours]; default DATA/counterfitted-neighbors-jia2019/counterfitted_neighbors.json)")
	fs.Float64Var(&s.Beta, "ftml-beta", def.Settings.Beta, "ftml/cml: weight β of the metric term")
	fs.Float64Var(&s.Alpha, "ftml-alpha", def.Settings.Alpha, "ftml/cml: margin α (0 = 0.7·α0, α0 the mean word distance of the initial table)")
	fs.IntVar(&s.K, "ftml-k", def.Settings.K, "ftml/cml: synonyms per word and negatives per batch")
	fs.StringVar(&d.norm, "ftml-norm", pipeline.NormName(def.Settings.Norm), "ftml/cml: distance norm p: 1, 2 or inf")
	fs.BoolVar(&s.Squared, "ftml-squared", def.Settings.Squared, "ftml/cml: squared Euclidean distance in the loss (p = 2; the spec uses the plain norm)")
	fs.BoolVar(&s.CEUpdatesEmbedding, "ftml-ce-updates-embedding", def.Settings.CEUpdatesEmbedding, "ftml/cml: let cross-entropy train the embedding table too (spec: it does not)")
	fs.Float64Var(&s.CMLTau, "cml-tau", def.Settings.CMLTau, "cml: temperature τ")
	d.bl.register(fs, s)
	fs.StringVar(&d.cfg.FreeLBRow, "freelb-row", def.FreeLBRow, "freelb, carl, rar: the paper's Table 1 row the --freelb-* flags left at -1 take: auto (by dataset: imdb yelp-p, trec yahoo, agnews ag, others sst2), sst2, yelp-p, yahoo or ag")
	d.fl.register(fs, &d.cfg.Rounds, &d.cfg.ProbInputs)
	registerGroupFlags(fs, &d.cfg.GroupMask)
}

// check rejects defense flags given with a defense that does not use them,
// then checks the values.
func (d *defenseFlags) check(fs *flag.FlagSet) error {
	name := d.cfg.Name
	if _, err := defense.Lookup(name); err != nil {
		return usageError{fmt.Errorf("--defense: %v", err)}
	}
	var err error
	fs.Visit(func(f *flag.Flag) {
		flagName := canonicalFlag(f.Name)
		shared := f.Name == "synonyms" || strings.HasPrefix(f.Name, "ftml-")
		switch {
		case err != nil:
		case f.Name == "synonyms" && name == "standard" && (d.cfg.GroupMask.Groups > 0 || retrofitting(fs)):
			// the group mask's or the retrofit's neighbour graph
		case shared && name == "standard":
			err = usageError{fmt.Errorf("--%s needs --defense ftml or cml", f.Name)}
		case f.Name == "cml-tau" && name != "cml":
			err = usageError{fmt.Errorf("--cml-tau needs --defense cml")}
		case strings.HasPrefix(f.Name, "ftml-") && name != "ftml" && name != "cml":
			err = usageError{fmt.Errorf("--%s needs --defense ftml or cml", f.Name)}
		default:
			if err = d.bl.checkFlag(flagName, name); err == nil {
				if err = d.fl.checkFlag(flagName, name); err == nil {
					err = checkGroupFlag(f.Name, name)
				}
			}
		}
	})
	if err != nil {
		return err
	}
	cfg, err := d.config()
	if err != nil {
		return err
	}
	return cfg.Check()
}

// config maps the flags to the library's configuration.
func (d *defenseFlags) config() (pipeline.DefenseConfig, error) {
	c := d.cfg
	c.Settings.IBPHull, c.IBPRampEpochs = defense.Hull(d.bl.ibpHull), d.bl.ibpRamp
	c.Rounds.Entropy = nn.EntropyReduction(d.fl.entropy)
	c.Rounds.Interrupt = roundAttackStop
	var err error
	c.Settings.Norm, err = pipeline.ParseNorm("--ftml-norm", d.norm)
	return c, err
}

// defenseList names the defenses, for --defense's help.
func defenseList() string {
	return strings.Join(defense.Names(), ", ") + " (flat: FLAT word masks with attack rounds; adv: attack rounds, cross-entropy)"
}
