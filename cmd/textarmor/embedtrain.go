package main

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"strings"

	"github.com/textarmor/textarmor/pipeline"
)

// corpusFlags register the corpus selection embed train and lm train share.
func corpusFlags(fs *flag.FlagSet, names *string, c *pipeline.CorpusConfig) {
	fs.StringVar(names, "dataset", "", "dataset preset(s), comma-separated: their training texts, each tokenised with its preset's tokenizer")
	fs.StringVar(&c.DataDir, "data", defaultDataDir(), "folder laid out like shared/data (env TEXTARMOR_DATA)")
	fs.StringVar(&c.File, "corpus", "", "plain-text corpus, one text per line (.gz ok), lower-cased and split on white space; may be combined with --dataset")
}

// datasetList is --dataset's comma-separated presets (none when empty).
func datasetList(names string) []string {
	if names == "" {
		return nil
	}
	return strings.Split(names, ",")
}

// runEmbedTrain implements `embed train`: word2vec skip-gram vectors from the
// training split of dataset presets and/or a plain-text corpus.
func runEmbedTrain(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("embed train", "embed train (--dataset NAME[,NAME...] | --corpus FILE) --out FILE [flags]\n\n"+
		"Trains word2vec skip-gram vectors (negative sampling, the C tool's defaults) and writes them in the\n"+
		"word2vec text format, for train --embeddings. Only the TRAINING split of a preset is used.", stderr)
	c := pipeline.NewTrainEmbeddingsConfig()
	o := &c.Options
	var names string
	var asJSON bool
	corpusFlags(fs, &names, &c.Corpus)
	fs.StringVar(&c.Out, "out", "", "output vector file (required), written atomically")
	fs.IntVar(&o.Dim, "dim", o.Dim, "vector size")
	fs.IntVar(&o.Epochs, "epochs", o.Epochs, "passes over the corpus (word2vec -iter)")
	fs.IntVar(&o.Window, "window", o.Window, "largest context distance (each word draws a window from 1 to this)")
	fs.IntVar(&o.Negative, "negative", o.Negative, "negative samples per pair")
	fs.IntVar(&o.MinCount, "min-count", o.MinCount, "ignore words seen fewer times")
	fs.Float64Var(&o.Sample, "sample", o.Sample, "subsampling threshold for frequent words (0 = off)")
	fs.Float64Var(&o.Alpha, "alpha", o.Alpha, "starting learning rate (decays linearly to alpha·1e-4)")
	fs.Int64Var(&o.Seed, "seed", o.Seed, "random seed: the same seed, data and flags give the same vectors")
	fs.IntVar(&o.Workers, "workers", o.Workers, "shards trained in parallel (deterministic; the vectors depend on this number, not on the machine)")
	fs.BoolVar(&asJSON, "json", false, "print a one-line JSON summary on stdout")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	c.Corpus.Datasets, c.Log = datasetList(names), stderr
	r, err := pipeline.TrainEmbeddings(context.Background(), c)
	if err != nil || !asJSON {
		return err
	}
	v, st, ro := r.Vectors, r.Vectors.Stats, r.Options
	return json.NewEncoder(stdout).Encode(map[string]any{
		"out": c.Out, "sources": r.Sources, "corpus_tokens": st.CorpusTokens, "train_tokens": st.TrainTokens,
		"vocab": len(v.Words), "dim": ro.Dim, "epochs": ro.Epochs, "window": ro.Window, "negative": ro.Negative,
		"min_count": ro.MinCount, "sample": ro.Sample, "alpha": ro.Alpha, "seed": ro.Seed, "workers": ro.Workers,
		"words": st.Words, "kept": st.Kept, "seconds": st.Seconds, "words_per_second": st.WordsPerSecond,
	})
}
