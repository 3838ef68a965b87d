package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVerbChecksNameTheFlag: every job refuses a configuration it cannot
// run with a *ConfigError worded as the CLI's messages always were, before
// it reads anything.
func TestVerbChecksNameTheFlag(t *testing.T) {
	ctx := context.Background()
	explainCfg := func(f func(*ExplainTextsConfig)) error {
		c := NewExplainTextsConfig()
		c.Model = "m"
		f(&c)
		_, err := ExplainTexts(ctx, c)
		return err
	}
	embedCfg := func(f func(*TrainEmbeddingsConfig)) error {
		c := NewTrainEmbeddingsConfig()
		c.Corpus.File, c.Out = "corpus.txt", "v.txt"
		f(&c)
		_, err := TrainEmbeddings(ctx, c)
		return err
	}
	counterfitCfg := func(f func(*CounterfitConfig)) error {
		c := NewCounterfitConfig()
		c.Vectors, c.Out, c.DataDir = "v.txt", "o.txt", "data"
		f(&c)
		_, err := Counterfit(ctx, c)
		return err
	}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{explainCfg(func(c *ExplainTextsConfig) { c.Model = "" }), "--model is required"},
		{explainCfg(func(c *ExplainTextsConfig) { c.Method = "shap" }), `--method "shap": want ig or lime`},
		{explainCfg(func(c *ExplainTextsConfig) { c.Steps = 0 }), "--steps 0 must be in [1, 100000]"},
		{explainCfg(func(c *ExplainTextsConfig) { c.Samples = 1 }), "--samples 1 must be in [2, 1000000]"},
		{func() error {
			c := NewImportanceConfig()
			c.Model, c.Top = "m", 0
			_, err := Importance(ctx, c)
			return err
		}(), "--top 0 must be at least 1"},
		{func() error {
			c := NewEmbedStatsConfig()
			c.Model, c.Anchors = "m", -2
			_, err := EmbedStats(ctx, c)
			return err
		}(), "--anchors -2 must be at least 1, or -1 = all"},
		{func() error {
			c := NewEmbedStatsConfig()
			c.Model, c.Norm = "m", "3"
			_, err := EmbedStats(ctx, c)
			return err
		}(), `--norm "3": want 1, 2 or inf`},
		{embedCfg(func(c *TrainEmbeddingsConfig) { c.Options.Dim = 0 }), "--dim 0 must be in [1, "},
		{embedCfg(func(c *TrainEmbeddingsConfig) { c.Options.Workers = 257 }), "--workers 257 must be in [1, 256]"},
		{embedCfg(func(c *TrainEmbeddingsConfig) { c.Corpus.File = "" }), "no corpus: give --dataset"},
		{embedCfg(func(c *TrainEmbeddingsConfig) { c.Out = "" }), "--out is required"},
		{embedCfg(func(c *TrainEmbeddingsConfig) { c.Corpus.Datasets = []string{"nope"} }), "nope"},
		{embedCfg(func(c *TrainEmbeddingsConfig) { c.Corpus.Datasets = []string{"mr", " mr"} }), "--dataset names mr twice"},
		{func() error {
			c := NewTrainLMConfig()
			c.Corpus.File, c.Out, c.Options.Order = "c", "o", 4
			_, err := TrainLM(ctx, c)
			return err
		}(), "--order 4 must be in [1, 3]"},
		{counterfitCfg(func(c *CounterfitConfig) { c.Options.Delta = 3 }), "--delta 3 must be a cosine distance in [0, 2]"},
		{counterfitCfg(func(c *CounterfitConfig) { c.Vectors = "" }), "--vectors and --out are required"},
		{counterfitCfg(func(c *CounterfitConfig) { c.DataDir = "" }), "the default synonym and antonym lists (no --synonyms/--antonyms) needs the benchmark data folder"},
		{func() error {
			c := NewEvalSTSConfig()
			c.Model, c.DataDir, c.Sets = "m", "d", []string{"nope"}
			_, err := EvalSTS(ctx, c)
			return err
		}(), `--sets: unknown set "nope"`},
		{func() error {
			c := NewEvalSTSConfig()
			c.Model, c.DataDir, c.Sets = "m", "d", []string{"sts99"}
			_, err := EvalSTS(ctx, c)
			return err
		}(), "no STS year 99"},
		{func() error { c := NewEvalSTSConfig(); c.Model = "m"; _, err := EvalSTS(ctx, c); return err }(), "eval-sts needs the benchmark data folder"},
		{func() error { _, err := Export(ExportConfig{Model: "m", Out: "o", Format: "onnx"}); return err }(), `--format "onnx": only hf is supported`},
		{func() error { _, err := Predict(ctx, PredictConfig{}); return err }(), "--model is required"},
		{func() error { _, err := EvalModel(ctx, EvalConfig{BLAS: "nope"}); return err }(), "--model is required"},
	} {
		var ce *ConfigError
		if !errors.As(tc.err, &ce) || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("error %v (%T), want a *ConfigError containing %q", tc.err, tc.err, tc.want)
		}
	}
}

func TestInputTexts(t *testing.T) {
	got, err := inputTexts(nil, strings.NewReader("a good film\n\n  the end  \n"))
	if err != nil || strings.Join(got, "|") != "a good film||the end" {
		t.Errorf("stdin texts %q, %v: want the lines trimmed, blank ones kept", got, err)
	}
	if got, err := inputTexts([]string{"x"}, strings.NewReader("y\n")); err != nil || len(got) != 1 || got[0] != "x" {
		t.Errorf("texts given: %q, %v: the input is not read", got, err)
	}
	for _, in := range []string{"", "\n \n"} {
		var ce *ConfigError
		if _, err := inputTexts(nil, strings.NewReader(in)); !errors.As(err, &ce) || !strings.Contains(err.Error(), "no text given") {
			t.Errorf("input %q: error %v, want no text given", in, err)
		}
	}
}

// TestCorpusAndEmbeddings: a corpus file trains vectors written atomically;
// the same configuration writes the same file, and an output that is a
// directory is refused before the corpus is read.
func TestCorpusAndEmbeddings(t *testing.T) {
	dir := t.TempDir()
	corpus := filepath.Join(dir, "corpus.txt")
	if err := os.WriteFile(corpus, []byte(strings.Repeat("The Cat sat on the MAT\n", 20)+"rare\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	c := NewTrainEmbeddingsConfig()
	c.Corpus.File, c.Out, c.Log = corpus, filepath.Join(dir, "v.txt"), &log
	c.Options.Dim, c.Options.Epochs = 4, 1
	r, err := TrainEmbeddings(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.Vectors.Words, " "); got != "the cat mat on sat" || r.Sources[0].Texts != 21 || r.Sources[0].Tokens != 121 {
		t.Errorf("words %q, sources %+v", got, r.Sources)
	}
	if !strings.Contains(log.String(), "corpus "+corpus+": 21 texts, 121 tokens") || !strings.Contains(log.String(), "wrote "+c.Out) {
		t.Errorf("log:\n%s", log.String())
	}
	first, _ := os.ReadFile(c.Out)
	c.Log = nil
	if _, err := TrainEmbeddings(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(c.Out); string(again) != string(first) {
		t.Error("the same configuration wrote other vectors")
	}
	c.Out = dir
	var ce *ConfigError
	if _, err := TrainEmbeddings(context.Background(), c); !errors.As(err, &ce) || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("--out a directory: %v", err)
	}
}
