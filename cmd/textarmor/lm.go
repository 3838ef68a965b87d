package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/textarmor/textarmor/pipeline"
)

// runLM implements `lm train`: a Kneser-Ney n-gram language model from the
// training split of dataset presets and/or a plain-text corpus, for the
// alzantot recipe's language-model filter (`attack --lm FILE`).
func runLM(args []string, stdout, stderr io.Writer) error {
	switch {
	case len(args) > 0 && args[0] == "train":
		args = args[1:]
	case len(args) == 0 || !strings.HasPrefix(args[0], "-"): // flags alone (--help) mean lm train
		return usageError{fmt.Errorf("want a subcommand: 'lm train (--dataset NAME | --corpus FILE) --out FILE'")}
	}
	fs := newFlags("lm train", "lm train (--dataset NAME[,NAME...] | --corpus FILE) --out FILE [flags]\n\n"+
		"Trains an interpolated modified Kneser-Ney n-gram model (the stand-in for the Google 1-billion-word LM\n"+
		"of Alzantot et al.) for 'attack --recipe alzantot --lm FILE'. Only the TRAINING split of a preset is used;\n"+
		"use the preset the attacked model was trained on, so that the words match its tokenizer.", stderr)
	c := pipeline.NewTrainLMConfig()
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
