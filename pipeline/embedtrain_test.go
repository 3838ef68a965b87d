package pipeline_test

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/pipeline"
	"github.com/textarmor/textarmor/text"
)

// embedFixture writes a tiny random BERT as a Hugging Face directory, a
// corpus of generated sentences and an STS-B dev file whose gold score is
// the share of shared words.
func embedFixture(t *testing.T) (dir, hf, corpus string) {
	t.Helper()
	dir = t.TempDir()
	words := strings.Fields("the a film movie plot actor good bad great dull funny long short story scene music end")
	vocab := append([]string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "."}, words...)
	wp, err := text.NewWordPiece(vocab, text.DefaultWordPieceOptions())
	if err != nil {
		t.Fatal(err)
	}
	cfg := nn.DefaultConfig("transformer")
	tc := *cfg.Transformer
	tc.Layers, tc.Intermediate, tc.MaxPositions, tc.Pool, tc.Pooler = 1, 32, 32, "pooler", true
	cfg.Transformer, cfg.EmbedDim = &tc, 16
	opts := wp.Options()
	m, err := model.NewTransformer(model.Meta{Net: cfg, Tokenizer: "whitespace", MaxLen: 32, Classes: []string{"0", "1"}, Pieces: &opts}, wp, rand.New(rand.NewSource(1)))
	if err != nil {
		t.Fatal(err)
	}
	hf = filepath.Join(dir, "hf")
	if err := m.ExportHF(hf, false); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(2))
	sent := func() []string {
		s := make([]string, 3+r.Intn(5))
		for i := range s {
			s[i] = words[r.Intn(len(words))]
		}
		return s
	}
	var b strings.Builder
	for range 96 {
		b.WriteString(strings.Join(sent(), " ") + " .\n")
	}
	corpus = filepath.Join(dir, "corpus.txt")
	if err := os.WriteFile(corpus, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	for i := range 40 {
		x, y := sent(), sent()
		if i%2 == 0 {
			y = append(append([]string{}, x...), "end")
		}
		shared := 0
		for _, w := range x {
			if strings.Contains(" "+strings.Join(y, " ")+" ", " "+w+" ") {
				shared++
			}
		}
		fmt.Fprintf(&b, "main-captions\tMSRvid\t2012test\t%04d\t%.2f\t%s\t%s\n", i, 5*float64(shared)/float64(len(x)), strings.Join(x, " "), strings.Join(y, " "))
	}
	if err := os.MkdirAll(filepath.Join(dir, "stsb"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "stsb", "sts-dev.csv"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, hf, corpus
}

// SimCSE and RobustEmbed train a tiny encoder end to end: the best model
// by the dev score is written with its sentence pooling, mid-epoch
// evaluations are recorded, and bad settings are refused.
func TestEmbedTrain(t *testing.T) {
	dir, hf, corpus := embedFixture(t)
	for _, method := range []string{"simcse", "robustembed"} {
		c := pipeline.NewEmbedTrainConfig()
		c.Method, c.Init, c.Corpus, c.DataDir = method, hf, corpus, dir
		c.EvalEvery, c.MaxLen = 4, 16
		c.Options.Epochs, c.Options.BatchSize, c.Options.LR = 2, 16, 1e-3
		c.Options.Out = filepath.Join(dir, method)
		c.RobustEmbed.Eps, c.RobustEmbed.Alpha, c.RobustEmbed.Beta, c.RobustEmbed.K, c.RobustEmbed.T = 0.05, 0.01, 0.01, 2, 2
		var log strings.Builder
		c.Log = &log
		rep, err := pipeline.EmbedTrain(context.Background(), c)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		if rep.Sentences != 96 || len(rep.Result.Evals) != 2 || rep.Result.BestEpoch == 0 {
			t.Fatalf("%s: %d sentences, evals %v, best epoch %d", method, rep.Sentences, rep.Result.Evals, rep.Result.BestEpoch)
		}
		m, err := model.Load(c.Options.Out)
		if err != nil {
			t.Fatal(err)
		}
		// Only the training sentences are cut to MaxLen: the encoder keeps
		// the checkpoint's length for evaluation and use.
		if m.Training["method"] != method || m.Sentence == nil || m.Sentence.Pool != "cls" || m.Net.Cfg.Transformer.Pool != "pooler" || m.MaxLen != 32 {
			t.Errorf("%s: record %v, sentence %+v", method, m.Training, m.Sentence)
		}
		if _, err := m.Embed([]string{"good film", "bad plot"}); err != nil {
			t.Errorf("%s: the trained encoder does not embed: %v", method, err)
		}
	}
	c := pipeline.NewEmbedTrainConfig()
	c.Init, c.Corpus, c.DataDir, c.Options.Out = hf, corpus, dir, filepath.Join(dir, "x")
	for _, edit := range []func(*pipeline.EmbedTrainConfig){
		func(c *pipeline.EmbedTrainConfig) { c.Method = "mlm" },
		func(c *pipeline.EmbedTrainConfig) { c.Options.BatchSize = 1 },
		func(c *pipeline.EmbedTrainConfig) { c.RobustEmbed.Lambda = 2 },
		func(c *pipeline.EmbedTrainConfig) { c.Init = "" },
		func(c *pipeline.EmbedTrainConfig) { c.Corpus = filepath.Join(dir, "none.txt") },
	} {
		bad := c
		edit(&bad)
		if _, err := pipeline.EmbedTrain(context.Background(), bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// The offline corpus on the real data: at least 100k distinct sentences
// (issue #45), from each source, none longer than 64 words.
func TestSentenceCorpusRealData(t *testing.T) {
	dir := os.Getenv("TEXTARMOR_DATA")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "data")
	}
	if _, err := os.Stat(filepath.Join(dir, "imdb")); err != nil {
		t.Skipf("skipping: %s not available (%v); set TEXTARMOR_DATA", dir, err)
	}
	if _, err := os.Stat(filepath.Join(lexicon.DefaultWordNetDir(), "data.noun")); err != nil {
		t.Skipf("skipping: WordNet not installed (%v)", err)
	}
	sents, sources, err := pipeline.SentenceCorpus(dir, "", 42)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d sentences: %v", len(sents), sources)
	if len(sents) < 100000 || len(sources) != 5 {
		t.Fatalf("%d sentences from %v", len(sents), sources)
	}
	for _, s := range sents[:1000] {
		if n := len(strings.Fields(s)); n < 4 || n > 64 {
			t.Fatalf("%d words: %q", n, s)
		}
	}
}
