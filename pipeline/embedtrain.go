package pipeline

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/sentemb"
	"github.com/textarmor/textarmor/senteval"
	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/text"
	"github.com/textarmor/textarmor/train"
)

// EmbedTrainConfig trains a sentence encoder contrastively (`embed-train`):
// unsupervised SimCSE or RobustEmbed from a Hugging Face checkpoint, the
// best model by STS-B dev Spearman kept.
type EmbedTrainConfig struct {
	Method string // simcse or robustembed
	Init   string // the Hugging Face BERT-architecture directory (required)
	// Corpus is a one-sentence-per-line file; "" builds the offline corpus
	// (SentenceCorpus) from DataDir and WordNet.
	Corpus           string
	DataDir, WordNet string
	// Sentences trains on a seeded sample of this many sentences (0: all).
	Sentences int
	// MaxLen is in word pieces with [CLS] and [SEP] (spec: 32).
	MaxLen int
	// Pool is the sentence vector trained: "" takes the checkpoint's
	// sentence pooling (sentence-transformers') or else pooler, BERT's
	// [CLS] with its tanh layer (spec §5), evaluated as the [CLS] vector
	// (§10.10); cls or mean otherwise, evaluated the same way.
	Pool string
	// EvalEvery is the steps between STS-B dev evaluations (spec: 250);
	// DevN evaluates the first DevN dev pairs (0: all 1,500).
	EvalEvery, DevN int
	// Tau is SimCSE's temperature; RobustEmbed has its own in RobustEmbed.
	Tau         float64
	RobustEmbed sentemb.Config
	Options     train.Options
	Log         io.Writer
}

// NewEmbedTrainConfig returns the spec's settings (robustembed.md §4,
// §10.4: SimCSE-unsupervised's AdamW at lr 3e-5, linear decay without
// warm-up, batch 64, 32 word pieces, 2 epochs, STS-B dev every 250 steps).
func NewEmbedTrainConfig() EmbedTrainConfig {
	return EmbedTrainConfig{Method: "robustembed", MaxLen: 32, EvalEvery: 250, Tau: sentemb.DefaultTau, RobustEmbed: sentemb.DefaultConfig(),
		Options: train.Options{Epochs: 2, BatchSize: 64, Optimizer: "adamw", LR: 3e-5, Schedule: "linear", DecayGamma: 0.1, Seed: 42}}
}

// EmbedTrainReport is a finished run.
type EmbedTrainReport struct {
	// Start is the checkpoint's own STS-B dev Spearman, before training
	// (reported, not a selection candidate).
	Start     float64
	Result    *train.Result
	Sentences int
	Sources   map[string]int
	Elapsed   time.Duration
	Out       string
}

func (c *EmbedTrainConfig) check() error {
	switch {
	case c.Init == "":
		return configErrorf("--init (a Hugging Face BERT directory) is required")
	case c.Method != "simcse" && c.Method != "robustembed":
		return configErrorf("--method %q: want simcse or robustembed", c.Method)
	case c.Options.Out == "":
		return configErrorf("--out is required")
	case c.Corpus == "" && c.DataDir == "":
		return configErrorf("give --corpus FILE or --data DIR (the offline corpus is built from it)")
	case c.Pool != "" && !slices.Contains([]string{"pooler", "cls", "mean"}, c.Pool):
		return configErrorf("--pool %q: want pooler, cls or mean", c.Pool)
	}
	if err := CheckRules(
		Rule{c.Sentences >= 0, "sentences", c.Sentences, "≥ 0 (0 = all)"},
		Rule{c.MaxLen >= 3, "max-len", c.MaxLen, "at least 3"},
		Rule{c.EvalEvery >= 0, "eval-every", c.EvalEvery, "≥ 0 (0 = at epoch ends only)"},
		Rule{c.DevN >= 0, "dev-n", c.DevN, "≥ 0 (0 = all)"},
		Rule{isFinite(c.Tau) && c.Tau > 0, "tau", c.Tau, "a positive number"},
		Rule{c.Options.BatchSize >= 2, "batch", c.Options.BatchSize, "at least 2 (in-batch negatives)"},
	); err != nil {
		return err
	}
	if c.Method == "robustembed" {
		if err := c.RobustEmbed.Validate(); err != nil {
			return &ConfigError{err}
		}
	}
	return CheckTrainOptions(c.Options)
}

// SentenceCorpus is RobustEmbed's offline corpus (issue #45; the spec's
// Wiki1M is not available): the TRAINING splits of IMDB, SST-2 and TREC
// cut into sentences (text.SplitSentences; never a dev or test split, and
// none of the transfer or STS evaluation sets), WordNet's definitions and
// usage examples; sentences of 4 to 64 words, each once, in a seeded
// order. Sources counts each source's distinct sentences kept.
func SentenceCorpus(dataDir, wordnet string, seed int64) ([]string, map[string]int, error) {
	seen := map[string]bool{}
	var out []string
	sources := map[string]int{}
	add := func(src string, sents []string) {
		for _, s := range sents {
			if n := len(strings.Fields(s)); n < 4 || n > 64 || seen[s] {
				continue
			}
			seen[s] = true
			out = append(out, s)
			sources[src]++
		}
	}
	for _, name := range []string{"imdb", "sst2", "trec"} {
		ds, err := dataset.Load(name, dataDir)
		if err != nil {
			return nil, nil, fmt.Errorf("corpus: %w", err)
		}
		for _, e := range ds.Train {
			add(name+" train", text.SplitSentences(e.Text))
		}
	}
	if wordnet == "" {
		wordnet = lexicon.DefaultWordNetDir()
	}
	defs, ex, err := lexicon.WordNetSentences(wordnet)
	if err != nil {
		return nil, nil, fmt.Errorf("corpus: %w (give --wordnet DIR)", err)
	}
	add("wordnet definitions", defs)
	add("wordnet examples", ex)
	rand.New(rand.NewSource(seed)).Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out, sources, nil
}

// readSentences reads a one-sentence-per-line file, skipping blank lines.
func readSentences(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--corpus: %w", err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		if s := strings.TrimSpace(sc.Text()); s != "" {
			out = append(out, s)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("--corpus %s: %w", path, err)
	}
	if len(out) < 2 {
		return nil, configErrorf("--corpus %s: %d sentences; contrastive training needs at least 2", path, len(out))
	}
	return out, nil
}

// EmbedTrain trains the sentence encoder and writes the best model (STS-B
// dev Spearman ×100, evaluated every EvalEvery steps and at epoch ends) to
// Options.Out; rerun with Options.Resume to continue.
func EmbedTrain(ctx context.Context, c EmbedTrainConfig) (*EmbedTrainReport, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	log := orDiscard(c.Log)
	start := time.Now()
	var sents []string
	sources := map[string]int{}
	var err error
	if c.Corpus != "" {
		if sents, err = readSentences(c.Corpus); err != nil {
			return nil, err
		}
		sources[c.Corpus] = len(sents)
	} else if sents, sources, err = SentenceCorpus(c.DataDir, c.WordNet, c.Options.Seed); err != nil {
		return nil, err
	}
	if c.Sentences > 0 && c.Sentences < len(sents) {
		sents = append([]string(nil), sents...)
		rand.New(rand.NewSource(c.Options.Seed)).Shuffle(len(sents), func(i, j int) { sents[i], sents[j] = sents[j], sents[i] })
		sents = sents[:c.Sentences]
	}
	// The checkpoint's own length stays the model's (evaluation, the saved
	// encoder); only the training sentences are cut to MaxLen pieces.
	m, err := model.ImportHF(c.Init, model.ImportOptions{Pool: "pooler", Seed: c.Options.Seed})
	if err != nil {
		return nil, err
	}
	pool := c.Pool
	if pool == "" {
		pool = "pooler"
		if m.Sentence != nil {
			pool = m.Sentence.Pool
		}
	}
	m.Net.Cfg.Transformer.Pool = pool
	if pool == "pooler" { // trained through [CLS]'s tanh layer, evaluated without it (§10.10)
		m.Sentence = &model.SentenceSpec{Pool: "cls", Normalize: m.Sentence != nil && m.Sentence.Normalize}
	} else if m.Sentence == nil || m.Sentence.Pool != pool {
		m.Sentence = &model.SentenceSpec{Pool: pool}
	}
	dev, err := dataset.LoadSTSB(c.DataDir, "dev")
	if err != nil {
		return nil, fmt.Errorf("STS-B dev (the selection set; --data DIR): %w", err)
	}
	if c.DevN > 0 && c.DevN < len(dev) {
		dev = dev[:c.DevN]
	}
	var obj train.Objective
	if c.Method == "simcse" {
		obj = &sentemb.SimCSE{Tau: c.Tau}
	} else if obj, err = sentemb.New(c.RobustEmbed); err != nil {
		return nil, &ConfigError{err}
	}
	examples := make([]train.Example, len(sents))
	for i, s := range sents {
		examples[i] = train.Example{IDs: m.Pieces.Encode(s, min(c.MaxLen, m.MaxLen)).IDs}
	}
	opt := c.Options
	opt.Evaluate = func(m *model.Model) (float64, error) {
		r, err := senteval.STS(m, dev)
		return r.Spearman, err
	}
	opt.EvalEvery = c.EvalEvery
	startScore, err := opt.Evaluate(m)
	if err != nil {
		return nil, err
	}
	opt.Info = map[string]any{"method": c.Method, "init": c.Init, "pool": pool, "train_max_len": c.MaxLen, "sentences": len(sents),
		"corpus": sources, "selection": fmt.Sprintf("STS-B dev Spearman (%d pairs)", len(dev)), "blas": tensor.BackendDetail()}
	DescribeObjective(obj, opt.Info, log)
	fmt.Fprintf(log, "embed-train: %s from %s, %d sentences (%s), pool %s, training length %d; epochs %d, batch %d, %s lr %g; STS-B dev (%d pairs) every %d steps; %.2f before training\n",
		c.Method, c.Init, len(sents), sourceList(sources), pool, min(c.MaxLen, m.MaxLen), opt.Epochs, opt.BatchSize, opt.Optimizer, opt.LR, len(dev), c.EvalEvery, startScore)
	opt.Info["start_score"] = startScore
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res, err := train.Run(m, obj, examples, nil, opt)
	if err != nil {
		return nil, err
	}
	return &EmbedTrainReport{Start: startScore, Result: res, Sentences: len(sents), Sources: sources, Elapsed: time.Since(start), Out: opt.Out}, nil
}

// sourceList writes the corpus sources in name order: "imdb train 226757, …".
func sourceList(sources map[string]int) string {
	names := make([]string, 0, len(sources))
	for k := range sources {
		names = append(names, k)
	}
	slices.Sort(names)
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = fmt.Sprintf("%s %d", k, sources[k])
	}
	return strings.Join(parts, ", ")
}
