package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/text"
)

func runEval(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("eval", "eval --model DIR (--dataset NAME | --test FILE) [flags]", stderr)
	var df dataFlags
	df.register(fs, false)
	var path, splitName, blasName string
	var asJSON bool
	fs.StringVar(&path, "model", "", "model directory written by 'textarmor train' (required)")
	fs.StringVar(&splitName, "split", "test", "split to evaluate: train, dev or test")
	fs.BoolVar(&asJSON, "json", false, "print one JSON object (accuracy, macro_f1, n, per-class scores, confusion)")
	fs.StringVar(&blasName, "blas", "", "BLAS backend (default: the build's)")
	var certifyOn bool
	var synPath string
	fs.BoolVar(&certifyOn, "certify", false, "also report IBP certified accuracy over the synonym boxes (cnn/lstm/bilstm models)")
	fs.StringVar(&synPath, "synonyms", "", "--certify: synonym neighbour table (default DATA/counterfitted-neighbors-jia2019/counterfitted_neighbors.json)")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	m, err := openModel(path, blasName)
	if err != nil {
		return err
	}
	if m.EncoderOnly() {
		return usageError{fmt.Errorf("%s has no classifier: fine-tune it first (train --init %s)", path, path)}
	}
	if certifyOn && m.Pieces != nil {
		return usageError{fmt.Errorf("--certify: IBP bounds are for cnn, lstm and bilstm models, not transformers")}
	}
	extra := map[string]any{}
	// Texts beyond the model's length are cut: say how many.
	truncated := func(ex []dataset.Example) {
		n := truncatedCount(m, ex)
		extra["truncated"] = n
		if n > 0 && !asJSON {
			fmt.Fprintf(stdout, "%d of %d texts were truncated to the model's %d tokens\n", n, len(ex), m.MaxLen)
		}
	}
	withCert := func(ex []dataset.Example) error {
		if !certifyOn {
			return nil
		}
		syn, _, err := loadSynonyms(synPath, df.Dir, m.Vocab, 8)
		if err != nil {
			return err
		}
		acc, err := certify(stderr, m, syn, ex, 8)
		if err != nil {
			return err
		}
		extra["certified_accuracy"] = acc
		extra["certify_hull"] = string(trainedHull(m))
		if !asJSON {
			fmt.Fprintf(stdout, "certified accuracy %.4f\n", acc)
		}
		return nil
	}
	// A bare --test file is evaluated with the model's own classes.
	if df.Preset == "" && df.Train == "" && df.Test != "" {
		ex, _, skipped, err := dataset.LoadFile(df.Test, dataset.FileOptions{Format: df.Format, TextCol: df.TextCol,
			LabelCol: df.LabelCol, SkipBad: df.SkipBad, Classes: m.Classes})
		if err != nil {
			return err
		}
		if skipped.Count > 0 {
			fmt.Fprintf(stderr, "%s\n", skipped)
		}
		rep, err := evaluate(m, ex, m.Classes)
		if err != nil {
			return err
		}
		if !asJSON {
			fmt.Fprintf(stdout, "model %s (%s, trained by %v) on %s\n", path, archLabel(m.Net.Cfg), m.Training["objective"], df.Test)
		}
		truncated(ex)
		if err := withCert(ex); err != nil {
			return err
		}
		extra["split"], extra["file"], extra["model"] = "file", df.Test, path
		return printReport(stdout, rep, asJSON, extra)
	}
	ds, _, err := df.load()
	if err != nil {
		return err
	}
	ex, err := split(ds, splitName)
	if err != nil {
		return err
	}
	rep, err := evaluate(m, ex, ds.Classes)
	if err != nil {
		return err
	}
	if !asJSON {
		fmt.Fprintf(stdout, "model %s (%s, trained by %v) on %s/%s\n", path, archLabel(m.Net.Cfg), m.Training["objective"], ds.Name, splitName)
	}
	truncated(ex)
	if err := withCert(ex); err != nil {
		return err
	}
	extra["split"], extra["dataset"], extra["model"] = splitName, ds.Name, path
	return printReport(stdout, rep, asJSON, extra)
}

func runPredict(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("predict", "predict --model DIR [--json] [TEXT...]   (reads one text per line from stdin when no TEXT)", stderr)
	var path string
	var asJSON bool
	fs.StringVar(&path, "model", "", "model directory: a textarmor model, or a Hugging Face BERT directory with a classifier (required)")
	fs.BoolVar(&asJSON, "json", false, "print one JSON object per text: text, label, class, probs")
	if err := parse(fs, args); err != nil {
		return err
	}
	if path == "" {
		return usageError{fmt.Errorf("--model is required")}
	}
	m, err := model.Open(path)
	if err != nil {
		return err
	}
	if m.EncoderOnly() {
		return usageError{fmt.Errorf("%s has no classifier: fine-tune it first (train --init %s)", path, path)}
	}
	texts, err := textsFrom(fs.Args())
	if err != nil {
		return err
	}
	if len(texts) == 0 {
		return usageError{fmt.Errorf("no text given (as arguments or on stdin)")}
	}
	preds := m.PredictTexts(texts)
	enc := json.NewEncoder(stdout)
	for i, p := range preds {
		if asJSON {
			if err := enc.Encode(map[string]any{"text": texts[i], "label": p.Label, "class": p.Class, "probs": p.Probs, "known_tokens": p.KnownTokens}); err != nil {
				return err
			}
			continue
		}
		note := ""
		if p.KnownTokens == 0 {
			note = "  (no word of this text is in the model's vocabulary)"
		}
		fmt.Fprintf(stdout, "%s\t%.3f\t%s%s\n", p.Label, p.Probs[p.Class], printable(texts[i]), note)
	}
	return nil
}

func runData(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "stats" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			fmt.Fprintln(stderr, "Usage: textarmor data stats [flags]   (see 'textarmor data stats --help')")
			return nil
		}
		return usageError{fmt.Errorf("usage: textarmor data stats [flags]")}
	}
	fs := newFlags("data stats", "data stats (--dataset NAME | --train FILE ...) [flags]", stderr)
	var df dataFlags
	df.register(fs, true)
	var asJSON bool
	fs.BoolVar(&asJSON, "json", false, "print the statistics as JSON")
	if err := parseNoArgs(fs, args[1:]); err != nil {
		return err
	}
	if err := checkNumbers(df.numbers()...); err != nil {
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
	all := map[string]any{}
	if !asJSON {
		fmt.Fprintf(stdout, "dataset %s: %d classes (%s); tokenizer %s, max length %d\n",
			ds.Name, len(ds.Classes), strings.Join(ds.Classes, ", "), preset.Tokenizer, preset.MaxLen)
		for _, n := range ds.Notes {
			fmt.Fprintf(stdout, "note: %s\n", n)
		}
	}
	for _, sp := range []struct {
		name string
		ex   []dataset.Example
	}{{"train", ds.Train}, {"dev", ds.Dev}, {"test", ds.Test}} {
		if len(sp.ex) == 0 {
			continue
		}
		st := dataset.ComputeStats(sp.ex, tok)
		if asJSON {
			all[sp.name] = st
			continue
		}
		fmt.Fprintf(stdout, "\n== %s ==\n%s", sp.name, st.Format(ds.Classes))
	}
	if asJSON {
		all["dataset"], all["classes"], all["notes"] = ds.Name, ds.Classes, ds.Notes
		return json.NewEncoder(stdout).Encode(all)
	}
	return nil
}

// archLabel names the architecture with its optional layers.
func archLabel(c nn.Config) string {
	s := c.Arch
	if c.InputLayer > 0 {
		s += fmt.Sprintf(", input layer %d", c.InputLayer)
	}
	if c.HeadHidden > 0 {
		s += fmt.Sprintf(", hidden layer %d", c.HeadHidden)
	}
	return s
}
