package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand"
	"time"

	"github.com/textarmor/textarmor/checkpoint"
	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/metrics"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/text"
	"github.com/textarmor/textarmor/train"
)

// DefaultCheckpointEvery bounds the work an interrupted training loses:
// IMDB epochs of the heavier defenses run for hours on a few cores.
const DefaultCheckpointEvery = 10 * time.Minute

// TrainConfig is one training run: `textarmor train` with every flag as a
// typed field. NewTrainConfig gives the CLI's defaults.
type TrainConfig struct {
	// Data is what to train on. Dataset and Preset, when Dataset is set,
	// are used instead of loading Data (a caller that loaded the data
	// already, e.g. a table engine training several rows on it); Data.Dir
	// still locates the default synonym table.
	Data    Data
	Dataset *dataset.Dataset
	Preset  dataset.Preset

	// Net is the architecture (ignored with FineTune.Init).
	Net Network
	// Embeddings are word vectors the embedding table starts from
	// (--embeddings); words the file lacks start random.
	Embeddings string
	// EmbeddingsFrom is a model directory whose vocabulary and embedding
	// table the new model takes (--embeddings-from), frozen unless
	// EmbeddingsFromTrainable (--freeze-embeddings=false).
	EmbeddingsFrom          string
	EmbeddingsFromTrainable bool
	// InitLM is an LSTM language model (lstmlm) whose vocabulary,
	// embedding table and LSTM the classifier starts from (--init-lm,
	// spgd.md §4.1); Net must be a unidirectional lstm, whose embedding
	// size and units become the model's.
	InitLM string
	// Retrofit pulls the initial rows of synonyms together over the
	// Defense.Synonyms graph with this many sweeps (0 = off).
	Retrofit int
	// FineTune, when FineTune.Init is set, fine-tunes a pretrained
	// transformer instead of building Net.
	FineTune FineTuneConfig

	Defense DefenseConfig
	// Options are the training settings; Out is required. Options.LogPath
	// "" appends to Out+".log.jsonl"; Options.Info adds keys to the
	// model's training record.
	Options train.Options
	// EmbedLRScale multiplies the word-embedding table's learning rate
	// (--embed-lr-scale; 0 or 1 = none; adam and adamw only): FTML trains
	// only that table with its triplet loss, and a transformer's small
	// fine-tuning rate moves it too little in a short run.
	EmbedLRScale float64
	// DefenseLR lets a defense with a learning rate of its own (flat, adv:
	// FLAT spec §5) train at it instead of Options.LR: the CLI sets it
	// when --lr is not given. It does not apply to fine-tuning.
	DefenseLR bool

	// TrainSubset trains on dataset.SeededSubset(training split, TrainN,
	// Options.Seed): the first TrainN examples (0 = all) of a seeded
	// permutation. The vocabulary is still built from the whole split.
	TrainSubset bool
	TrainN      int
	// SubsetSeed, when set, seeds TrainSubset's permutation instead of
	// Options.Seed: several instances trained with different seeds then
	// train on the same examples (bench ftml-table --seeds).
	SubsetSeed *int64
	// NoDev trains without a dev set even when the data has one: the last
	// epoch's model is kept. NoTest skips the test evaluation.
	NoDev, NoTest bool
	// Retrain, with Options.Resume, trains again into an Out that holds a
	// finished model and no checkpoint instead of refusing (table engines
	// that retrain a phase on purpose).
	Retrain bool

	// Log receives the run's messages (the CLI: stderr); nil discards them.
	// Options.Progress is the progress bar.
	Log io.Writer
}

// NewTrainConfig returns a configuration with every default of `textarmor
// train`: a CNN, standard training, 10 epochs of batches of 64, Adam at
// 1e-3 (flat and adv at their own rate), seed 1; Data and Options.Out are
// left to fill.
func NewTrainConfig() TrainConfig {
	return TrainConfig{
		Data:      NewData(),
		Net:       NewNetwork(),
		FineTune:  FineTuneConfig{Dropout: -1, VocabSupplement: -1},
		Defense:   NewDefenseConfig(),
		DefenseLR: true,
		Options: train.Options{Epochs: 10, BatchSize: 64, Optimizer: "adam", LR: 1e-3, DecayGamma: 0.1, Seed: 1,
			CheckpointEvery: DefaultCheckpointEvery},
	}
}

// TrainReport is what a run produced.
type TrainReport struct {
	Result *train.Result
	// Model is the best model, loaded back from Options.Out.
	Model   *model.Model
	Dataset *dataset.Dataset
	// Test is the model's evaluation on the test split; nil without one
	// (or with NoTest).
	Test *metrics.Report
	// Elapsed is the time from the start of training (after the data was
	// read) to the saved model.
	Elapsed time.Duration
}

// JSON is the object `train --json` prints: the test report's fields with
// the split, the dataset and the run's timings. It is nil without a test
// report.
func (r *TrainReport) JSON() (map[string]any, error) {
	if r.Test == nil {
		return nil, nil
	}
	raw, err := json.Marshal(r.Test)
	if err != nil {
		return nil, err
	}
	obj := map[string]any{}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	var epochSeconds []float64
	for _, e := range r.Result.Epochs {
		epochSeconds = append(epochSeconds, e.Seconds)
	}
	maps.Copy(obj, map[string]any{"split": "test", "dataset": r.Dataset.Name, "train_seconds": r.Elapsed.Seconds(),
		"best_epoch": r.Result.BestEpoch, "best_dev_acc": r.Result.BestDevAcc, "epoch_seconds": epochSeconds})
	return obj, nil
}

// Train runs the whole job: it checks c, locks Options.Out, builds the
// model (vocabulary, embeddings, group mask, retrofit), trains it with the
// defense (attack rounds for flat and adv), reloads the best model and
// evaluates it on the test split. ctx is checked between these stages (an
// epoch is not interrupted; a killed run resumes with Options.Resume).
func Train(ctx context.Context, c TrainConfig) (*TrainReport, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	log := c.Log
	if log == nil {
		log = io.Discard
	}
	opt := c.Options
	if opt.LogPath == "" {
		opt.LogPath = opt.Out + ".log.jsonl"
	}
	// One run per output: a second train into the same folder would write
	// over the first one's checkpoints and report its accuracy.
	unlock, err := checkpoint.LockOutput(opt.Out)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if opt.Resume && !c.Retrain {
		if err := train.NothingToResume(opt.Out); err != nil {
			return nil, &ConfigError{err}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if c.FineTune.Init != "" {
		return c.fineTune(ctx, opt, log)
	}
	return c.trainNew(ctx, opt, log)
}

// load returns the data to train on.
func (c *TrainConfig) load() (*dataset.Dataset, dataset.Preset, error) {
	if c.Dataset != nil {
		return c.Dataset, c.Preset, nil
	}
	return c.Data.Load()
}

// splits are the examples trained and selected on.
func (c *TrainConfig) splits(ds *dataset.Dataset, seed int64) (trainSet, dev []dataset.Example) {
	trainSet, dev = ds.Train, ds.Dev
	if c.TrainSubset {
		if c.SubsetSeed != nil {
			seed = *c.SubsetSeed
		}
		trainSet = dataset.SeededSubset(ds.Train, c.TrainN, seed)
	}
	if c.NoDev {
		dev = nil
	}
	return trainSet, dev
}

// trainNew builds a new model from Net and trains it.
func (c *TrainConfig) trainNew(ctx context.Context, opt train.Options, log io.Writer) (*TrainReport, error) {
	cfg, err := c.Net.Config()
	if err != nil {
		return nil, err
	}
	cfg.Reconstructor = c.Defense.Name == "rar" // RAR trains a head that reconstructs the tokens
	if d := c.Defense.lookup(); d.Rounds {
		if d.LR > 0 && c.DefenseLR {
			opt.LR = d.LR
			fmt.Fprintf(log, "%s: learning rate %g (FLAT spec §5; give --lr to change it)\n", d.Name, opt.LR)
		}
		cfg.Mask = d.Name == "flat" // FLAT's word mask
	}
	ds, preset, err := c.load()
	if err != nil {
		return nil, err
	}
	if err := refusePairData(ds, "only a transformer fine-tuned from a checkpoint reads them (train --init DIR --model transformer)"); err != nil {
		return nil, err
	}
	src, err := c.embeddingsFrom(&cfg, &preset.Tokenizer, log)
	if err != nil {
		return nil, err
	}
	lm, err := c.initLM(&cfg, preset.Tokenizer, log)
	if err != nil {
		return nil, err
	}
	tok, err := text.NewTokenizer(preset.Tokenizer)
	if err != nil {
		return nil, &ConfigError{err}
	}
	start := time.Now()
	var vocab *text.Vocab
	switch {
	case src != nil:
		vocab = src.Vocab
	case lm != nil:
		vocab = lm.Vocab
	default:
		vocab = train.BuildVocab(tok, ds.Train, preset.MinCount, preset.MaxVocab)
	}
	rng := rand.New(rand.NewSource(opt.Seed))
	var vecs *text.Vectors
	if c.Embeddings != "" {
		if vecs, err = text.LoadVectors(c.Embeddings, vocab); err != nil {
			return nil, err
		}
		cfg.EmbedDim = vecs.Dim
	}
	groupRec, err := c.Defense.GroupMask.apply(&cfg, vocab, c.Defense.Synonyms, c.Data.Dir, opt.Seed, log)
	if err != nil {
		return nil, err
	}
	m, err := model.New(model.Meta{Net: cfg, Tokenizer: preset.Tokenizer, MaxLen: preset.MaxLen, Classes: ds.Classes}, vocab, rng)
	if err != nil {
		return nil, &ConfigError{err}
	}
	if vecs != nil {
		// Words the file lacks keep their random rows; padding stays zero.
		if _, err := m.SetEmbeddings(vecs); err != nil {
			return nil, err
		}
		if vecs.NumFound == 0 {
			return nil, fmt.Errorf("--embeddings %s: none of the %d vocabulary words has a vector there (another language or tokenization?)", c.Embeddings, vocab.Len()-2)
		}
		fmt.Fprintf(log, "embeddings: %d of %d vocabulary words found in %s\n", vecs.NumFound, vocab.Len()-2, c.Embeddings)
	}
	if c.Retrofit > 0 {
		if err := retrofitEmbeddings(m, c.Retrofit, c.Defense.Synonyms, c.Data.Dir, log); err != nil {
			return nil, err
		}
	}
	if lm != nil {
		if err := copyLM(m, lm); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(log, "data: %s, %d train / %d dev / %d test, %d classes; vocabulary %d words; %s tokenizer, max length %d; BLAS %s\n",
		ds.Name, len(ds.Train), len(ds.Dev), len(ds.Test), len(ds.Classes), vocab.Len(), preset.Tokenizer, preset.MaxLen, tensor.BackendDetail())
	for _, n := range ds.Notes {
		fmt.Fprintf(log, "note: %s\n", n)
	}
	opt.Info = c.info(map[string]any{"dataset": ds.Name, "arch": cfg.Arch, "blas": tensor.BackendDetail()})
	if c.Embeddings != "" {
		opt.Info["embeddings"] = c.Embeddings
	}
	if c.Retrofit > 0 {
		opt.Info["retrofit_sweeps"] = c.Retrofit
	}
	if lm != nil {
		opt.Info["init_lm"] = c.InitLM
	}
	if groupRec != nil {
		opt.Info["group_mask"] = groupRec
	}
	if src != nil {
		if opt.Info["embeddings_from"], err = copyEmbeddings(m, src, c.EmbeddingsFrom); err != nil {
			return nil, err
		}
	}
	obj, err := c.Defense.Objective(m, ds.Name, c.Data.Dir, log)
	if err != nil {
		return nil, err
	}
	trainSet, dev := c.splits(ds, opt.Seed)
	if c.TrainSubset {
		opt.Info["train_n"] = len(trainSet)
	}
	if err := c.Defense.Prepare(obj, m, len(trainSet), opt); err != nil {
		return nil, err
	}
	opt.Info["defense"] = obj.Name()
	c.scaleEmbedLR(m, &opt, log)
	DescribeObjective(obj, opt.Info, log) // after Prepare: IBP's ramp is set there
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var res *train.Result
	if c.Defense.lookup().Rounds {
		res, err = c.runRounds(m, obj, trainSet, dev, opt, log)
	} else {
		res, err = train.Run(m, obj, train.Encode(m, trainSet), train.Encode(m, dev), opt)
	}
	if err != nil {
		return nil, err
	}
	return c.finish(ds, opt, res, time.Since(start), log)
}

// info is the training record: the run's own keys, then the caller's
// Options.Info.
func (c *TrainConfig) info(own map[string]any) map[string]any {
	maps.Copy(own, c.Options.Info)
	return own
}

// scaleEmbedLR applies EmbedLRScale to m's word-embedding table.
func (c *TrainConfig) scaleEmbedLR(m *model.Model, opt *train.Options, log io.Writer) {
	if c.EmbedLRScale <= 0 || c.EmbedLRScale == 1 {
		return
	}
	name := m.Net.Emb.W.Name
	opt.LRScale = map[string]float64{name: c.EmbedLRScale}
	opt.Info["embed_lr_scale"] = c.EmbedLRScale
	fmt.Fprintf(log, "learning rate of %s: ×%g (%g)\n", name, c.EmbedLRScale, c.EmbedLRScale*opt.LR)
}

// finish loads the best model a run wrote and evaluates it on the test
// split.
func (c *TrainConfig) finish(ds *dataset.Dataset, opt train.Options, res *train.Result, elapsed time.Duration, log io.Writer) (*TrainReport, error) {
	best, err := model.Load(opt.Out)
	if err != nil {
		return nil, err
	}
	if c.NoDev || len(ds.Dev) == 0 {
		fmt.Fprintf(log, "trained in %s; no dev set, the last epoch (%d) kept; model written to %s\n",
			elapsed.Round(time.Second), res.BestEpoch, opt.Out)
	} else {
		fmt.Fprintf(log, "trained in %s; best dev accuracy %.4f at epoch %d; model written to %s\n",
			elapsed.Round(time.Second), res.BestDevAcc, res.BestEpoch, opt.Out)
	}
	if s := best.Net.GroupScales(); s != nil {
		fmt.Fprintf(log, "group mask: learnt scales %s\n", formatScales(s))
	}
	rep := &TrainReport{Result: res, Model: best, Dataset: ds, Elapsed: elapsed}
	if len(ds.Test) == 0 || c.NoTest {
		return rep, nil
	}
	test, err := Evaluate(best, ds.Test, ds.Classes)
	if err != nil {
		return nil, err
	}
	rep.Test = &test
	return rep, nil
}
