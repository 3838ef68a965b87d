package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/textarmor/textarmor/internal/quote"
	"github.com/textarmor/textarmor/pipeline"
)

func runEval(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("eval", "eval --model DIR (--dataset NAME | --test FILE) [flags]", stderr)
	c := pipeline.NewEvalConfig()
	df := dataFlags{c.Data}
	df.register(fs, false)
	var asJSON bool
	fs.StringVar(&c.Model, "model", "", "model directory written by 'textarmor train' (required)")
	fs.StringVar(&c.Split, "split", c.Split, "split to evaluate: train, dev or test")
	fs.BoolVar(&asJSON, "json", false, "print one JSON object (accuracy, macro_f1, n, per-class scores, confusion)")
	fs.StringVar(&c.BLAS, "blas", "", "BLAS backend (default: the build's)")
	fs.BoolVar(&c.Certify, "certify", false, "also report IBP certified accuracy over the synonym boxes (cnn/lstm/bilstm models)")
	fs.StringVar(&c.Synonyms, "synonyms", "", "--certify: synonym neighbour table (default DATA/counterfitted-neighbors-jia2019/counterfitted_neighbors.json)")
	fs.StringVar(&c.Shard, "shard", "", "score shard i/n of the texts (the single run's forward blocks i, i+n, …) into --out; 'textarmor merge' joins the n files into the single run's --json result")
	fs.StringVar(&c.Out, "out", "", "also write the result to this file, atomically: the --json object, or with --shard the shard's predictions")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	c.Data, c.Log = df.Data, stderr
	r, err := pipeline.EvalModel(context.Background(), c)
	if err != nil {
		return err
	}
	m := r.Model
	on := r.Dataset + "/" + r.Split
	if r.File != "" {
		on = r.File
	}
	if !asJSON {
		fmt.Fprintf(stdout, "model %s (%s, trained by %v) on %s\n", c.Model, m.Net.Cfg.Label(), m.Training["objective"], on)
		if c.Shard != "" {
			fmt.Fprintf(stdout, "shard %s: %d of %d texts, written to %s ('textarmor merge' joins the shards); the shard's own scores:\n", c.Shard, r.Report.N, len(r.Examples), c.Out)
		}
		if r.Truncated > 0 {
			fmt.Fprintf(stdout, "%d of %d texts were truncated to the model's %d tokens\n", r.Truncated, r.Report.N, m.MaxLen)
		}
	}
	if c.Certify && !asJSON {
		fmt.Fprintf(stdout, "certified accuracy %.4f\n", r.Certified)
	}
	if !asJSON {
		_, err := fmt.Fprint(stdout, r.Report.Format())
		return err
	}
	obj, err := r.JSON(c.Model, c.Certify)
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(obj)
}

func runPredict(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("predict", "predict --model DIR [--json] [TEXT...]   (reads one text per line from stdin when no TEXT; a sentence-pair model reads FIRST<TAB>SECOND)", stderr)
	c := pipeline.PredictConfig{Input: os.Stdin}
	var asJSON bool
	fs.StringVar(&c.Model, "model", "", "model directory: a textarmor model, or a Hugging Face BERT directory with a classifier (required)")
	fs.BoolVar(&asJSON, "json", false, "print one JSON object per text: text, label, class, probs")
	if err := parse(fs, args); err != nil {
		return err
	}
	c.Texts = fs.Args()
	r, err := pipeline.Predict(context.Background(), c)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	for i, p := range r.Predictions {
		if asJSON {
			if err := enc.Encode(map[string]any{"text": r.Texts[i], "label": p.Label, "class": p.Class, "probs": p.Probs, "known_tokens": p.KnownTokens}); err != nil {
				return err
			}
			continue
		}
		note := ""
		if p.KnownTokens == 0 {
			note = "  (no word of this text is in the model's vocabulary)"
		}
		fmt.Fprintf(stdout, "%s\t%.3f\t%s%s\n", p.Label, p.Probs[p.Class], quote.Printable(r.Texts[i]), note)
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
	df := dataFlags{pipeline.NewData()}
	df.register(fs, true)
	var asJSON bool
	fs.BoolVar(&asJSON, "json", false, "print the statistics as JSON")
	if err := parseNoArgs(fs, args[1:]); err != nil {
		return err
	}
	r, err := pipeline.DataStats(df.Data)
	if err != nil {
		return err
	} else if asJSON {
		return json.NewEncoder(stdout).Encode(r.JSON())
	}
	return r.WriteText(stdout)
}
