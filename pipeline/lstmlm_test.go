package pipeline_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/lstmlm"
	"github.com/textarmor/textarmor/pipeline"
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
