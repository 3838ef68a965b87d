package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"strconv"
	"strings"
	"time"

	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/metrics"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/text"
	"github.com/textarmor/textarmor/train"
)

type netFlags struct {
	arch, widths, pool   string
	embedDim, filters    int
	hidden               int
	dropout, embedInit   float64
	tanh, freeze         bool
	embeddings, blasName string
}

func (n *netFlags) register(fs *flag.FlagSet) {
	d := nn.DefaultConfig("cnn")
	fs.StringVar(&n.arch, "model", "cnn", "architecture: "+strings.Join(nn.Archs, ", "))
	fs.IntVar(&n.embedDim, "embed-dim", d.EmbedDim, "embedding size (taken from --embeddings when given)")
	fs.IntVar(&n.filters, "filters", d.Filters, "cnn: filters per window width")
	fs.StringVar(&n.widths, "widths", "3,4,5", "cnn: comma-separated window widths")
	fs.IntVar(&n.hidden, "hidden", 150, "lstm/bilstm: hidden units per direction")
	fs.StringVar(&n.pool, "pool", "max", "lstm/bilstm: pooling over time, max or mean")
	fs.BoolVar(&n.tanh, "tanh", false, "lstm/bilstm: tanh before and after pooling (FLAT's LSTM)")
	fs.Float64Var(&n.dropout, "dropout", d.Dropout, "dropout before the output layer")
	fs.Float64Var(&n.embedInit, "embed-init", d.EmbedInit, "random embedding rows are drawn from U(-a, a)")
	fs.StringVar(&n.embeddings, "embeddings", "", "word vectors (GloVe/word2vec text or fastText .vec, .gz ok); words missing from the file start random")
	fs.BoolVar(&n.freeze, "freeze-embeddings", false, "keep the embedding table fixed during training")
	fs.StringVar(&n.blasName, "blas", "", "BLAS backend: "+strings.Join(tensor.Backends(), ", ")+" (default "+tensor.BackendName()+")")
}

func (n *netFlags) config() (nn.Config, error) {
	cfg := nn.DefaultConfig(n.arch)
	cfg.EmbedDim, cfg.Dropout, cfg.EmbedInit, cfg.FreezeEmb = n.embedDim, n.dropout, n.embedInit, n.freeze
	switch n.arch {
	case "cnn":
		cfg.Filters = n.filters
		cfg.Widths = nil
		for _, s := range strings.Split(n.widths, ",") {
			w, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil {
				return cfg, usageError{fmt.Errorf("--widths %q: %v", n.widths, err)}
			}
			cfg.Widths = append(cfg.Widths, w)
		}
	case "bilstm", "lstm":
		cfg.Hidden, cfg.Pool, cfg.Tanh = n.hidden, n.pool, n.tanh
	default:
		return cfg, usageError{fmt.Errorf("--model %q: valid are %s", n.arch, strings.Join(nn.Archs, ", "))}
	}
	return cfg, nil
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

func runTrain(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("train", "train --dataset NAME | --train FILE [--dev FILE --test FILE] --out DIR [flags]", stderr)
	var df dataFlags
	df.register(fs, true)
	var nf netFlags
	nf.register(fs)
	var opt train.Options
	var decay string
	var quiet, asJSON bool
	fs.IntVar(&opt.Epochs, "epochs", 10, "training epochs")
	fs.IntVar(&opt.BatchSize, "batch", 64, "mini-batch size")
	fs.Float64Var(&opt.LR, "lr", 1e-3, "learning rate")
	fs.StringVar(&opt.Optimizer, "optimizer", "adam", "adam or sgd")
	fs.Float64Var(&opt.Momentum, "momentum", 0, "sgd momentum")
	fs.Float64Var(&opt.WeightDecay, "weight-decay", 0, "L2 weight decay")
	fs.Float64Var(&opt.Clip, "clip", 0, "clip the global gradient norm to this value (0 = off)")
	fs.StringVar(&decay, "lr-decay-epochs", "", "comma-separated epochs at which the learning rate is multiplied by --lr-decay")
	fs.Float64Var(&opt.DecayGamma, "lr-decay", 0.1, "learning-rate factor at each --lr-decay-epochs epoch")
	fs.Int64Var(&opt.Seed, "seed", 1, "random seed (same seed, same numbers)")
	fs.IntVar(&opt.Patience, "patience", 0, "stop after this many epochs without a better dev accuracy (0 = never)")
	fs.StringVar(&opt.Out, "out", "", "model directory to write (required); checkpoints go to OUT.ckpt")
	fs.BoolVar(&opt.Resume, "resume", false, "continue an interrupted run from OUT.ckpt")
	fs.StringVar(&opt.LogPath, "log", "", "append per-epoch metrics as JSON lines to this file (default OUT.log.jsonl)")
	fs.BoolVar(&quiet, "quiet", false, "no progress bar")
	fs.BoolVar(&asJSON, "json", false, "print the final test evaluation as one JSON object")
	if err := parse(fs, args); err != nil {
		return err
	}
	if opt.Out == "" {
		return usageError{fmt.Errorf("--out is required")}
	}
	if err := useBLAS(nf.blasName); err != nil {
		return err
	}
	for _, s := range strings.Split(decay, ",") {
		if s = strings.TrimSpace(s); s != "" {
			e, err := strconv.Atoi(s)
			if err != nil {
				return usageError{fmt.Errorf("--lr-decay-epochs %q: %v", decay, err)}
			}
			opt.DecayEpochs = append(opt.DecayEpochs, e)
		}
	}
	if opt.LogPath == "" {
		opt.LogPath = opt.Out + ".log.jsonl"
	}
	if !quiet {
		opt.Progress = stderr
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
	start := time.Now()
	vocab := train.BuildVocab(tok, ds.Train, preset.MinCount, preset.MaxVocab)
	rng := rand.New(rand.NewSource(opt.Seed))
	var vecs *text.Vectors
	if nf.embeddings != "" {
		if vecs, err = text.LoadVectors(nf.embeddings, vocab); err != nil {
			return err
		}
		cfg.EmbedDim = vecs.Dim
	}
	m, err := model.New(model.Meta{Net: cfg, Tokenizer: preset.Tokenizer, MaxLen: preset.MaxLen, Classes: ds.Classes}, vocab, rng)
	if err != nil {
		return usageError{err}
	}
	if vecs != nil {
		// Words the file lacks keep their random rows; padding stays zero.
		table := m.Net.Emb.W.Value.Data
		for id := 2; id < vocab.Len(); id++ {
			if vecs.Found[id] {
				copy(table[id*vecs.Dim:(id+1)*vecs.Dim], vecs.Row(int32(id)))
			}
		}
		fmt.Fprintf(stderr, "embeddings: %d of %d vocabulary words found in %s\n", vecs.NumFound, vocab.Len()-2, nf.embeddings)
	}
	fmt.Fprintf(stderr, "data: %s, %d train / %d dev / %d test, %d classes; vocabulary %d words; %s tokenizer, max length %d; BLAS %s\n",
		ds.Name, len(ds.Train), len(ds.Dev), len(ds.Test), len(ds.Classes), vocab.Len(), preset.Tokenizer, preset.MaxLen, tensor.BackendName())
	for _, n := range ds.Notes {
		fmt.Fprintf(stderr, "note: %s\n", n)
	}
	opt.Info = map[string]any{"dataset": ds.Name, "arch": cfg.Arch}
	if nf.embeddings != "" {
		opt.Info["embeddings"] = nf.embeddings
	}
	trainEx, devEx := train.Encode(m, ds.Train), train.Encode(m, ds.Dev)
	res, err := train.Run(m, train.Standard{}, trainEx, devEx, opt)
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	best, err := model.Load(opt.Out)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "trained in %s; best dev accuracy %.4f at epoch %d; model written to %s\n",
		elapsed.Round(time.Second), res.BestDevAcc, res.BestEpoch, opt.Out)
	if len(ds.Test) == 0 {
		return nil
	}
	rep, err := evaluate(best, ds.Test, ds.Classes)
	if err != nil {
		return err
	}
	return printReport(stdout, rep, asJSON, map[string]any{"split": "test", "dataset": ds.Name,
		"train_seconds": elapsed.Seconds(), "best_epoch": res.BestEpoch, "best_dev_acc": res.BestDevAcc,
		"epoch_seconds": epochSeconds(res)})
}

func epochSeconds(r *train.Result) []float64 {
	var s []float64
	for _, e := range r.Epochs {
		s = append(s, e.Seconds)
	}
	return s
}

func evaluate(m *model.Model, ex []dataset.Example, classes []string) (metrics.Report, error) {
	if len(classes) != len(m.Classes) {
		return metrics.Report{}, fmt.Errorf("the data has %d classes, the model %d", len(classes), len(m.Classes))
	}
	enc := train.Encode(m, ex)
	pred := train.Predict(m.Net, enc)
	gold := make([]int, len(ex))
	for i, e := range ex {
		gold[i] = e.Label
	}
	return metrics.Classification(gold, pred, m.Classes)
}

// printReport prints a metrics report as text or one JSON object with the
// report's fields plus extra.
func printReport(w io.Writer, rep metrics.Report, asJSON bool, extra map[string]any) error {
	if !asJSON {
		fmt.Fprint(w, rep.Format())
		return nil
	}
	raw, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	obj := map[string]any{}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return err
	}
	for k, v := range extra {
		obj[k] = v
	}
	enc := json.NewEncoder(w)
	return enc.Encode(obj)
}
