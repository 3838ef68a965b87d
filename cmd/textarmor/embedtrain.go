package main

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/textarmor/textarmor/checkpoint"
	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/text"
	"github.com/textarmor/textarmor/wordvec"
)

// corpusSource is one part of an embed train corpus, for the report.
type corpusSource struct {
	Name      string `json:"name"`
	Tokenizer string `json:"tokenizer"`
	Texts     int    `json:"texts"`
	Tokens    int64  `json:"tokens"`
}

// runEmbedTrain implements `embed train`: word2vec skip-gram vectors from the
// training split of dataset presets and/or a plain-text corpus.
func runEmbedTrain(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("embed train", "embed train (--dataset NAME[,NAME...] | --corpus FILE) --out FILE [flags]\n\n"+
		"Trains word2vec skip-gram vectors (negative sampling, the C tool's defaults) and writes them in the\n"+
		"word2vec text format, for train --embeddings. Only the TRAINING split of a preset is used.", stderr)
	o := wordvec.DefaultOptions()
	var names, dataDir, corpus, out string
	var asJSON bool
	fs.StringVar(&names, "dataset", "", "dataset preset(s), comma-separated: their training texts, each tokenised with its preset's tokenizer")
	fs.StringVar(&dataDir, "data", defaultDataDir(), "folder laid out like shared/data (env TEXTARMOR_DATA)")
	fs.StringVar(&corpus, "corpus", "", "plain-text corpus, one text per line (.gz ok), lower-cased and split on white space; may be combined with --dataset")
	fs.StringVar(&out, "out", "", "output vector file (required), written atomically")
	fs.IntVar(&o.Dim, "dim", o.Dim, "vector size")
	fs.IntVar(&o.Epochs, "epochs", o.Epochs, "passes over the corpus (word2vec -iter)")
	fs.IntVar(&o.Window, "window", o.Window, "largest context distance (each word draws a window from 1 to this)")
	fs.IntVar(&o.Negative, "negative", o.Negative, "negative samples per pair")
	fs.IntVar(&o.MinCount, "min-count", o.MinCount, "ignore words seen fewer times")
	fs.Float64Var(&o.Sample, "sample", o.Sample, "subsampling threshold for frequent words (0 = off)")
	fs.Float64Var(&o.Alpha, "alpha", o.Alpha, "starting learning rate (decays linearly to alpha·1e-4)")
	fs.Int64Var(&o.Seed, "seed", o.Seed, "random seed: the same seed, data and flags give the same vectors")
	fs.IntVar(&o.Workers, "workers", o.Workers, "shards trained in parallel (deterministic; the vectors depend on this number, not on the machine)")
	fs.BoolVar(&asJSON, "json", false, "print a one-line JSON summary on stdout")
	if err := parse(fs, args); err != nil {
		return err
	}
	// The vectors are for train --embeddings: a dimension its reader
	// refuses would be found only after the training.
	if err := checkNumbers(
		numRule{o.Dim >= 1 && o.Dim <= text.MaxVectorDim, "dim", o.Dim, fmt.Sprintf("in [1, %d]", text.MaxVectorDim)},
		numRule{o.Epochs >= 1, "epochs", o.Epochs, "at least 1"},
		numRule{o.Window >= 1, "window", o.Window, "at least 1"},
		numRule{o.Negative >= 1, "negative", o.Negative, "at least 1"},
		numRule{o.MinCount >= 1, "min-count", o.MinCount, "at least 1 (1 keeps every word)"},
		numRule{finite(o.Sample) && o.Sample >= 0, "sample", o.Sample, "a number ≥ 0 (0 = off)"},
		numRule{finite(o.Alpha) && o.Alpha > 0, "alpha", o.Alpha, "a positive number"},
		numRule{o.Workers >= 1 && o.Workers <= maxWordvecWorkers, "workers", o.Workers, fmt.Sprintf("in [1, %d]", maxWordvecWorkers)},
	); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected arguments %q", fs.Args())}
	}
	if names == "" && corpus == "" {
		return usageError{fmt.Errorf("no corpus: give --dataset NAME[,NAME...] (with --data DIR) and/or --corpus FILE")}
	}
	if out == "" {
		return usageError{fmt.Errorf("--out is required")}
	}
	if err := o.Validate(); err != nil {
		return usageError{err}
	}
	if st, err := os.Stat(out); err == nil && st.IsDir() {
		return usageError{fmt.Errorf("--out %s is a directory", out)}
	}
	sentences, sources, err := loadCorpus(names, dataDir, corpus, stderr)
	if err != nil {
		return err
	}

	// Open the output first, so that a bad path fails before training.
	f, err := checkpoint.CreateAtomic(out)
	if err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	defer f.Abort()
	o.Progress = func(p wordvec.Progress) {
		fmt.Fprintf(stderr, "epoch %d/%d: %d of %d words, alpha %.6f, %.0f words/s\n",
			p.Epoch, p.Epochs, p.Words, p.Total, p.Alpha, float64(p.Words)/max(p.Seconds, 1e-9))
	}
	v, err := wordvec.Train(sentences, o)
	if err != nil {
		return err
	}
	if err := v.Write(f); err != nil {
		return fmt.Errorf("%s: %w", out, err)
	}
	if err := f.Commit(); err != nil {
		return err
	}
	st := v.Stats
	fmt.Fprintf(stderr, "corpus tokens %d; vocabulary %d words with count >= %d (%d training tokens per epoch)\n",
		st.CorpusTokens, len(v.Words), o.MinCount, st.TrainTokens)
	fmt.Fprintf(stderr, "trained %d epochs in %.2f s: %.0f words/s (%d words read, %d kept after subsampling; dim %d, window %d, negative %d, sample %g, workers %d, seed %d)\n",
		o.Epochs, st.Seconds, st.WordsPerSecond, st.Words, st.Kept, o.Dim, o.Window, o.Negative, o.Sample, o.Workers, o.Seed)
	fmt.Fprintf(stderr, "wrote %s: %d words × %d\n", out, len(v.Words), v.Dim)
	if asJSON {
		return json.NewEncoder(stdout).Encode(map[string]any{
			"out": out, "sources": sources, "corpus_tokens": st.CorpusTokens, "train_tokens": st.TrainTokens,
			"vocab": len(v.Words), "dim": o.Dim, "epochs": o.Epochs, "window": o.Window, "negative": o.Negative,
			"min_count": o.MinCount, "sample": o.Sample, "alpha": o.Alpha, "seed": o.Seed, "workers": o.Workers,
			"words": st.Words, "kept": st.Kept, "seconds": st.Seconds, "words_per_second": st.WordsPerSecond,
		})
	}
	return nil
}

// loadCorpus gathers a training corpus: the TRAINING split of each preset
// in names (comma-separated; never dev or test), tokenised with the preset's
// tokenizer, and/or a one-text-per-line file. It reports each source on
// stderr. `embed train` and `lm train` share it.
func loadCorpus(names, dataDir, corpus string, stderr io.Writer) ([][]string, []corpusSource, error) {
	var presets []dataset.Preset
	if names != "" {
		seen := map[string]bool{}
		for _, n := range strings.Split(names, ",") {
			n = strings.TrimSpace(n)
			p, err := dataset.LookupPreset(n)
			if err != nil {
				return nil, nil, usageError{err}
			}
			if seen[n] {
				return nil, nil, usageError{fmt.Errorf("--dataset names %s twice", n)}
			}
			seen[n] = true
			presets = append(presets, p)
		}
	}

	var sentences [][]string
	var sources []corpusSource
	for _, p := range presets {
		tok, err := text.NewTokenizer(p.Tokenizer)
		if err != nil {
			return nil, nil, err
		}
		dir, err := dataDirFor(dataDir, "--dataset "+p.Name)
		if err != nil {
			return nil, nil, err
		}
		ds, err := dataset.Load(p.Name, dir)
		if err != nil {
			return nil, nil, err
		}
		src := corpusSource{Name: p.Name + " train", Tokenizer: p.Tokenizer, Texts: len(ds.Train)}
		for _, ex := range ds.Train {
			s := text.Texts(tok.Tokenize(ex.Text))
			src.Tokens += int64(len(s))
			sentences = append(sentences, s)
		}
		sources = append(sources, src)
	}
	if corpus != "" {
		s, err := readCorpusFile(corpus)
		if err != nil {
			return nil, nil, err
		}
		src := corpusSource{Name: corpus, Tokenizer: "lower-case + white space", Texts: len(s)}
		for _, x := range s {
			src.Tokens += int64(len(x))
		}
		sentences = append(sentences, s...)
		sources = append(sources, src)
	}
	for _, s := range sources {
		fmt.Fprintf(stderr, "corpus %s: %d texts, %d tokens (tokenizer %s)\n", s.Name, s.Texts, s.Tokens, s.Tokenizer)
	}
	return sentences, sources, nil
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
