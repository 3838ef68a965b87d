package main

import (
	"flag"
	"strings"

	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/pipeline"
)

// dataFlags are the dataset-selection flags shared by train, eval, data:
// they fill a pipeline.Data.
type dataFlags struct{ pipeline.Data }

// defaultDataDir is $TEXTARMOR_DATA: the data folder has no default, so
// that no command reads a path of the machine it was written on.
func defaultDataDir() string { return pipeline.EnvDataDir() }

func (d *dataFlags) register(fs *flag.FlagSet, vocabFlags bool) {
	var names []string
	for _, p := range dataset.Presets() {
		names = append(names, p.Name)
	}
	fs.StringVar(&d.Preset, "dataset", "", "dataset preset: "+strings.Join(names, ", ")+" (or use --train/--dev/--test)")
	fs.StringVar(&d.Dir, "data", defaultDataDir(), "folder laid out like shared/data (env TEXTARMOR_DATA)")
	fs.StringVar(&d.Train, "train", "", "training file (csv, tsv or jsonl; .gz allowed) instead of a preset")
	fs.StringVar(&d.Dev, "dev", "", "development file (optional; used for model selection)")
	fs.StringVar(&d.Test, "test", "", "test file (optional)")
	fs.StringVar(&d.Format, "format", "", "file format csv|tsv|jsonl (default: from the extension)")
	fs.StringVar(&d.TextCol, "text-col", "text", "text column name, 0-based index, or JSON key")
	fs.StringVar(&d.LabelCol, "label-col", "label", "label column name, 0-based index, or JSON key")
	fs.BoolVar(&d.SkipBad, "skip-bad", false, "skip malformed lines (counted and reported) instead of failing")
	if vocabFlags {
		fs.StringVar(&d.Tokenizer, "tokenizer", "", "tokenizer flat|ftml|whitespace (default: the preset's, flat for files)")
		fs.IntVar(&d.MaxLen, "max-len", 0, "truncate texts to this many tokens (default: the preset's, 50 for files)")
		fs.IntVar(&d.MinCount, "min-count", 0, "keep training words seen at least this often (default: the preset's, 1 for files)")
		fs.IntVar(&d.MaxVocab, "max-vocab", -1, "cap the vocabulary at this many words, 0 = no cap (default: the preset's)")
	}
}
