package pipeline_test

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/defense"
	"github.com/textarmor/textarmor/lstmlm"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/pipeline"
	"github.com/textarmor/textarmor/tensor"
)

// tinyLMConfig is a small language model's settings (3 epochs) over
// generated training and dev CSVs in a temporary folder, with its output
// there too.
func tinyLMConfig(t *testing.T) (pipeline.TrainLSTMLMConfig, string) {
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
	return c, dir
}

// The LSTM language model trains from CSV files, validates on the dev
// texts, saves, and measures a sample's perplexity; bad settings are
// configuration errors naming the flag.
func TestTrainLSTMLM(t *testing.T) {
	c, _ := tinyLMConfig(t)
	dv := c.Data.Dev
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

// A warm start (--init) continues from the trained model: its first epoch
// begins where the trained run ended, not at a random model's perplexity,
// and its record names what it started from; a model whose vocabulary or
// shape these settings would not build is refused.
func TestTrainLSTMLMWarmStart(t *testing.T) {
	c, dir := tinyLMConfig(t)
	cold, err := pipeline.TrainLSTMLM(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	w := c
	w.Init, w.Options.Epochs, w.Options.Out = c.Options.Out, 1, filepath.Join(dir, "lm2")
	warm, err := pipeline.TrainLSTMLM(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	first, last := cold.Result.Epochs[0], cold.Result.Epochs[2]
	if got := warm.Result.Epochs[0]; got.TrainPPL >= first.TrainPPL || got.ValidPPL > 1.2*last.ValidPPL {
		t.Errorf("warm epoch %+v; cold run's first %+v and last %+v", got, first, last)
	}
	saved, err := lstmlm.Load(w.Options.Out)
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := saved.Record.(map[string]any)
	if init, _ := rec["init"].(map[string]any); init == nil || init["from"] != c.Options.Out || init["training"] == nil {
		t.Errorf("record %v", saved.Record)
	}
	for _, bad := range []struct {
		edit func(*pipeline.TrainLSTMLMConfig)
		want string
	}{
		{func(c *pipeline.TrainLSTMLMConfig) { c.MinCount = 5 }, "vocabulary has"},
		{func(c *pipeline.TrainLSTMLMConfig) { c.Model.Hidden = 32 }, "--embed-dim and --hidden say 8 and 32"},
		{func(c *pipeline.TrainLSTMLMConfig) { c.Init = filepath.Join(dir, "none") }, "--init"},
	} {
		c2 := w
		c2.Options.Out = filepath.Join(dir, "bad")
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

// Table 1's measure: the language model's perplexity of texts moved by a
// classifier's perturbation (which way it moves is the experiment's
// result, not asserted here). SPGD moves at most ⌊(1−σ)T⌋ words of a text
// and AdvT every one; the clean perplexity is LMPerplexity's; with no
// perturbation (ε tiny) the gap vanishes.
func TestPerturbationPerplexity(t *testing.T) {
	dir := t.TempDir()
	tr, te := filepath.Join(dir, "train.csv"), filepath.Join(dir, "test.csv")
	for i, f := range []string{tr, te} {
		if err := writeSentimentCSV(f, []int{200, 30}[i], int64(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	lc := pipeline.NewTrainLSTMLMConfig()
	lc.Data.Train = tr
	lc.Model.EmbedDim, lc.Model.Hidden = 8, 12
	lc.Options.Epochs, lc.Options.Batch, lc.Options.LR, lc.Options.Out = 3, 8, 1e-2, filepath.Join(dir, "lm")
	if _, err := pipeline.TrainLSTMLM(context.Background(), lc); err != nil {
		t.Fatal(err)
	}
	c := pipeline.NewTrainConfig()
	c.Data.Train, c.InitLM = tr, lc.Options.Out
	c.Net.Arch, c.Net.Pool, c.Net.HeadHidden = "lstm", "last", 10
	c.Defense.Name, c.Defense.Settings.SPGD.Eps = "spgd", 0.5
	c.Options.Epochs, c.Options.BatchSize, c.Options.LR, c.Options.Out = 3, 32, 1e-2, filepath.Join(dir, "clf")
	if _, err := pipeline.Train(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	p := pipeline.NewPerturbationPerplexityConfig()
	p.Model, p.LM, p.Data.Test, p.N = c.Options.Out, lc.Options.Out, te, 0
	spgd, err := pipeline.PerturbationPerplexity(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if spgd.Method != "spgd" || spgd.Settings.Eps != 0.5 || spgd.Moved > 0.25+1e-9 || spgd.Moved == 0 || spgd.Perturbed == spgd.Clean || spgd.Discretized <= 0 {
		t.Errorf("spgd (the trained settings): %+v", spgd)
	}
	lp := pipeline.NewLMPerplexityConfig()
	lp.Model, lp.Data.Test, lp.N = lc.Options.Out, te, 0
	clean, err := pipeline.LMPerplexity(context.Background(), lp)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(clean.Perplexity-spgd.Clean) > 1e-9*clean.Perplexity || clean.Words != spgd.Words {
		t.Errorf("clean perplexity %g over %d words, the perturbation table's %g over %d", clean.Perplexity, clean.Words, spgd.Clean, spgd.Words)
	}
	advt := defense.DefaultAdvText(defense.MethodAdvT)
	advt.Eps = 0.5
	p.Settings = &advt
	r, err := pipeline.PerturbationPerplexity(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if r.Moved < 0.99 || r.Perturbed == r.Clean || r.Discretized != 0 {
		t.Errorf("advt: %+v", r)
	}
	advt.Eps = 1e-9
	if r, err = pipeline.PerturbationPerplexity(context.Background(), p); err != nil || math.Abs(r.Gap) > 1e-3 {
		t.Errorf("advt at ε 1e-9: gap %g (%v)", r.Gap, err)
	}
}

// explain --perturbation: SPGD's perturbation of a text read word by word:
// at most a quarter of the words move, each towards a named neighbour;
// the nearest word after the move and the formatted heat map.
func TestExplainPerturbation(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "train.csv")
	if err := writeSentimentCSV(tr, 200, 1); err != nil {
		t.Fatal(err)
	}
	c := pipeline.NewTrainConfig()
	c.Data.Train = tr
	c.Net.EmbedDim, c.Net.Filters = 16, 8
	c.Defense.Name, c.Defense.Settings.SPGD.Eps = "spgd", 1
	c.Options.Epochs, c.Options.BatchSize, c.Options.LR, c.Options.Out = 2, 32, 1e-2, filepath.Join(dir, "m")
	if _, err := pipeline.Train(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	texts := []string{"the film was good and the acting was great , a fine plot", ""}
	got, err := pipeline.ExplainPerturbation(context.Background(), pipeline.ExplainPerturbationConfig{Model: c.Options.Out, Texts: texts})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || len(got[1].Words) != 0 {
		t.Fatalf("explained %d texts: %+v", len(got), got)
	}
	words, moved := got[0].Words, 0
	for _, w := range words {
		if w.Norm > 0 {
			moved++
			if w.Toward == "" || w.Toward == w.Word || w.Nearest == "" {
				t.Errorf("moved word %+v", w)
			}
		} else if w.Toward != "" {
			t.Errorf("unmoved word %+v has a neighbour", w)
		}
	}
	if len(words) < 10 || moved == 0 || moved > len(words)/4 {
		t.Errorf("%d of %d words moved, want 1 to ⌊T/4⌋", moved, len(words))
	}
	if f := got[0].Format("spgd", false); !strings.Contains(f, "spgd perturbation against") || strings.Count(f, "→") != moved {
		t.Errorf("formatted:\n%s", f)
	}
	var ce *pipeline.ConfigError
	if _, err := pipeline.ExplainPerturbation(context.Background(), pipeline.ExplainPerturbationConfig{Model: c.Options.Out, Method: "pgdx", Texts: texts}); !errors.As(err, &ce) {
		t.Errorf("unknown method: %v", err)
	}
}

// A classifier of another vocabulary than the language model's is refused,
// naming the fix.
func TestPerturbationPerplexityRefusesOtherVocabulary(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "train.csv")
	if err := writeSentimentCSV(tr, 120, 1); err != nil {
		t.Fatal(err)
	}
	lc := pipeline.NewTrainLSTMLMConfig()
	lc.Data.Train, lc.MaxVocab = tr, 20
	lc.Model.EmbedDim, lc.Model.Hidden = 8, 8
	lc.Options.Epochs, lc.Options.Batch, lc.Options.Out = 1, 4, filepath.Join(dir, "lm")
	if _, err := pipeline.TrainLSTMLM(context.Background(), lc); err != nil {
		t.Fatal(err)
	}
	c := pipeline.NewTrainConfig()
	c.Data.Train = tr
	c.Net.EmbedDim, c.Net.Filters = 8, 4
	c.Options.Epochs, c.Options.Out = 1, filepath.Join(dir, "clf")
	if _, err := pipeline.Train(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	p := pipeline.NewPerturbationPerplexityConfig()
	p.Model, p.LM, p.Method, p.Data.Test = c.Options.Out, lc.Options.Out, "spgd", tr
	var ce *pipeline.ConfigError
	if _, err := pipeline.PerturbationPerplexity(context.Background(), p); !errors.As(err, &ce) || !strings.Contains(err.Error(), "--init-lm") {
		t.Errorf("mismatched vocabularies: %v", err)
	}
}

// attack --recipe pgd|fgm: accuracy under a perturbation of the input
// embeddings falls with ε, is the clean accuracy at ε 0, and comes with
// the paired SE of the drop; bad settings name their flag.
func TestEmbeddingAttackJob(t *testing.T) {
	dir := t.TempDir()
	tr, te := filepath.Join(dir, "train.csv"), filepath.Join(dir, "test.csv")
	for i, f := range []string{tr, te} {
		if err := writeSentimentCSV(f, []int{200, 60}[i], int64(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	c := pipeline.NewTrainConfig()
	c.Data.Train = tr
	c.Net.EmbedDim, c.Net.Filters = 16, 8
	c.Options.Epochs, c.Options.BatchSize, c.Options.LR, c.Options.Out = 4, 32, 1e-2, filepath.Join(dir, "m")
	if _, err := pipeline.Train(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	prev := 2.0
	var spread [2]float64
	for _, eps := range []float64{0, 0.5, 5} {
		a := pipeline.NewEmbeddingAttackConfig()
		a.Model, a.Data.Test, a.Eps, a.KeepExamples = c.Options.Out, te, eps, true
		r, err := pipeline.EmbeddingAttack(context.Background(), a)
		if err != nil {
			t.Fatal(err)
		}
		// The kept examples add up to the report's means.
		var clean, cos float64
		for _, e := range r.Examples {
			clean, cos = clean+b2f(e.Clean)/float64(r.N), cos+e.Cosine/float64(r.N)
		}
		if len(r.Examples) != r.N || math.Abs(clean-r.Clean) > 1e-9 || math.Abs(cos-r.Cosine) > 1e-9 || eps == 0 && r.Euclidean != 0 {
			t.Errorf("ε %g: %d examples, clean %g, cosine %g; report %+v", eps, len(r.Examples), clean, cos, r)
		}
		// The clean vectors' spread does not depend on ε and is a real spread.
		if eps == 0 {
			spread = [2]float64{r.PairCosine, r.PairDistance}
		}
		if r.PairCosine <= -1 || r.PairCosine >= 1 || r.PairDistance <= 0 || r.PairCosine != spread[0] || r.PairDistance != spread[1] {
			t.Errorf("ε %g: spread %g / %g, at ε 0 %v", eps, r.PairCosine, r.PairDistance, spread)
		}
		if r.N != 60 || r.UnderAttack > prev || (eps == 0 && (r.UnderAttack != r.Clean || r.DropSE != 0)) || (eps > 0 && r.DropSE <= 0) {
			t.Errorf("ε %g: %+v (previous %g)", eps, r, prev)
		}
		prev = r.UnderAttack
	}
	for _, bad := range []struct {
		edit func(*pipeline.EmbeddingAttackConfig)
		want string
	}{
		{func(a *pipeline.EmbeddingAttackConfig) { a.Eps = -1 }, "--eps -1"},
		{func(a *pipeline.EmbeddingAttackConfig) { a.Method = "pgdx" }, "pgd and fgm"},
		{func(a *pipeline.EmbeddingAttackConfig) { a.Steps = -2 }, "--steps -2"},
		{func(a *pipeline.EmbeddingAttackConfig) { a.Steps = 0 }, "--steps 0 must be in [1, 100]"}, // K = 0 (issue #43)
	} {
		a := pipeline.NewEmbeddingAttackConfig()
		a.Model, a.Data.Test, a.Eps = c.Options.Out, te, 1
		bad.edit(&a)
		var ce *pipeline.ConfigError
		if _, err := pipeline.EmbeddingAttack(context.Background(), a); !errors.As(err, &ce) || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: %v", bad.want, err)
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
