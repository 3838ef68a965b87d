package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/textarmor/textarmor/langmodel"
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
	var names, dataDir, corpus, out, label string
	var opt langmodel.Options
	var asJSON bool
	fs.StringVar(&names, "dataset", "", "dataset preset(s), comma-separated: their training texts, each tokenised with its preset's tokenizer")
	fs.StringVar(&dataDir, "data", defaultDataDir(), "folder laid out like shared/data (env TEXTARMOR_DATA)")
	fs.StringVar(&corpus, "corpus", "", "plain-text corpus, one text per line (.gz ok), lower-cased and split on white space; may be combined with --dataset")
	fs.StringVar(&out, "out", "", "output model file (required), written atomically")
	fs.IntVar(&opt.Order, "order", 3, "n-gram order: 1, 2 or 3")
	fs.IntVar(&opt.MinCount, "min-count", 1, "words seen fewer times become <unk>")
	fs.StringVar(&label, "label", "", "corpus name shown in attack descriptions (default: the dataset names or the corpus file)")
	fs.BoolVar(&asJSON, "json", false, "print a one-line JSON summary on stdout")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := checkNumbers(
		numRule{opt.Order >= 1 && opt.Order <= langmodel.MaxOrder, "order", opt.Order, fmt.Sprintf("in [1, %d]", langmodel.MaxOrder)},
		numRule{opt.MinCount >= 1, "min-count", opt.MinCount, "at least 1"},
	); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return usageError{fmt.Errorf("unexpected arguments %q", fs.Args())}
	case names == "" && corpus == "":
		return usageError{fmt.Errorf("no corpus: give --dataset NAME[,NAME...] (with --data DIR) and/or --corpus FILE")}
	case out == "":
		return usageError{fmt.Errorf("--out is required")}
	}
	if st, err := os.Stat(out); err == nil && st.IsDir() {
		return usageError{fmt.Errorf("--out %s is a directory", out)}
	}
	if label == "" {
		var parts []string
		for _, n := range splitList(names) {
			parts = append(parts, n+"-train")
		}
		if corpus != "" {
			parts = append(parts, corpus)
		}
		label = strings.Join(parts, "+")
	}
	opt.Label = label
	sentences, sources, err := loadCorpus(names, dataDir, corpus, stderr)
	if err != nil {
		return err
	}
	start := time.Now()
	m, err := langmodel.Train(sentences, opt)
	if err != nil {
		return err
	}
	secs := time.Since(start).Seconds()
	if err := m.Save(out); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "trained %s in %.1f s; wrote %s\n", m.Name(), secs, out)
	if asJSON {
		return json.NewEncoder(stdout).Encode(map[string]any{"out": out, "name": m.Name(), "order": m.Order(),
			"vocab": m.VocabSize(), "min_count": opt.MinCount, "sources": sources, "seconds": secs})
	}
	return nil
}
