package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/textarmor/textarmor/pipeline"
)

// runEmbedText prints one sentence embedding per input text.
func runEmbedText(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("embed-text", "embed-text --model DIR [--format json|tsv] [TEXT...]   (reads one text per line from stdin when no TEXT)", stderr)
	c := pipeline.EmbedTextConfig{Input: os.Stdin}
	var format string
	fs.StringVar(&c.Model, "model", "", "transformer model directory: a textarmor model or a Hugging Face BERT directory (required)")
	fs.StringVar(&format, "format", "json", "json (one {\"text\", \"embedding\"} object per line) or tsv (the text, then the values, tab-separated)")
	fs.StringVar(&c.BLAS, "blas", "", "BLAS backend (default: the build's)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if format != "json" && format != "tsv" {
		return usageError{fmt.Errorf("--format %q: want json or tsv", format)}
	}
	c.Texts = fs.Args()
	r, err := pipeline.EmbedText(context.Background(), c)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	for i, v := range r.Vectors {
		if format == "json" {
			if err := enc.Encode(map[string]any{"text": r.Texts[i], "embedding": v}); err != nil {
				return err
			}
			continue
		}
		var b strings.Builder
		b.WriteString(strings.NewReplacer("\t", " ", "\n", " ").Replace(r.Texts[i]))
		for _, x := range v {
			b.WriteByte('\t')
			b.WriteString(strconv.FormatFloat(float64(x), 'g', -1, 32))
		}
		b.WriteByte('\n')
		if _, err := io.WriteString(stdout, b.String()); err != nil {
			return err
		}
	}
	return nil
}

// runEvalSTS scores a model's sentence embeddings on STS-B (and SICK-R,
// STS12–16 when asked).
func runEvalSTS(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("eval-sts", "eval-sts --model DIR [--data DIR] [--sets stsb] [--split test] [--json]", stderr)
	c := pipeline.NewEvalSTSConfig()
	var sets string
	var asJSON bool
	fs.StringVar(&c.Model, "model", "", "transformer model directory: a textarmor model or a Hugging Face BERT directory (required)")
	fs.StringVar(&c.DataDir, "data", defaultDataDir(), "folder laid out like shared/data (env TEXTARMOR_DATA)")
	fs.StringVar(&sets, "sets", strings.Join(c.Sets, ","), "comma-separated: stsb, sickr, sts12 … sts16 (each STS year averages its subsets, as SentEval's 'all' does)")
	fs.StringVar(&c.Split, "split", c.Split, "stsb and sickr split: train, dev or test")
	fs.StringVar(&c.BLAS, "blas", "", "BLAS backend (default: the build's)")
	fs.BoolVar(&asJSON, "json", false, "print the results as one JSON object")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	c.Sets = strings.Split(sets, ",")
	r, err := pipeline.EvalSTS(context.Background(), c)
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(stdout).Encode(map[string]any{"model": c.Model, "split": c.Split, "results": r.Results})
	}
	fmt.Fprintf(stdout, "%-28s %6s %9s %9s\n", "set", "pairs", "spearman", "pearson")
	for _, name := range r.Order {
		res := r.Results[name]
		if res.N == 0 {
			fmt.Fprintf(stdout, "%-28s %6s %9.2f %9s\n", name+" (mean)", "", res.Spearman, "")
			continue
		}
		fmt.Fprintf(stdout, "%-28s %6d %9.2f %9.2f\n", name, res.N, res.Spearman, res.Pearson)
	}
	return nil
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
