package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/textarmor/textarmor/pipeline"
)

// runEmbedText prints one sentence embedding per input text.
func runEmbedText(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("embed-text", "embed-text --model DIR [--format json|tsv] [TEXT...]   (reads one text per line from stdin when no TEXT)", stderr)
	c := pipeline.EmbedTextConfig{Input: os.Stdin}
	fs.StringVar(&c.Model, "model", "", "transformer model directory: a textarmor model or a Hugging Face BERT directory (required)")
	fs.StringVar(&c.Format, "format", "json", "json (one {\"text\", \"embedding\"} object per line) or tsv (the text, then the values, tab-separated)")
	fs.StringVar(&c.BLAS, "blas", "", "BLAS backend (default: the build's)")
	if err := parse(fs, args); err != nil {
		return err
	}
	c.Texts = fs.Args()
	r, err := pipeline.EmbedText(context.Background(), c)
	if err != nil {
		return err
	}
	return r.Write(stdout)
}

// embedderFlags are the model flags of eval-sts and eval-transfer.
func embedderFlags(fs *flag.FlagSet, model, data, blas *string, wordMean *bool) {
	fs.StringVar(model, "model", "", "model directory (required): a transformer (textarmor or Hugging Face BERT), or any model with --word-mean")
	fs.StringVar(data, "data", defaultDataDir(), "folder laid out like shared/data (env TEXTARMOR_DATA)")
	fs.StringVar(blas, "blas", "", "BLAS backend (default: the build's)")
	fs.BoolVar(wordMean, "word-mean", false, "embed a text as the mean of the model's word vectors (known tokens only), e.g. for a CNN or LSTM")
}

// runEvalSTS scores a model's sentence embeddings on STS-B (and SICK-R,
// STS12–16 when asked).
func runEvalSTS(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("eval-sts", "eval-sts --model DIR [--data DIR] [--sets stsb|all|sts12,...] [--split test] [--align-uniform] [--json]", stderr)
	c := pipeline.NewEvalSTSConfig()
	var sets string
	var asJSON bool
	embedderFlags(fs, &c.Model, &c.DataDir, &c.BLAS, &c.WordMean)
	fs.StringVar(&sets, "sets", strings.Join(c.Sets, ","), "comma-separated: stsb, sickr, sts12 … sts16, or all (the seven); an STS year is one correlation over its subsets (SentEval's 'all')")
	fs.StringVar(&c.Split, "split", c.Split, "stsb and sickr split: train, dev, test, or all (the three)")
	fs.BoolVar(&c.AlignUniform, "align-uniform", false, "also measure alignment and uniformity on STS-B (the --split)")
	fs.BoolVar(&asJSON, "json", false, "print the results as one JSON object")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	c.Sets = []string{sets}
	r, err := pipeline.EvalSTS(context.Background(), c)
	if err != nil {
		return err
	}
	if asJSON {
		return r.WriteJSON(stdout)
	}
	return r.WriteText(stdout)
}

// runEvalTransfer scores a model's sentence embeddings on the SentEval
// transfer tasks (logistic regression on frozen embeddings).
func runEvalTransfer(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("eval-transfer", "eval-transfer --model DIR [--data DIR] [--tasks mr,cr,subj,mpqa,sst2,mrpc,trec] [--seed 1111] [--json]", stderr)
	c := pipeline.NewEvalTransferConfig()
	var tasks string
	var asJSON bool
	embedderFlags(fs, &c.Model, &c.DataDir, &c.BLAS, &c.WordMean)
	fs.StringVar(&tasks, "tasks", "all", "comma-separated: mr, cr, subj, mpqa, sst2, mrpc, trec, or all")
	fs.Int64Var(&c.Seed, "seed", c.Seed, "seed of the folds, validation hold-outs and classifiers")
	fs.BoolVar(&asJSON, "json", false, "print the results as one JSON object")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	c.Tasks, c.Log = []string{tasks}, stderr
	r, err := pipeline.EvalTransfer(context.Background(), c)
	if err != nil {
		return err
	}
	if asJSON {
		return r.WriteJSON(stdout)
	}
	return r.WriteText(stdout)
}

// runExport writes a model in another toolkit's format.
func runExport(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("export", "export --model DIR --format hf --out DIR", stderr)
	var c pipeline.ExportConfig
	fs.StringVar(&c.Model, "model", "", "textarmor transformer model directory (required)")
	fs.StringVar(&c.Format, "format", "hf", "hf: a Hugging Face directory that transformers loads as BertForSequenceClassification")
	fs.StringVar(&c.Out, "out", "", "directory to write (required)")
	fs.BoolVar(&c.Overwrite, "overwrite", false, "replace a non-empty --out that is not an earlier export")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	m, err := pipeline.Export(c)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "exported %s to %s (Hugging Face BertForSequenceClassification, %d classes)\n", c.Model, c.Out, len(m.Classes))
	return nil
}
