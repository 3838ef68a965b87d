package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/textarmor/textarmor/internal/cli"
	"github.com/textarmor/textarmor/pipeline"
)

// runLM implements `lm train`: a Kneser-Ney n-gram language model from the
// training split of dataset presets and/or a plain-text corpus, for the
// alzantot recipe's language-model filter (`attack --lm FILE`).
func runLM(args []string, stdout, stderr io.Writer) error {
	switch {
	case len(args) > 0 && args[0] == "perplexity":
		return runLMPerplexity(args[1:], stdout, stderr)
	case len(args) > 0 && args[0] == "train":
		args = args[1:]
	case len(args) == 0 || !strings.HasPrefix(args[0], "-"): // flags alone (--help) mean lm train
		return usageError{fmt.Errorf("want a subcommand: 'lm train [--type ngram|lstm] ... --out PATH' or 'lm perplexity --model DIR ...'")}
	}
	switch cli.FlagValue(args, "type") {
	case "lstm":
		return runLSTMLMTrain(args, stdout, stderr)
	case "ngram", "":
	default:
		return usageError{fmt.Errorf("--type %q: want ngram or lstm", cli.FlagValue(args, "type"))}
	}
	fs := newFlags("lm train", "lm train (--dataset NAME[,NAME...] | --corpus FILE) --out FILE [flags]\n\n"+
		"Trains an interpolated modified Kneser-Ney n-gram model (the stand-in for the Google 1-billion-word LM\n"+
		"of Alzantot et al.) for 'attack --recipe alzantot --lm FILE'. Only the TRAINING split of a preset is used;\n"+
		"use the preset the attacked model was trained on, so that the words match its tokenizer.", stderr)
	c := pipeline.NewTrainLMConfig()
	fs.String("type", "ngram", "ngram (this model) or lstm (the word-level LSTM language model: 'lm train --type lstm --help')")
	var names string
	var asJSON bool
	corpusFlags(fs, &names, &c.Corpus)
	fs.StringVar(&c.Out, "out", "", "output model file (required), written atomically")
	fs.IntVar(&c.Options.Order, "order", c.Options.Order, "n-gram order: 1, 2 or 3")
	fs.IntVar(&c.Options.MinCount, "min-count", c.Options.MinCount, "words seen fewer times become <unk>")
	fs.StringVar(&c.Options.Label, "label", "", "corpus name shown in attack descriptions (default: the dataset names or the corpus file)")
	fs.BoolVar(&asJSON, "json", false, "print a one-line JSON summary on stdout")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	c.Corpus.Datasets, c.Log = datasetList(names), stderr
	r, err := pipeline.TrainLM(context.Background(), c)
	if err != nil || !asJSON {
		return err
	}
	m := r.Model
	return json.NewEncoder(stdout).Encode(map[string]any{"out": c.Out, "name": m.Name(), "order": m.Order(),
		"vocab": m.VocabSize(), "min_count": c.Options.MinCount, "sources": r.Sources, "seconds": r.Seconds})
}

// runLSTMLMTrain implements `lm train --type lstm` (spgd.md §4.2).
func runLSTMLMTrain(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("lm train", "lm train --type lstm (--dataset NAME | --train FILE [--dev FILE]) --out DIR [flags]\n\n"+
		"Trains a word-level LSTM language model (SPGD's initialiser and perplexity judge) on the training texts;\n"+
		"the dev texts, when there are some, validate each epoch.", stderr)
	c := pipeline.NewTrainLSTMLMConfig()
	df := dataFlags{c.Data}
	df.register(fs, false)
	fs.String("type", "lstm", "lstm (this model) or ngram")
	fs.StringVar(&df.Tokenizer, "tokenizer", "", "tokenizer (default: the preset's, flat for files)")
	fs.IntVar(&c.MaxLen, "max-len", c.MaxLen, "each text's first N words (0 = whole texts)")
	fs.IntVar(&c.MinCount, "min-count", c.MinCount, "keep words seen at least this often")
	fs.IntVar(&c.MaxVocab, "max-vocab", c.MaxVocab, "at most this many words, <eos> included (0 = no cap)")
	fs.IntVar(&c.Model.EmbedDim, "embed-dim", c.Model.EmbedDim, "embedding size (the classifier it initialises keeps it)")
	fs.IntVar(&c.Model.Hidden, "hidden", c.Model.Hidden, "LSTM units")
	fs.IntVar(&c.Options.Epochs, "epochs", c.Options.Epochs, "passes over the training texts")
	fs.IntVar(&c.Options.Batch, "batch", c.Options.Batch, "streams the corpus is cut into")
	fs.IntVar(&c.Options.BPTT, "bptt", c.Options.BPTT, "words per truncated-backpropagation segment")
	fs.Float64Var(&c.Options.LR, "lr", c.Options.LR, "Adam's learning rate")
	fs.Float64Var(&c.Options.Clip, "clip", c.Options.Clip, "global gradient-norm clip (0 = off)")
	fs.Float64Var(&c.Options.Decay, "lr-decay", c.Options.Decay, "learning-rate factor after an epoch without a better validation perplexity")
	fs.Int64Var(&c.Seed, "seed", c.Seed, "seed of the initial weights")
	fs.StringVar(&c.Init, "init", "", "continue training this language model (its weights, a fresh optimizer; same texts and vocabulary settings)")
	fs.StringVar(&c.Options.Out, "out", "", "model directory to write (required); checkpoints go to OUT.ckpt")
	fs.BoolVar(&c.Options.Resume, "resume", false, "continue an interrupted run from OUT.ckpt")
	fs.DurationVar(&c.Options.CheckpointEvery, "checkpoint-every", c.Options.CheckpointEvery, "also checkpoint inside an epoch this often (0 = epoch ends only)")
	var asJSON bool
	fs.BoolVar(&asJSON, "json", false, "print a one-line JSON summary on stdout")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	c.Data, c.Log = df.Data, stderr
	r, err := pipeline.TrainLSTMLM(context.Background(), c)
	if err != nil || !asJSON {
		return err
	}
	return json.NewEncoder(stdout).Encode(map[string]any{"out": c.Options.Out, "dataset": r.Dataset.Name, "vocab": r.Model.Vocab.Len(),
		"words": r.Words, "epochs": r.Result.Epochs})
}

// runLMPerplexity implements `lm perplexity`.
func runLMPerplexity(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("lm perplexity", "lm perplexity --model DIR (--dataset NAME | --test FILE) [flags]", stderr)
	c := pipeline.NewLMPerplexityConfig()
	df := dataFlags{c.Data}
	df.register(fs, false)
	var asJSON bool
	fs.StringVar(&c.Model, "model", "", "LSTM language model directory ('lm train --type lstm')")
	fs.StringVar(&c.Split, "split", c.Split, "split: train, dev or test")
	fs.IntVar(&c.N, "n", c.N, "texts of a seeded sample of the split (0 = all)")
	fs.Int64Var(&c.Seed, "seed", c.Seed, "seed of the sample")
	fs.IntVar(&c.MaxLen, "max-len", c.MaxLen, "each text's first N words (0 = whole texts)")
	fs.BoolVar(&asJSON, "json", false, "print the result as JSON")
	var by, method string
	var eps float64
	fs.StringVar(&by, "perturbed-by", "", "classifier (trained with --init-lm from this model) whose embedding perturbation moves the texts: SPGD's Table 1")
	fs.StringVar(&method, "method", "", "with --perturbed-by: advt, iadvt or spgd (default: the classifier's own defense)")
	fs.Float64Var(&eps, "eps", 0, "with --perturbed-by: ε (0 = the classifier's own, else the method's default)")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	c.Data = df.Data
	if by != "" {
		return perturbedPerplexity(c, by, method, eps, asJSON, stdout)
	}
	r, err := pipeline.LMPerplexity(context.Background(), c)
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(stdout).Encode(map[string]any{"model": c.Model, "dataset": r.Dataset, "split": c.Split, "texts": r.Texts,
			"words": r.Words, "perplexity": r.Perplexity})
	}
	_, err = fmt.Fprintf(stdout, "perplexity %.2f over %d words of %d %s/%s texts\n", r.Perplexity, r.Words, r.Texts, r.Dataset, c.Split)
	return err
}

// perturbedPerplexity prints SPGD's Table 1 row of one classifier.
func perturbedPerplexity(lc pipeline.LMPerplexityConfig, by, method string, eps float64, asJSON bool, stdout io.Writer) error {
	c := pipeline.NewPerturbationPerplexityConfig()
	c.Model, c.LM, c.Method, c.Eps, c.Data, c.Split, c.N, c.Seed = by, lc.Model, method, eps, lc.Data, lc.Split, lc.N, lc.Seed
	r, err := pipeline.PerturbationPerplexity(context.Background(), c)
	return printPerturbed(r, err, asJSON, stdout)
}

func printPerturbed(r *pipeline.PerturbationPerplexityReport, err error, asJSON bool, stdout io.Writer) error {
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(stdout).Encode(r)
	}
	_, err = fmt.Fprintf(stdout, "%s (ε %g): perplexity %.2f perturbed, %.2f clean, gap %+.2f; %.1f %% of the words moved; %d texts, %d predicted words\n",
		r.Method, r.Settings.Eps, r.Perturbed, r.Clean, r.Gap, 100*r.Moved, r.Texts, r.Words)
	if err == nil && r.Discretized > 0 {
		_, err = fmt.Fprintf(stdout, "  discretised (each moved word replaced by its neighbour): perplexity %.2f\n", r.Discretized)
	}
	return err
}
