package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/textarmor/textarmor/checkpoint"
	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/metrics"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/text"
)

// EvalConfig configures EvalModel (`textarmor eval`).
type EvalConfig struct {
	// Model is the model directory (required): a textarmor model or a
	// Hugging Face directory with a classifier. BLAS names the matrix
	// backend ("" = the build's; the choice is process-wide).
	Model, BLAS string
	// Data and Split select the examples: a split of a preset or of
	// training files, or a bare Data.Test file read with the model's own
	// classes (Split is then not used).
	Data  Data
	Split string
	// Certify also measures the IBP certified accuracy over the synonym
	// boxes of Synonyms (default: the counter-fitted table under Data.Dir),
	// 8 per word; models IBP does not cover (transformers) are refused
	// before any data is read.
	Certify  bool
	Synonyms string
	// Shard "i/n" scores shard i of n of the texts (the single run's
	// forward blocks i, i+n, …) and writes its predictions to Out;
	// MergeEvalShards joins the n files into the single run's result.
	Shard string
	// Out receives the result atomically: the shard file with Shard, else
	// the JSON object `eval --json` prints ("" = none).
	Out string
	// Log receives the report of skipped lines (nil = discard).
	Log io.Writer
}

// NewEvalConfig returns the CLI's defaults: the test split.
func NewEvalConfig() EvalConfig { return EvalConfig{Data: NewData(), Split: "test"} }

// EvalReport is a model's score on a split or a file.
type EvalReport struct {
	Model    *model.Model
	Examples []dataset.Example
	Report   metrics.Report
	// Dataset and Split name the split scored; File is the bare test file
	// instead (Dataset is then "" and Split "file").
	Dataset, Split, File string
	// Truncated counts the texts longer than the model's length, cut.
	Truncated int
	// Certified is the IBP certified accuracy (with Certify), over boxes
	// taken where the model's IBP training took them (CertifyHull).
	Certified   float64
	CertifyHull string
}

// EvalModel scores a model on labelled examples: accuracy, macro-F1,
// per-class scores and the confusion matrix.
func EvalModel(ctx context.Context, c EvalConfig) (*EvalReport, error) {
	si, sn, err := parseShard(c.Shard)
	if err != nil {
		return nil, err
	}
	if sn > 0 && c.Out == "" {
		return nil, configErrorf("--shard needs --out FILE for the shard's predictions")
	}
	if sn > 0 && c.Certify {
		return nil, configErrorf("--certify cannot be sharded: run it on the whole split")
	}
	m, err := openModelOn(c.Model, c.BLAS)
	if err != nil {
		return nil, err
	}
	if err := refuseEncoderOnly(m, c.Model); err != nil {
		return nil, err
	}
	if c.Certify && m.Pieces != nil {
		return nil, configErrorf("--certify: IBP bounds are for cnn, lstm and bilstm models, not transformers")
	}
	r := &EvalReport{Model: m}
	classes := m.Classes
	if c.Data.Preset == "" && c.Data.Train == "" && c.Data.Test != "" {
		// A bare test file is read with the model's own classes.
		if r.Examples, _, err = c.Data.ForModel(m, c.Split, orDiscard(c.Log)); err != nil {
			return nil, err
		}
		r.Split, r.File = "file", c.Data.Test
	} else {
		ds, _, err := c.Data.Load()
		if err != nil {
			return nil, err
		}
		if r.Examples, err = Split(ds, c.Split); err != nil {
			return nil, err
		}
		r.Dataset, r.Split, classes = ds.Name, c.Split, ds.Classes
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if sn > 0 {
		sh, err := evaluateShard(m, c, r, classes, si, sn)
		if err != nil {
			return nil, err
		}
		return r, writeEvalShard(c.Out, sh)
	}
	if r.Report, err = Evaluate(m, r.Examples, classes); err != nil {
		return nil, err
	}
	r.Truncated = TruncatedCount(m, r.Examples)
	if c.Certify {
		syn, _, err := LoadSynonyms(c.Synonyms, c.Data.Dir, m.Vocab, 8)
		if err != nil {
			return nil, err
		}
		if r.Certified, err = Certify(m, syn, r.Examples, 8, c.Log); err != nil {
			return nil, err
		}
		r.CertifyHull = string(TrainedHull(m))
	}
	if c.Out != "" {
		obj, err := r.JSON(c.Model, c.Certify)
		if err != nil {
			return nil, err
		}
		raw, err := json.Marshal(obj)
		if err != nil {
			return nil, err
		}
		if err := checkpoint.WriteFileAtomic(c.Out, append(raw, '\n'), 0o644); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// PredictConfig configures Predict (`textarmor predict`).
type PredictConfig struct {
	// Model is the model directory (required): a textarmor model or a
	// Hugging Face directory with a classifier.
	Model string
	// Texts to classify; when there are none, one text per line of Input
	// (the CLI: stdin), read once the model is open. For a model that
	// reads sentence pairs each text is "first<TAB>second".
	Texts []string
	Input io.Reader
}

// PredictReport holds each text with its prediction.
type PredictReport struct {
	Texts       []string
	Predictions []model.Prediction
}

// Predict classifies texts.
func Predict(ctx context.Context, c PredictConfig) (*PredictReport, error) {
	if c.Model == "" {
		return nil, configErrorf("--model is required")
	}
	m, err := model.Open(c.Model)
	if err != nil {
		return nil, err
	}
	if err := refuseEncoderOnly(m, c.Model); err != nil {
		return nil, err
	}
	texts, err := inputTexts(c.Texts, c.Input)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if m.Pairs() {
		preds, err := predictPairs(m, texts)
		if err != nil {
			return nil, err
		}
		return &PredictReport{Texts: texts, Predictions: preds}, nil
	}
	return &PredictReport{Texts: texts, Predictions: m.PredictTexts(texts)}, nil
}

// DataStatsReport describes a dataset (`textarmor data stats`).
type DataStatsReport struct {
	Dataset *dataset.Dataset
	Preset  dataset.Preset // the preprocessing in effect
	Splits  []SplitStats   // the non-empty splits, in train, dev, test order
}

// JSON is the report as `data stats --json` prints it: the dataset's
// name, classes and notes, and each split's statistics under its name.
func (r *DataStatsReport) JSON() map[string]any {
	ds := r.Dataset
	all := map[string]any{"dataset": ds.Name, "classes": ds.Classes, "notes": ds.Notes}
	for _, sp := range r.Splits {
		all[sp.Name] = sp.Stats
	}
	return all
}

// WriteText prints the report for a reader.
func (r *DataStatsReport) WriteText(w io.Writer) error {
	ds := r.Dataset
	fmt.Fprintf(w, "dataset %s: %d classes (%s); tokenizer %s, max length %d\n",
		ds.Name, len(ds.Classes), strings.Join(ds.Classes, ", "), r.Preset.Tokenizer, r.Preset.MaxLen)
	for _, n := range ds.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	for _, sp := range r.Splits {
		if _, err := fmt.Fprintf(w, "\n== %s ==\n%s", sp.Name, sp.Stats.Format(ds.Classes)); err != nil {
			return err
		}
	}
	return nil
}

// SplitStats are one split's statistics.
type SplitStats struct {
	Name  string
	Stats dataset.Stats
}

// DataStats loads the dataset d selects and counts each split's examples,
// classes and lengths under the preset's tokenizer.
func DataStats(d Data) (*DataStatsReport, error) {
	if err := d.Check(); err != nil {
		return nil, err
	}
	ds, preset, err := d.Load()
	if err != nil {
		return nil, err
	}
	tok, err := text.NewTokenizer(preset.Tokenizer)
	if err != nil {
		return nil, &ConfigError{err}
	}
	r := &DataStatsReport{Dataset: ds, Preset: preset}
	for _, sp := range []struct {
		name string
		ex   []dataset.Example
	}{{"train", ds.Train}, {"dev", ds.Dev}, {"test", ds.Test}} {
		if len(sp.ex) > 0 {
			r.Splits = append(r.Splits, SplitStats{Name: sp.name, Stats: dataset.ComputeStats(sp.ex, tok)})
		}
	}
	return r, nil
}
