package pipeline_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/lstmlm"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/pipeline"
	"github.com/textarmor/textarmor/tensor"
)

// The LSTM language model trains from CSV files, validates on the dev
// texts, saves, and measures a sample's perplexity; bad settings are
// configuration errors naming the flag.
func TestTrainLSTMLM(t *testing.T) {
	dir := t.TempDir()
	tr, dv := filepath.Join(dir, "train.csv"), filepath.Join(dir, "dev.csv")
	for i, f := range []string{tr, dv} {
		if err := writeSentimentCSV(f, []int{200, 40}[i], int64(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	c := pipeline.NewTrainLSTMLMConfig()
	c.Data.Train, c.Data.Dev = tr, dv
	c.Model.EmbedDim, c.Model.Hidden = 8, 16
	c.Options.Epochs, c.Options.Batch, c.Options.LR = 3, 8, 1e-2
	c.Options.Out = filepath.Join(dir, "lm")
	r, err := pipeline.TrainLSTMLM(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	eps := r.Result.Epochs
	if len(eps) != 3 || eps[2].ValidPPL >= eps[0].ValidPPL || !r.Model.Vocab.Has(lstmlm.EOS) {
		t.Errorf("epochs %+v", eps)
	}
	p := pipeline.NewLMPerplexityConfig()
	p.Model, p.Data.Test, p.N = c.Options.Out, dv, 0
	rep, err := pipeline.LMPerplexity(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Texts != 40 || rep.Perplexity <= 1 || rep.Perplexity > eps[0].ValidPPL {
		t.Errorf("perplexity %+v, the last epoch's validation %g", rep, eps[2].ValidPPL)
	}
	for _, bad := range []struct {
		edit func(*pipeline.TrainLSTMLMConfig)
		want string
	}{
		{func(c *pipeline.TrainLSTMLMConfig) { c.Model.Hidden = 0 }, "--hidden 0"},
		{func(c *pipeline.TrainLSTMLMConfig) { c.MinCount = 0 }, "--min-count 0"},
		{func(c *pipeline.TrainLSTMLMConfig) { c.Options.BPTT = 0 }, "--bptt 0"},
		{func(c *pipeline.TrainLSTMLMConfig) { c.Options.Decay = 2 }, "--lr-decay 2"},
		{func(c *pipeline.TrainLSTMLMConfig) { c.Options.Out = "" }, "--out is required"},
	} {
		c2 := c
		bad.edit(&c2)
		var ce *pipeline.ConfigError
		if _, err := pipeline.TrainLSTMLM(context.Background(), c2); !errors.As(err, &ce) || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: %v", bad.want, err)
		}
	}
}

// A classifier started from the language model (--init-lm) takes its
// vocabulary, embedding table and LSTM; a bidirectional or CNN classifier
// is refused.
func TestTrainInitLM(t *testing.T) {
	dir := t.TempDir()
	tr, dv := filepath.Join(dir, "train.csv"), filepath.Join(dir, "dev.csv")
	for i, f := range []string{tr, dv} {
		if err := writeSentimentCSV(f, []int{200, 40}[i], int64(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	lc := pipeline.NewTrainLSTMLMConfig()
	lc.Data.Train = tr
	lc.Model.EmbedDim, lc.Model.Hidden, lc.Model.Tokenizer = 8, 12, ""
	lc.Options.Epochs, lc.Options.Batch, lc.Options.Out = 1, 8, filepath.Join(dir, "lm")
	if _, err := pipeline.TrainLSTMLM(context.Background(), lc); err != nil {
		t.Fatal(err)
	}
	lm, err := lstmlm.Load(lc.Options.Out)
	if err != nil {
		t.Fatal(err)
	}
	c := pipeline.NewTrainConfig()
	c.Data.Train, c.Data.Dev, c.InitLM = tr, dv, lc.Options.Out
	c.Net.Arch, c.Net.Pool, c.Net.HeadHidden, c.Net.EmbedDropout = "lstm", "last", 30, 0.5
	c.Options.Epochs, c.Options.BatchSize, c.Options.LR, c.Options.Out = 1, 32, 1e-12, filepath.Join(dir, "clf")
	r, err := pipeline.Train(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	m := r.Model
	rnn := m.Net.Enc.(*nn.RNN)
	if m.Vocab.Len() != lm.Vocab.Len() || m.Net.Cfg.EmbedDim != 8 || m.Net.Cfg.Hidden != 12 || m.Training["init_lm"] != lc.Options.Out {
		t.Fatalf("classifier vocabulary %d (LM %d), dims %d/%d, record %v", m.Vocab.Len(), lm.Vocab.Len(), m.Net.Cfg.EmbedDim, m.Net.Cfg.Hidden, m.Training["init_lm"])
	}
	// At a learning rate of 1e-12 the weights are still the LM's.
	for _, p := range [][2][]float32{{m.Net.Emb.W.Value.Data, lm.Emb.W.Value.Data}, {rnn.Fwd.Wh.Value.Data, lm.LSTM.Wh.Value.Data}} {
		if d := tensor.MaxAbsDiff(p[0], p[1]); d > 1e-6 {
			t.Errorf("a classifier weight differs from the language model's by %g", d)
		}
	}
	for _, arch := range []string{"bilstm", "cnn"} {
		c2 := c
		c2.Net.Arch, c2.Net.Pool = arch, "max"
		var ce *pipeline.ConfigError
		if _, err := pipeline.Train(context.Background(), c2); !errors.As(err, &ce) || !strings.Contains(err.Error(), "--init-lm needs --model lstm") {
			t.Errorf("%s: %v", arch, err)
		}
	}
}
