package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/senteval"
)

// runEmbedText prints one sentence embedding per input text.
func runEmbedText(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("embed-text", "embed-text --model DIR [--format json|tsv] [TEXT...]   (reads one text per line from stdin when no TEXT)", stderr)
	var path, format, blasName string
	fs.StringVar(&path, "model", "", "transformer model directory: a textarmor model or a Hugging Face BERT directory (required)")
	fs.StringVar(&format, "format", "json", "json (one {\"text\", \"embedding\"} object per line) or tsv (the text, then the values, tab-separated)")
	fs.StringVar(&blasName, "blas", "", "BLAS backend (default: the build's)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if path == "" {
		return usageError{fmt.Errorf("--model is required")}
	}
	if format != "json" && format != "tsv" {
		return usageError{fmt.Errorf("--format %q: want json or tsv", format)}
	}
	if err := useBLAS(blasName); err != nil {
		return err
	}
	m, err := model.Open(path)
	if err != nil {
		return err
	}
	texts, err := textsFrom(fs.Args())
	if err != nil {
		return err
	}
	if len(texts) == 0 {
		return usageError{fmt.Errorf("no text given (as arguments or on stdin)")}
	}
	vecs, err := m.Embed(texts)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	for i, v := range vecs {
		if format == "json" {
			if err := enc.Encode(map[string]any{"text": texts[i], "embedding": v}); err != nil {
				return err
			}
			continue
		}
		var b strings.Builder
		b.WriteString(strings.NewReplacer("\t", " ", "\n", " ").Replace(texts[i]))
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
	var path, dataDir, sets, splitName, blasName string
	var asJSON bool
	fs.StringVar(&path, "model", "", "transformer model directory: a textarmor model or a Hugging Face BERT directory (required)")
	fs.StringVar(&dataDir, "data", defaultDataDir(), "folder laid out like shared/data (env TEXTARMOR_DATA)")
	fs.StringVar(&sets, "sets", "stsb", "comma-separated: stsb, sickr, sts12 … sts16 (each STS year averages its subsets, as SentEval's 'all' does)")
	fs.StringVar(&splitName, "split", "test", "stsb and sickr split: train, dev or test")
	fs.StringVar(&blasName, "blas", "", "BLAS backend (default: the build's)")
	fs.BoolVar(&asJSON, "json", false, "print the results as one JSON object")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if path == "" {
		return usageError{fmt.Errorf("--model is required")}
	}
	dir, err := dataDirFor(dataDir, "eval-sts")
	if err != nil {
		return err
	}
	// The data first: a missing file is reported before the model loads.
	var groupsOf [][]simGroup
	for _, set := range strings.Split(sets, ",") {
		groups, err := stsPairs(dir, strings.TrimSpace(set), splitName)
		if err != nil {
			return err
		}
		groupsOf = append(groupsOf, groups)
	}
	m, err := openModel(path, blasName)
	if err != nil {
		return err
	}
	results := map[string]senteval.STSResult{}
	var order []string
	for k, set := range strings.Split(sets, ",") {
		set = strings.TrimSpace(set)
		groups := groupsOf[k]
		var sum float64
		for _, g := range groups {
			r, err := senteval.STS(m, g.pairs)
			if err != nil {
				return fmt.Errorf("%s: %w", g.name, err)
			}
			results[g.name] = r
			order = append(order, g.name)
			sum += r.Spearman
		}
		if len(groups) > 1 {
			results[set] = senteval.STSResult{Spearman: sum / float64(len(groups))}
			order = append(order, set)
		}
	}
	if asJSON {
		return json.NewEncoder(stdout).Encode(map[string]any{"model": path, "split": splitName, "results": results})
	}
	fmt.Fprintf(stdout, "%-28s %6s %9s %9s\n", "set", "pairs", "spearman", "pearson")
	for _, name := range order {
		r := results[name]
		if r.N == 0 {
			fmt.Fprintf(stdout, "%-28s %6s %9.2f %9s\n", name+" (mean)", "", r.Spearman, "")
			continue
		}
		fmt.Fprintf(stdout, "%-28s %6d %9.2f %9.2f\n", name, r.N, r.Spearman, r.Pearson)
	}
	return nil
}

type simGroup struct {
	name  string
	pairs []dataset.SimPair
}

// stsPairs loads one --sets entry as named groups of pairs.
func stsPairs(dataDir, set, splitName string) ([]simGroup, error) {
	switch {
	case set == "stsb":
		p, err := dataset.LoadSTSB(dataDir, splitName)
		return []simGroup{{"stsb/" + splitName, p}}, err
	case set == "sickr":
		p, err := dataset.LoadSICKR(dataDir, splitName)
		return []simGroup{{"sickr/" + splitName, p}}, err
	case strings.HasPrefix(set, "sts"):
		year, err := strconv.Atoi(strings.TrimPrefix(set, "sts"))
		if err != nil {
			break
		}
		subsets, err := dataset.STSSubsets(year)
		if err != nil {
			return nil, usageError{err}
		}
		all, err := dataset.LoadSTS(dataDir, year)
		if err != nil {
			return nil, err
		}
		var out []simGroup
		for _, s := range subsets {
			out = append(out, simGroup{set + "/" + s, all[s]})
		}
		return out, nil
	}
	return nil, usageError{fmt.Errorf("--sets: unknown set %q (valid: stsb, sickr, sts12 … sts16)", set)}
}

// runExport writes a model in another toolkit's format.
func runExport(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("export", "export --model DIR --format hf --out DIR", stderr)
	var path, format, out string
	var overwrite bool
	fs.StringVar(&path, "model", "", "textarmor transformer model directory (required)")
	fs.StringVar(&format, "format", "hf", "hf: a Hugging Face directory that transformers loads as BertForSequenceClassification")
	fs.StringVar(&out, "out", "", "directory to write (required)")
	fs.BoolVar(&overwrite, "overwrite", false, "replace a non-empty --out that is not an earlier export")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if path == "" || out == "" {
		return usageError{fmt.Errorf("--model and --out are required")}
	}
	if format != "hf" {
		return usageError{fmt.Errorf("--format %q: only hf is supported", format)}
	}
	m, err := model.Load(path)
	if err != nil {
		return err
	}
	if err := m.ExportHF(out, overwrite); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "exported %s to %s (Hugging Face BertForSequenceClassification, %d classes)\n", path, out, len(m.Classes))
	return nil
}

// openModel checks --model and --blas and opens the model: a textarmor
// model or a Hugging Face directory (model.Open).
func openModel(path, blasName string) (*model.Model, error) {
	if path == "" {
		return nil, usageError{fmt.Errorf("--model is required")}
	}
	if err := useBLAS(blasName); err != nil {
		return nil, err
	}
	return model.Open(path)
}
