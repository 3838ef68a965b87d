package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/textarmor/textarmor/dataset"
)

// dataFlags are the dataset-selection flags shared by train, eval, data.
type dataFlags struct {
	name, dir                string
	train, dev, test         string
	format, textCol, labelCl string
	skipBad                  bool
	tokenizer                string
	maxLen, minCount, maxVoc int
}

// defaultDataDir is $TEXTARMOR_DATA: the data folder has no default, so
// that no command reads a path of the machine it was written on.
func defaultDataDir() string { return os.Getenv("TEXTARMOR_DATA") }

// dataDirFor returns dir, or a usage error saying what needs the data
// folder when neither --data nor TEXTARMOR_DATA gave one.
func dataDirFor(dir, what string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	return "", usageError{fmt.Errorf("%s needs the benchmark data folder: give --data DIR or set TEXTARMOR_DATA (a folder laid out like the project's shared/data; see the README)", what)}
}

func (d *dataFlags) register(fs *flag.FlagSet, vocabFlags bool) {
	var names []string
	for _, p := range dataset.Presets() {
		names = append(names, p.Name)
	}
	fs.StringVar(&d.name, "dataset", "", "dataset preset: "+strings.Join(names, ", ")+" (or use --train/--dev/--test)")
	fs.StringVar(&d.dir, "data", defaultDataDir(), "folder laid out like shared/data (env TEXTARMOR_DATA)")
	fs.StringVar(&d.train, "train", "", "training file (csv, tsv or jsonl; .gz allowed) instead of a preset")
	fs.StringVar(&d.dev, "dev", "", "development file (optional; used for model selection)")
	fs.StringVar(&d.test, "test", "", "test file (optional)")
	fs.StringVar(&d.format, "format", "", "file format csv|tsv|jsonl (default: from the extension)")
	fs.StringVar(&d.textCol, "text-col", "text", "text column name, 0-based index, or JSON key")
	fs.StringVar(&d.labelCl, "label-col", "label", "label column name, 0-based index, or JSON key")
	fs.BoolVar(&d.skipBad, "skip-bad", false, "skip malformed lines (counted and reported) instead of failing")
	if vocabFlags {
		fs.StringVar(&d.tokenizer, "tokenizer", "", "tokenizer flat|ftml|whitespace (default: the preset's, flat for files)")
		fs.IntVar(&d.maxLen, "max-len", 0, "truncate texts to this many tokens (default: the preset's, 50 for files)")
		fs.IntVar(&d.minCount, "min-count", 0, "keep training words seen at least this often (default: the preset's, 1 for files)")
		fs.IntVar(&d.maxVoc, "max-vocab", -1, "cap the vocabulary at this many words, 0 = no cap (default: the preset's)")
	}
}

// numbers are the range checks of the preprocessing flags (all 0 and
// valid when register left them out).
func (d *dataFlags) numbers() []numRule {
	return []numRule{
		{d.maxLen >= 0, "max-len", d.maxLen, "≥ 0 (0 = the preset's)"},
		{d.minCount >= 0, "min-count", d.minCount, "≥ 0 (0 = the preset's)"},
		{d.maxVoc >= -1, "max-vocab", d.maxVoc, "≥ 0 (0 = no cap; -1, the default, = the preset's)"},
	}
}

// load returns the dataset and the preprocessing preset to use with it.
func (d *dataFlags) load() (*dataset.Dataset, dataset.Preset, error) {
	var ds *dataset.Dataset
	var preset dataset.Preset
	switch {
	case d.name != "" && d.train != "":
		return nil, preset, usageError{fmt.Errorf("give either --dataset or --train, not both")}
	case d.name != "":
		p, err := dataset.LookupPreset(d.name)
		if err != nil {
			return nil, preset, usageError{err}
		}
		preset = p
		dir, err := dataDirFor(d.dir, "--dataset "+d.name)
		if err != nil {
			return nil, preset, err
		}
		ds, err = dataset.Load(d.name, dir)
		if err != nil {
			return nil, preset, err
		}
	case d.train != "":
		preset = dataset.Preset{Name: "files", Tokenizer: "flat", MaxLen: 50, MinCount: 1}
		var err error
		ds, err = dataset.LoadSplits(d.train, d.dev, d.test, dataset.FileOptions{
			Format: d.format, TextCol: d.textCol, LabelCol: d.labelCl, SkipBad: d.skipBad})
		if err != nil {
			return nil, preset, err
		}
	default:
		return nil, preset, usageError{fmt.Errorf("no data: give --dataset NAME (with --data DIR) or --train FILE")}
	}
	if d.tokenizer != "" {
		preset.Tokenizer = d.tokenizer
	}
	if d.maxLen > 0 {
		preset.MaxLen = d.maxLen
	}
	if d.minCount > 0 {
		preset.MinCount = d.minCount
	}
	if d.maxVoc >= 0 {
		preset.MaxVocab = d.maxVoc
	}
	return ds, preset, nil
}

// split picks one split by name.
func split(ds *dataset.Dataset, name string) ([]dataset.Example, error) {
	var ex []dataset.Example
	switch name {
	case "train":
		ex = ds.Train
	case "dev":
		ex = ds.Dev
	case "test":
		ex = ds.Test
	default:
		return nil, usageError{fmt.Errorf("split %q: want train, dev or test", name)}
	}
	if len(ex) == 0 {
		return nil, fmt.Errorf("dataset %s has no %s split", ds.Name, name)
	}
	return ex, nil
}
