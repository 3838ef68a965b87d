package pipeline

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/metrics"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/train"
)

// DataDirEnv names the environment variable the CLI reads the benchmark
// data folder from when --data is not given.
const DataDirEnv = "TEXTARMOR_DATA"

// Data selects a dataset: a preset under a data folder laid out like the
// project's shared/data, or CSV/TSV/JSONL files; and the preprocessing
// that overrides the preset's.
type Data struct {
	// Preset is a dataset preset name (dataset.Presets); Dir the data
	// folder holding it.
	Preset, Dir string
	// Train, Dev and Test are files used instead of a preset.
	Train, Dev, Test string
	// Format (csv, tsv or jsonl; default from the extension), TextCol and
	// LabelCol (column name, 0-based index or JSON key) read the files;
	// SkipBad skips malformed lines instead of failing.
	Format, TextCol, LabelCol string
	SkipBad                   bool
	// Tokenizer, MaxLen and MinCount override the preset's when set;
	// MaxVocab when ≥ 0 (0 = no cap).
	Tokenizer        string
	MaxLen, MinCount int
	MaxVocab         int
}

// NewData returns a selection with the CLI's defaults: columns "text" and
// "label", the preset's preprocessing.
func NewData() Data { return Data{TextCol: "text", LabelCol: "label", MaxVocab: -1} }

// DataDir returns dir, or a *ConfigError saying what needs the data folder
// when none was given.
func DataDir(dir, what string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	return "", configErrorf("%s needs the benchmark data folder: give --data DIR or set %s (a folder laid out like the project's shared/data; see the README)", what, DataDirEnv)
}

// DefaultSynonyms is the counter-fitted neighbour table under the data
// folder, which must be given.
func DefaultSynonyms(dataDir string) (string, error) {
	dir, err := DataDir(dataDir, "the default synonym table (no --synonyms)")
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "counterfitted-neighbors-jia2019", "counterfitted_neighbors.json"), nil
}

// Check validates the preprocessing numbers.
func (d Data) Check() error {
	switch {
	case d.MaxLen < 0:
		return configErrorf("--max-len %d must be ≥ 0 (0 = the preset's)", d.MaxLen)
	case d.MinCount < 0:
		return configErrorf("--min-count %d must be ≥ 0 (0 = the preset's)", d.MinCount)
	case d.MaxVocab < -1:
		return configErrorf("--max-vocab %d must be ≥ 0 (0 = no cap; -1, the default, = the preset's)", d.MaxVocab)
	}
	return nil
}

// Load returns the dataset and the preprocessing preset to use with it.
func (d Data) Load() (*dataset.Dataset, dataset.Preset, error) {
	var ds *dataset.Dataset
	var preset dataset.Preset
	switch {
	case d.Preset != "" && d.Train != "":
		return nil, preset, configErrorf("give either --dataset or --train, not both")
	case d.Preset != "":
		p, err := dataset.LookupPreset(d.Preset)
		if err != nil {
			return nil, preset, &ConfigError{err}
		}
		preset = p
		dir, err := DataDir(d.Dir, "--dataset "+d.Preset)
		if err != nil {
			return nil, preset, err
		}
		if ds, err = dataset.Load(d.Preset, dir); err != nil {
			return nil, preset, err
		}
	case d.Train != "":
		preset = dataset.Preset{Name: "files", Tokenizer: "flat", MaxLen: 50, MinCount: 1}
		var err error
		ds, err = dataset.LoadSplits(d.Train, d.Dev, d.Test, d.fileOptions(nil))
		if err != nil {
			return nil, preset, err
		}
	default:
		return nil, preset, configErrorf("no data: give --dataset NAME (with --data DIR) or --train FILE")
	}
	if d.Tokenizer != "" {
		preset.Tokenizer = d.Tokenizer
	}
	if d.MaxLen > 0 {
		preset.MaxLen = d.MaxLen
	}
	if d.MinCount > 0 {
		preset.MinCount = d.MinCount
	}
	if d.MaxVocab >= 0 {
		preset.MaxVocab = d.MaxVocab
	}
	return ds, preset, nil
}

func (d Data) fileOptions(classes []string) dataset.FileOptions {
	return dataset.FileOptions{Format: d.Format, TextCol: d.TextCol, LabelCol: d.LabelCol, SkipBad: d.SkipBad, Classes: classes}
}

// Name is the dataset's name as results record it: the preset's, or the
// training (else test) file's base name.
func (d Data) Name() string {
	switch {
	case d.Preset != "":
		return d.Preset
	case d.Train != "":
		return filepath.Base(d.Train)
	}
	return filepath.Base(d.Test)
}

// ForModel loads the split a model is scored on: a bare test file (no
// preset, no training file) is read with the model's own classes; a
// dataset's split must have the model's number of classes. It returns the
// examples and the dataset's name; skipped lines are reported to w.
func (d Data) ForModel(m *model.Model, splitName string, w io.Writer) ([]dataset.Example, string, error) {
	if d.Preset == "" && d.Train == "" && d.Test != "" {
		ex, _, skipped, err := dataset.LoadFile(d.Test, d.fileOptions(m.Classes))
		if err != nil {
			return nil, "", err
		}
		if skipped.Count > 0 {
			fmt.Fprintf(w, "%s\n", skipped)
		}
		if err := SameInputs(m, ex); err != nil {
			return nil, "", err
		}
		return ex, filepath.Base(d.Test), nil
	}
	ds, _, err := d.Load()
	if err != nil {
		return nil, "", err
	}
	if err := SameClassCount(m, ds.Classes); err != nil {
		return nil, "", &ConfigError{err}
	}
	ex, err := Split(ds, splitName)
	if err != nil {
		return nil, "", err
	}
	if err := SameInputs(m, ex); err != nil {
		return nil, "", err
	}
	return ex, ds.Name, nil
}

// Split picks one split by name: train, dev or test.
func Split(ds *dataset.Dataset, name string) ([]dataset.Example, error) {
	var ex []dataset.Example
	switch name {
	case "train":
		ex = ds.Train
	case "dev":
		ex = ds.Dev
	case "test":
		ex = ds.Test
	default:
		return nil, configErrorf("split %q: want train, dev or test", name)
	}
	if len(ex) == 0 {
		return nil, fmt.Errorf("dataset %s has no %s split", ds.Name, name)
	}
	return ex, nil
}

// SameClassCount refuses to pair a model with data of another number of
// classes: every job that scores a model on a dataset checks it.
func SameClassCount(m *model.Model, classes []string) error {
	if len(classes) != len(m.Classes) {
		return fmt.Errorf("the data has %d classes (%s), the model %d (%s)", len(classes), strings.Join(classes, ", "),
			len(m.Classes), strings.Join(m.Classes, ", "))
	}
	return nil
}

// Evaluate scores m on labelled examples: accuracy, macro-F1, per-class
// scores and the confusion matrix.
func Evaluate(m *model.Model, ex []dataset.Example, classes []string) (metrics.Report, error) {
	r, _, err := EvaluateEach(m, ex, classes)
	return r, err
}

// EvaluateEach is Evaluate with each example's result (true: classified
// correctly), for comparisons of two models paired example by example.
func EvaluateEach(m *model.Model, ex []dataset.Example, classes []string) (metrics.Report, []bool, error) {
	if err := SameClassCount(m, classes); err != nil {
		return metrics.Report{}, nil, err
	}
	if err := SameInputs(m, ex); err != nil {
		return metrics.Report{}, nil, err
	}
	pred := train.Predict(m.Net, train.Encode(m, ex))
	gold := make([]int, len(ex))
	correct := make([]bool, len(ex))
	for i, e := range ex {
		gold[i], correct[i] = e.Label, pred[i] == e.Label
	}
	r, err := metrics.Classification(gold, pred, m.Classes)
	return r, correct, err
}

// EnvDataDir is the data folder from DataDirEnv ("" when unset).
func EnvDataDir() string { return os.Getenv(DataDirEnv) }
