package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/defense"
	"github.com/textarmor/textarmor/internal/synth"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/pipeline"
	"github.com/textarmor/textarmor/text"
	"github.com/textarmor/textarmor/train"
)

// TestTrainCheck: every refused configuration is a *ConfigError naming the
// CLI flag, before anything is read or written.
func TestTrainCheck(t *testing.T) {
	for _, c := range []struct {
		edit func(*pipeline.TrainConfig)
		want string
	}{
		{func(c *pipeline.TrainConfig) { c.Options.Out = "" }, "--out is required"},
		{func(c *pipeline.TrainConfig) { c.Options.Epochs = 0 }, "--epochs 0 must be at least 1"},
		{func(c *pipeline.TrainConfig) { c.Options.LR = math.NaN() }, "--lr NaN must be a positive number"},
		{func(c *pipeline.TrainConfig) { c.Options.CheckpointEvery = -1e9 }, "--checkpoint-every -1s"},
		{func(c *pipeline.TrainConfig) { c.Options.DecayEpochs = []int{5, 0} }, `--lr-decay-epochs "5,0": epoch 0 must be at least 1`},
		{func(c *pipeline.TrainConfig) { c.Options.Optimizer = "rms" }, `--optimizer "rms"`},
		{func(c *pipeline.TrainConfig) { c.Options.Warmup = 0.1 }, "--warmup 0.1 needs --schedule linear"},
		{func(c *pipeline.TrainConfig) { c.Net.EmbedDim = 0 }, "--embed-dim 0 must be in [1, "},
		{func(c *pipeline.TrainConfig) { c.Net.Widths = []int{3, 0} }, `--widths "3,0": width 0 must be in [1, 1000]`},
		{func(c *pipeline.TrainConfig) { c.Net.Arch = "gru" }, `--model "gru"`},
		{func(c *pipeline.TrainConfig) { c.Data.MaxLen = -1 }, "--max-len -1"},
		{func(c *pipeline.TrainConfig) { c.Retrofit = -1 }, "--retrofit -1"},
		{func(c *pipeline.TrainConfig) { c.Defense.Name = "nope" }, `--defense: unknown defense "nope"`},
		{func(c *pipeline.TrainConfig) { c.Defense.Settings.K = 0 }, "--ftml-k 0"},
		{func(c *pipeline.TrainConfig) { c.Defense.Settings.IBPKappa = 2 }, "--ibp-kappa 2"},
		{func(c *pipeline.TrainConfig) { c.Defense.IBPRampEpochs = -2 }, "--ibp-ramp-epochs -2"},
		{func(c *pipeline.TrainConfig) { c.Defense.Settings.IBPHull = "box" }, `--ibp-hull: unknown ibp hull "box"`},
		{func(c *pipeline.TrainConfig) { c.Defense.Name, c.Defense.Settings.Norm = "ftml", 3 }, "--ftml-norm 3: want 1, 2 or inf"},
		{func(c *pipeline.TrainConfig) { c.Defense.Rounds.Workers = 0 }, "--round-workers 0"},
		{func(c *pipeline.TrainConfig) { c.Defense.Name, c.Defense.Rounds.Attack = "flat", "ga" }, `--round-attack "ga": want textfooler or pwws`},
		{func(c *pipeline.TrainConfig) { c.Defense.Rounds.Entropy = "max" }, "--flat-entropy-reduction"},
		{func(c *pipeline.TrainConfig) { c.Defense.GroupMask.Vectors = "v.txt" }, "--group-vectors needs --group-mask G"},
		{func(c *pipeline.TrainConfig) { c.Defense.Name, c.Defense.GroupMask.Groups = "ftml", 3 }, "--group-mask needs --defense standard"},
		{func(c *pipeline.TrainConfig) { c.Defense.Name, c.Defense.ProbInputs = "ibp", true }, "--prob-inputs-to-ce needs"},
		{func(c *pipeline.TrainConfig) { c.EmbeddingsFrom, c.Embeddings = "m", "v.txt" }, "give either --embeddings or --embeddings-from"},
		{func(c *pipeline.TrainConfig) { c.EmbeddingsFrom, c.Retrofit = "m", 3 }, "--retrofit and --embeddings-from exclude each other"},
		{func(c *pipeline.TrainConfig) { c.EmbeddingsFrom, c.Data.MaxVocab = "m", 10 }, "--min-count/--max-vocab cannot be used with --embeddings-from"},
		{func(c *pipeline.TrainConfig) { c.FineTune.FreezeEncoder = true }, "--freeze-encoder needs --init"},
		{func(c *pipeline.TrainConfig) { c.FineTune.Init = "hf" }, `--init needs --model transformer, not "cnn"`},
		{func(c *pipeline.TrainConfig) {
			c.FineTune.Init, c.Net.Arch, c.Defense.Name = "hf", "transformer", "ibp"
		}, "--defense ibp does not apply to transformers"},
		{func(c *pipeline.TrainConfig) {
			c.FineTune.Init, c.Net.Arch, c.Defense.Name, c.FineTune.VocabSupplement = "hf", "transformer", "ftml", 0
		}, "--vocab-supplement must be positive"},
		{func(c *pipeline.TrainConfig) { c.FineTune.VocabSupplement = 5 }, "--vocab-supplement needs --init"},
		{func(c *pipeline.TrainConfig) { c.FineTune.VocabSupplement = -3 }, "--vocab-supplement -3: want a number of words ≥ 0"},
		{func(c *pipeline.TrainConfig) {
			c.FineTune.Init, c.Net.Arch, c.Embeddings = "hf", "transformer", "v.txt"
		}, "--embeddings does not apply with --init"},
	} {
		cfg := pipeline.NewTrainConfig()
		cfg.Options.Out = filepath.Join(t.TempDir(), "model")
		c.edit(&cfg)
		err := cfg.Check()
		var ce *pipeline.ConfigError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v", c.want, err)
		}
		if _, err := pipeline.Train(context.Background(), cfg); !errors.As(err, &ce) {
			t.Errorf("%s: Train returned %v", c.want, err)
		}
		if _, err := os.Stat(cfg.Options.Out); !os.IsNotExist(err) {
			t.Errorf("%s: a refused configuration wrote %s", c.want, cfg.Options.Out)
		}
	}
	ok := pipeline.NewTrainConfig()
	ok.Options.Out = "m"
	if err := ok.Check(); err != nil {
		t.Errorf("the defaults with an output: %v", err)
	}
}

// TestTrainTableRow trains the way bench ftml-table trains a row (the
// vocabulary of the whole training split, a seeded subset, no dev set, a
// kept checkpoint, extra record keys) and gets exactly the model of the
// same steps done by hand.
func TestTrainTableRow(t *testing.T) {
	dir := t.TempDir()
	syn := filepath.Join(dir, "syn.json")
	raw, _ := json.Marshal(synth.DefaultLexicon().Synonyms())
	if err := os.WriteFile(syn, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	ds := synth.SentimentDataset(200, 40, 40, 5)
	preset := dataset.Preset{Name: "synthetic", Tokenizer: "flat", MaxLen: 50, MinCount: 1}
	const seed, n = 42, 120

	c := pipeline.NewTrainConfig()
	c.Dataset, c.Preset = ds, preset
	c.Net.EmbedDim, c.Net.Filters = 16, 8
	c.Defense.Name, c.Defense.Synonyms = "ftml", syn
	c.Options.Epochs, c.Options.BatchSize, c.Options.Seed = 2, 32, seed
	c.Options.Out, c.Options.Resume, c.Options.KeepCheckpoint = filepath.Join(dir, "row", "model"), true, true
	c.Options.Info = map[string]any{"table_recipe": []string{"--defense", "ftml"}}
	c.TrainSubset, c.TrainN, c.NoDev, c.NoTest, c.Retrain = true, n, true, true, true
	rep, err := pipeline.Train(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Test != nil {
		t.Error("NoTest evaluated the test split")
	}
	got := rep.Model
	if got.Training["train_n"] != float64(n) || got.Training["table_recipe"] == nil || got.Training["defense"] != "ftml" {
		t.Errorf("training record %v", got.Training)
	}
	if _, err := os.Stat(c.Options.Out + ".ckpt"); err != nil {
		t.Errorf("KeepCheckpoint: %v", err)
	}

	// The same row by hand.
	tok, err := text.NewTokenizer(preset.Tokenizer)
	if err != nil {
		t.Fatal(err)
	}
	vocab := train.BuildVocab(tok, ds.Train, preset.MinCount, preset.MaxVocab)
	cfg, err := c.Net.Config()
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.New(model.Meta{Net: cfg, Tokenizer: preset.Tokenizer, MaxLen: preset.MaxLen, Classes: ds.Classes}, vocab, rand.New(rand.NewSource(seed)))
	if err != nil {
		t.Fatal(err)
	}
	obj, err := c.Defense.Objective(m, ds.Name, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	sub := dataset.SeededSubset(ds.Train, n, seed)
	opt := c.Options
	opt.Out, opt.Resume, opt.Info = filepath.Join(dir, "byhand"), false, map[string]any{}
	if _, err := train.Run(m, obj, train.Encode(m, sub), nil, opt); err != nil {
		t.Fatal(err)
	}
	want, err := model.Load(opt.Out)
	if err != nil {
		t.Fatal(err)
	}
	pa, pb := got.Net.Params(), want.Net.Params()
	if len(pa) != len(pb) || got.Vocab.Len() != want.Vocab.Len() {
		t.Fatalf("%d vs %d parameters, vocabulary %d vs %d", len(pa), len(pb), got.Vocab.Len(), want.Vocab.Len())
	}
	for i := range pa {
		for j, v := range pa[i].Value.Data {
			if pb[i].Value.Data[j] != v {
				t.Fatalf("parameter %d[%d]: pipeline %v, by hand %v", i, j, v, pb[i].Value.Data[j])
			}
		}
	}

	// A finished model is retrained only on purpose.
	c.Retrain = false
	var ce *pipeline.ConfigError
	if err := os.RemoveAll(c.Options.Out + ".ckpt"); err != nil {
		t.Fatal(err)
	}
	if _, err := pipeline.Train(context.Background(), c); !errors.As(err, &ce) || !strings.Contains(err.Error(), "nothing to resume") {
		t.Errorf("resume of a finished model: %v", err)
	}
}

// TestTrainCanceled: a canceled context stops the run before it trains.
func TestTrainCanceled(t *testing.T) {
	c := pipeline.NewTrainConfig()
	c.Dataset, c.Preset = synth.SentimentDataset(50, 0, 0, 1), dataset.Preset{Tokenizer: "flat", MaxLen: 20, MinCount: 1}
	c.Options.Out = filepath.Join(t.TempDir(), "model")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := pipeline.Train(ctx, c); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled run: %v", err)
	}
	if _, err := os.Stat(c.Options.Out); !os.IsNotExist(err) {
		t.Errorf("a canceled run wrote %s", c.Options.Out)
	}
}

func TestTrainedHull(t *testing.T) {
	m := &model.Model{}
	if h := pipeline.TrainedHull(m); h != defense.HullEmbedding {
		t.Errorf("no record: %s", h)
	}
	m.Training = map[string]any{"ibp": map[string]any{"hull": "projected"}}
	if h := pipeline.TrainedHull(m); h != defense.HullProjected {
		t.Errorf("projected record: %s", h)
	}
}
