package pipeline

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/textarmor/textarmor/checkpoint"
	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/langmodel"
	"github.com/textarmor/textarmor/text"
	"github.com/textarmor/textarmor/wordvec"
)

// CorpusConfig selects a training corpus of tokenised texts: the TRAINING
// split of dataset presets (never dev or test), each tokenised with its
// preset's tokenizer, and/or a plain-text file.
type CorpusConfig struct {
	// Datasets are preset names; DataDir the data folder holding them.
	Datasets []string
	DataDir  string
	// File is a one-text-per-line corpus (gunzipped when it ends in .gz),
	// lower-cased and split on white space.
	File string
}

// CorpusSource is one part of a corpus, for reports.
type CorpusSource struct {
	Name      string `json:"name"`
	Tokenizer string `json:"tokenizer"`
	Texts     int    `json:"texts"`
	Tokens    int64  `json:"tokens"`
}

// Corpus is a loaded training corpus.
type Corpus struct {
	Sentences [][]string
	Sources   []CorpusSource
}

// checkSome refuses a selection of nothing.
func (c CorpusConfig) checkSome() error {
	if len(c.Datasets) == 0 && c.File == "" {
		return configErrorf("no corpus: give --dataset NAME[,NAME...] (with --data DIR) and/or --corpus FILE")
	}
	return nil
}

// presets refuses an empty selection and unknown or repeated presets.
func (c CorpusConfig) presets() ([]dataset.Preset, error) {
	if err := c.checkSome(); err != nil {
		return nil, err
	}
	var presets []dataset.Preset
	seen := map[string]bool{}
	for _, n := range c.Datasets {
		n = strings.TrimSpace(n)
		p, err := dataset.LookupPreset(n)
		if err != nil {
			return nil, &ConfigError{err}
		}
		if seen[n] {
			return nil, configErrorf("--dataset names %s twice", n)
		}
		seen[n] = true
		presets = append(presets, p)
	}
	return presets, nil
}

// LoadCorpus reads the corpus c selects; it reports each source to log
// (nil = discard).
func LoadCorpus(c CorpusConfig, log io.Writer) (*Corpus, error) {
	presets, err := c.presets()
	if err != nil {
		return nil, err
	}
	var out Corpus
	for _, p := range presets {
		tok, err := text.NewTokenizer(p.Tokenizer)
		if err != nil {
			return nil, err
		}
		dir, err := DataDir(c.DataDir, "--dataset "+p.Name)
		if err != nil {
			return nil, err
		}
		ds, err := dataset.Load(p.Name, dir)
		if err != nil {
			return nil, err
		}
		src := CorpusSource{Name: p.Name + " train", Tokenizer: p.Tokenizer, Texts: len(ds.Train)}
		for _, ex := range ds.Train {
			s := text.Texts(tok.Tokenize(ex.Text))
			src.Tokens += int64(len(s))
			out.Sentences = append(out.Sentences, s)
		}
		out.Sources = append(out.Sources, src)
	}
	if c.File != "" {
		s, err := readCorpusFile(c.File)
		if err != nil {
			return nil, err
		}
		src := CorpusSource{Name: c.File, Tokenizer: "lower-case + white space", Texts: len(s)}
		for _, x := range s {
			src.Tokens += int64(len(x))
		}
		out.Sentences = append(out.Sentences, s...)
		out.Sources = append(out.Sources, src)
	}
	for _, s := range out.Sources {
		fmt.Fprintf(orDiscard(log), "corpus %s: %d texts, %d tokens (tokenizer %s)\n", s.Name, s.Texts, s.Tokens, s.Tokenizer)
	}
	return &out, nil
}

// readCorpusFile reads a one-text-per-line corpus (gunzipped when the name
// ends in ".gz").
func readCorpusFile(path string) ([][]string, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--corpus: %w", err)
	}
	defer fh.Close()
	var r io.Reader = fh
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(fh)
		if err != nil {
			return nil, fmt.Errorf("--corpus %s: %w", path, err)
		}
		defer gz.Close()
		r = gz
	}
	return wordvec.ReadCorpus(r, path)
}

// refuseDirectoryOut refuses an output file path that is a directory.
func refuseDirectoryOut(out string) error {
	if st, err := os.Stat(out); err == nil && st.IsDir() {
		return configErrorf("--out %s is a directory", out)
	}
	return nil
}

// TrainEmbeddingsConfig configures TrainEmbeddings (`textarmor embed train`).
type TrainEmbeddingsConfig struct {
	Corpus CorpusConfig
	// Out is the vector file to write (required), atomically, in the
	// word2vec text format that train --embeddings reads.
	Out string
	// Options are word2vec's; the job sets Progress to report to Log.
	Options wordvec.Options
	Log     io.Writer // progress and summary lines (nil = discard)
}

// NewTrainEmbeddingsConfig returns the CLI's defaults: the word2vec C
// tool's skip-gram settings with 300-d vectors.
func NewTrainEmbeddingsConfig() TrainEmbeddingsConfig {
	return TrainEmbeddingsConfig{Options: wordvec.DefaultOptions()}
}

// Check validates the numbers (the vectors are for train --embeddings: a
// dimension its reader refuses would be found only after the training),
// the corpus selection and the output.
func (c TrainEmbeddingsConfig) Check() error {
	o := c.Options
	if err := CheckRules(
		Rule{o.Dim >= 1 && o.Dim <= text.MaxVectorDim, "dim", o.Dim, fmt.Sprintf("in [1, %d]", text.MaxVectorDim)},
		Rule{o.Epochs >= 1, "epochs", o.Epochs, "at least 1"},
		Rule{o.Window >= 1, "window", o.Window, "at least 1"},
		Rule{o.Negative >= 1, "negative", o.Negative, "at least 1"},
		Rule{o.MinCount >= 1, "min-count", o.MinCount, "at least 1 (1 keeps every word)"},
		Rule{isFinite(o.Sample) && o.Sample >= 0, "sample", o.Sample, "a number ≥ 0 (0 = off)"},
		Rule{isFinite(o.Alpha) && o.Alpha > 0, "alpha", o.Alpha, "a positive number"},
		Rule{o.Workers >= 1 && o.Workers <= wordvec.MaxWorkers, "workers", o.Workers, fmt.Sprintf("in [1, %d]", wordvec.MaxWorkers)},
	); err != nil {
		return err
	}
	if err := c.Corpus.checkSome(); err != nil {
		return err
	}
	if c.Out == "" {
		return configErrorf("--out is required")
	}
	if err := o.Validate(); err != nil {
		return &ConfigError{err}
	}
	return nil
}

// TrainEmbeddingsReport describes the vectors written.
type TrainEmbeddingsReport struct {
	Sources []CorpusSource
	Vectors *wordvec.Vectors
	Options wordvec.Options
}

// TrainEmbeddings trains word2vec skip-gram vectors (negative sampling) on
// a corpus and writes them to Out.
func TrainEmbeddings(ctx context.Context, c TrainEmbeddingsConfig) (*TrainEmbeddingsReport, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	if err := refuseDirectoryOut(c.Out); err != nil {
		return nil, err
	}
	log := orDiscard(c.Log)
	corpus, err := LoadCorpus(c.Corpus, log)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Open the output first, so that a bad path fails before training.
	f, err := checkpoint.CreateAtomic(c.Out)
	if err != nil {
		return nil, fmt.Errorf("--out: %w", err)
	}
	defer f.Abort()
	o := c.Options
	o.Progress = func(p wordvec.Progress) {
		fmt.Fprintf(log, "epoch %d/%d: %d of %d words, alpha %.6f, %.0f words/s\n",
			p.Epoch, p.Epochs, p.Words, p.Total, p.Alpha, float64(p.Words)/max(p.Seconds, 1e-9))
	}
	v, err := wordvec.Train(corpus.Sentences, o)
	if err != nil {
		return nil, err
	}
	if err := v.Write(f); err != nil {
		return nil, fmt.Errorf("%s: %w", c.Out, err)
	}
	if err := f.Commit(); err != nil {
		return nil, err
	}
	st := v.Stats
	fmt.Fprintf(log, "corpus tokens %d; vocabulary %d words with count >= %d (%d training tokens per epoch)\n",
		st.CorpusTokens, len(v.Words), o.MinCount, st.TrainTokens)
	fmt.Fprintf(log, "trained %d epochs in %.2f s: %.0f words/s (%d words read, %d kept after subsampling; dim %d, window %d, negative %d, sample %g, workers %d, seed %d)\n",
		o.Epochs, st.Seconds, st.WordsPerSecond, st.Words, st.Kept, o.Dim, o.Window, o.Negative, o.Sample, o.Workers, o.Seed)
	fmt.Fprintf(log, "wrote %s: %d words × %d\n", c.Out, len(v.Words), v.Dim)
	o.Progress = nil
	return &TrainEmbeddingsReport{Sources: corpus.Sources, Vectors: v, Options: o}, nil
}

// TrainLMConfig configures TrainLM (`textarmor lm train`).
type TrainLMConfig struct {
	Corpus CorpusConfig
	// Out is the model file to write (required), atomically.
	Out string
	// Options: the n-gram order, the minimum count and the corpus label
	// (shown in attack descriptions; "" = the dataset names and the
	// corpus file).
	Options langmodel.Options
	Log     io.Writer // progress and summary lines (nil = discard)
}

// NewTrainLMConfig returns the CLI's defaults: trigrams, every word kept.
func NewTrainLMConfig() TrainLMConfig {
	return TrainLMConfig{Options: langmodel.Options{Order: 3, MinCount: 1}}
}

// Check validates the numbers, the corpus selection and the output.
func (c TrainLMConfig) Check() error {
	o := c.Options
	if err := CheckRules(
		Rule{o.Order >= 1 && o.Order <= langmodel.MaxOrder, "order", o.Order, fmt.Sprintf("in [1, %d]", langmodel.MaxOrder)},
		Rule{o.MinCount >= 1, "min-count", o.MinCount, "at least 1"},
	); err != nil {
		return err
	}
	if err := c.Corpus.checkSome(); err != nil {
		return err
	}
	if c.Out == "" {
		return configErrorf("--out is required")
	}
	return nil
}

// TrainLMReport describes the language model written.
type TrainLMReport struct {
	Model   *langmodel.Model
	Sources []CorpusSource
	Seconds float64 // training time
}

// TrainLM trains an interpolated modified Kneser-Ney n-gram model (the
// alzantot recipe's language-model filter) and saves it to Out.
func TrainLM(ctx context.Context, c TrainLMConfig) (*TrainLMReport, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	if err := refuseDirectoryOut(c.Out); err != nil {
		return nil, err
	}
	opt := c.Options
	if opt.Label == "" {
		var parts []string
		for _, n := range c.Corpus.Datasets {
			if n = strings.TrimSpace(n); n != "" {
				parts = append(parts, n+"-train")
			}
		}
		if c.Corpus.File != "" {
			parts = append(parts, c.Corpus.File)
		}
		opt.Label = strings.Join(parts, "+")
	}
	log := orDiscard(c.Log)
	corpus, err := LoadCorpus(c.Corpus, log)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	start := time.Now()
	m, err := langmodel.Train(corpus.Sentences, opt)
	if err != nil {
		return nil, err
	}
	secs := time.Since(start).Seconds()
	if err := m.Save(c.Out); err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "trained %s in %.1f s; wrote %s\n", m.Name(), secs, c.Out)
	return &TrainLMReport{Model: m, Sources: corpus.Sources, Seconds: secs}, nil
}
