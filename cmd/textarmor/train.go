package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/textarmor/textarmor/checkpoint"
	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/defense"
	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/metrics"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/pipeline"
	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/text"
	"github.com/textarmor/textarmor/train"
)

type netFlags struct {
	arch, widths, pool   string
	embedDim, filters    int
	hidden               int
	inputLayer           int
	headHidden           int
	dropout, embedInit   float64
	tanh, freeze         bool
	embeddings, blasName string
	embFrom              string
	retrofit             int
	// init is a Hugging Face checkpoint directory a transformer starts
	// from; freezeEncoder trains its head only.
	init          string
	freezeEncoder bool
}

func (n *netFlags) register(fs *flag.FlagSet) {
	d := nn.DefaultConfig("cnn")
	fs.StringVar(&n.arch, "model", "cnn", "architecture: "+strings.Join(nn.Archs, ", "))
	fs.IntVar(&n.embedDim, "embed-dim", d.EmbedDim, "embedding size (taken from --embeddings when given)")
	fs.IntVar(&n.filters, "filters", d.Filters, "cnn: filters per window width")
	fs.StringVar(&n.widths, "widths", "3,4,5", "cnn: comma-separated window widths")
	fs.IntVar(&n.hidden, "hidden", 150, "lstm/bilstm: hidden units per direction")
	fs.StringVar(&n.pool, "pool", "max", "lstm/bilstm: pooling over time, max or mean")
	fs.BoolVar(&n.tanh, "tanh", false, "lstm/bilstm: tanh before and after pooling (FLAT's LSTM)")
	fs.IntVar(&n.inputLayer, "input-layer", 0, "width of a linear layer with ReLU applied to each word vector before the encoder (Jia et al.'s IBP models: 100; 0 = none)")
	fs.IntVar(&n.headHidden, "head-hidden", 0, "width of a hidden layer with ReLU between the pooled sentence and the output layer (Jia et al.: 100; 0 = none)")
	fs.Float64Var(&n.dropout, "dropout", d.Dropout, "dropout before the output layer (and before --head-hidden's layer)")
	fs.Float64Var(&n.embedInit, "embed-init", d.EmbedInit, "random embedding rows are drawn from U(-a, a)")
	fs.StringVar(&n.embeddings, "embeddings", "", "word vectors (GloVe/word2vec text or fastText .vec, .gz ok); words missing from the file start random")
	fs.BoolVar(&n.freeze, "freeze-embeddings", false, "keep the embedding table fixed during training")
	fs.StringVar(&n.embFrom, "embeddings-from", "", "model directory: take its vocabulary and embedding table, frozen (implies --freeze-embeddings; FTML spec §12.1)")
	fs.IntVar(&n.retrofit, "retrofit", 0, "retrofit the initial embedding table to the --synonyms neighbour graph with this many sweeps (Faruqui et al. 2015; 10 in the paper; 0 = off)")
	fs.StringVar(&n.blasName, "blas", "", "BLAS backend: "+strings.Join(tensor.Backends(), ", ")+" (default "+tensor.BackendName()+")")
	fs.StringVar(&n.init, "init", "", "transformer: start from this Hugging Face BERT-architecture directory (config.json, model.safetensors, vocab.txt); --pool is then pooler (default), cls or mean, --max-len counts word pieces, and the training flags not given take fine-tuning's defaults (3 epochs, batch 32, adamw, lr 2e-5, weight decay 0.01, linear warm-up 0.1, clip 1)")
	fs.BoolVar(&n.freezeEncoder, "freeze-encoder", false, "transformer with --init: train the classification head only (a quick baseline)")
}

func (n *netFlags) config() (nn.Config, error) {
	cfg := nn.DefaultConfig(n.arch)
	cfg.EmbedDim, cfg.Dropout, cfg.EmbedInit, cfg.FreezeEmb = n.embedDim, n.dropout, n.embedInit, n.freeze
	cfg.InputLayer, cfg.HeadHidden = n.inputLayer, n.headHidden
	if n.inputLayer < 0 || n.headHidden < 0 {
		return cfg, usageError{fmt.Errorf("--input-layer %d and --head-hidden %d must not be negative", n.inputLayer, n.headHidden)}
	}
	switch n.arch {
	case "cnn":
		cfg.Filters = n.filters
		widths, err := n.windowWidths()
		if err != nil {
			return cfg, err
		}
		cfg.Widths = widths
	case "bilstm", "lstm":
		cfg.Hidden, cfg.Pool, cfg.Tanh = n.hidden, n.pool, n.tanh
	case "transformer": // from scratch on word ids: the default small BERT
		if n.pool != "max" {
			cfg.Transformer.Pool = n.pool
		}
	default:
		return cfg, usageError{fmt.Errorf("--model %q: valid are %s", n.arch, strings.Join(nn.Archs, ", "))}
	}
	return cfg, nil
}

// windowWidths parses --widths: CNN window widths in [1, maxWindow].
func (n *netFlags) windowWidths() ([]int, error) {
	var widths []int
	for _, s := range strings.Split(n.widths, ",") {
		w, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return nil, usageError{fmt.Errorf("--widths %q: %v", n.widths, err)}
		}
		if w < 1 || w > maxWindow {
			return nil, usageError{fmt.Errorf("--widths %q: width %d must be in [1, %d]", n.widths, w, maxWindow)}
		}
		widths = append(widths, w)
	}
	return widths, nil
}

// check validates the numeric architecture flags (sizes that allocate are
// bounded by maxWidth), before any data is read.
func (n *netFlags) check() error {
	if err := checkNumbers(
		widthRule("embed-dim", n.embedDim, 1, ""),
		widthRule("filters", n.filters, 1, ""),
		widthRule("hidden", n.hidden, 1, ""),
		widthRule("input-layer", n.inputLayer, 0, "0 = none"),
		widthRule("head-hidden", n.headHidden, 0, "0 = none"),
		numRule{finite(n.dropout) && n.dropout >= 0 && n.dropout < 1, "dropout", n.dropout, "in [0, 1)"},
		numRule{finite(n.embedInit) && n.embedInit >= 0, "embed-init", n.embedInit, "a number ≥ 0"},
		numRule{n.retrofit >= 0, "retrofit", n.retrofit, "≥ 0 (0 = off)"},
	); err != nil {
		return err
	}
	_, err := n.windowWidths()
	return err
}

func useBLAS(name string) error {
	if name == "" {
		return nil
	}
	if err := tensor.UseBackend(name); err != nil {
		return usageError{err}
	}
	return nil
}

// defaultCheckpointEvery bounds the work an interrupted training loses:
// IMDB epochs of the heavier defenses run for hours on a few cores.
const defaultCheckpointEvery = 10 * time.Minute

func runTrain(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("train", "train --dataset NAME | --train FILE [--dev FILE --test FILE] --out DIR [flags]", stderr)
	var df dataFlags
	df.register(fs, true)
	var nf netFlags
	nf.register(fs)
	var opt train.Options
	var decay string
	var quiet, asJSON bool
	fs.IntVar(&opt.Epochs, "epochs", 10, "training epochs")
	fs.IntVar(&opt.BatchSize, "batch", 64, "mini-batch size")
	fs.Float64Var(&opt.LR, "lr", 1e-3, "learning rate (when not given: adv 0.01 and flat 0.005, FLAT spec §5)")
	fs.StringVar(&opt.Optimizer, "optimizer", "adam", "adam, adamw (decoupled weight decay; biases and LayerNorms exempt) or sgd")
	fs.StringVar(&opt.Schedule, "schedule", "", "learning-rate schedule: linear (warm-up over --warmup of all steps, then linear decay to 0) or empty for a constant rate")
	fs.Float64Var(&opt.Warmup, "warmup", 0, "with --schedule linear: the share of all steps that warm the rate up")
	fs.Float64Var(&opt.Momentum, "momentum", 0, "sgd momentum")
	fs.Float64Var(&opt.WeightDecay, "weight-decay", 0, "L2 weight decay")
	fs.Float64Var(&opt.Clip, "clip", 0, "clip the global gradient norm to this value (0 = off)")
	fs.StringVar(&decay, "lr-decay-epochs", "", "comma-separated epochs at which the learning rate is multiplied by --lr-decay")
	fs.Float64Var(&opt.DecayGamma, "lr-decay", 0.1, "learning-rate factor at each --lr-decay-epochs epoch")
	fs.Int64Var(&opt.Seed, "seed", 1, "random seed (same seed, same numbers)")
	fs.IntVar(&opt.Patience, "patience", 0, "stop after this many epochs without a better dev accuracy (0 = never)")
	fs.StringVar(&opt.Out, "out", "", "model directory to write (required); checkpoints go to OUT.ckpt")
	fs.BoolVar(&opt.Resume, "resume", false, "continue an interrupted run from OUT.ckpt")
	fs.DurationVar(&opt.CheckpointEvery, "checkpoint-every", defaultCheckpointEvery, "also checkpoint inside an epoch once this much time has passed since the last checkpoint (0 = at epoch ends only)")
	fs.StringVar(&opt.LogPath, "log", "", "append per-epoch metrics as JSON lines to this file (default OUT.log.jsonl)")
	fs.BoolVar(&quiet, "quiet", false, "no progress bar")
	fs.BoolVar(&asJSON, "json", false, "print the final test evaluation as one JSON object")
	var dfl defenseFlags
	dfl.register(fs)
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if err := dfl.check(fs); err != nil {
		return err
	}
	if err := checkTrainNumbers(opt, nf, df); err != nil {
		return err
	}
	var err error
	if opt.DecayEpochs, err = parseDecayEpochs(decay); err != nil {
		return err
	}
	if opt.Out == "" {
		return usageError{fmt.Errorf("--out is required")}
	}
	if err := useBLAS(nf.blasName); err != nil {
		return err
	}
	if opt.LogPath == "" {
		opt.LogPath = opt.Out + ".log.jsonl"
	}
	if !quiet {
		opt.Progress = stderr
	}
	// One run per output: a second train into the same folder would write
	// over the first one's checkpoints and report its accuracy.
	unlock, err := checkpoint.LockOutput(opt.Out)
	if err != nil {
		return err
	}
	defer unlock()
	if opt.Resume {
		if err := train.NothingToResume(opt.Out); err != nil {
			return usageError{err}
		}
	}
	if nf.init != "" {
		return runFineTune(fs, &df, &nf, &dfl, opt, asJSON, stdout, stderr)
	}
	if nf.freezeEncoder {
		return usageError{fmt.Errorf("--freeze-encoder needs --init")}
	}
	cfg, err := nf.config()
	if err != nil {
		return err
	}
	if err := dfl.fl.prepare(fs, dfl.name, &cfg, &opt, stderr); err != nil {
		return err
	}
	ds, preset, err := df.load()
	if err != nil {
		return err
	}
	srcEmb, err := embeddingsFrom(fs, &nf, &cfg, &preset.Tokenizer, stderr)
	if err != nil {
		return err
	}
	tok, err := text.NewTokenizer(preset.Tokenizer)
	if err != nil {
		return usageError{err}
	}
	start := time.Now()
	var vocab *text.Vocab
	if srcEmb != nil {
		vocab = srcEmb.Vocab
	} else {
		vocab = train.BuildVocab(tok, ds.Train, preset.MinCount, preset.MaxVocab)
	}
	rng := rand.New(rand.NewSource(opt.Seed))
	var vecs *text.Vectors
	if nf.embeddings != "" {
		if vecs, err = text.LoadVectors(nf.embeddings, vocab); err != nil {
			return err
		}
		cfg.EmbedDim = vecs.Dim
	}
	groupRec, err := dfl.gm.apply(&cfg, vocab, dfl.synonyms, df.Dir, opt.Seed, stderr)
	if err != nil {
		return err
	}
	m, err := model.New(model.Meta{Net: cfg, Tokenizer: preset.Tokenizer, MaxLen: preset.MaxLen, Classes: ds.Classes}, vocab, rng)
	if err != nil {
		return usageError{err}
	}
	if vecs != nil {
		// Words the file lacks keep their random rows; padding stays zero.
		if _, err := m.SetEmbeddings(vecs); err != nil {
			return err
		}
		if vecs.NumFound == 0 {
			return fmt.Errorf("--embeddings %s: none of the %d vocabulary words has a vector there (another language or tokenization?)", nf.embeddings, vocab.Len()-2)
		}
		fmt.Fprintf(stderr, "embeddings: %d of %d vocabulary words found in %s\n", vecs.NumFound, vocab.Len()-2, nf.embeddings)
	}
	if nf.retrofit > 0 && nf.embFrom != "" {
		return usageError{fmt.Errorf("--retrofit and --embeddings-from exclude each other (the copied table is used as it is)")}
	}
	if nf.retrofit > 0 {
		if err := retrofitEmbeddings(m, nf.retrofit, dfl.synonyms, df.Dir, stderr); err != nil {
			return err
		}
	}
	fmt.Fprintf(stderr, "data: %s, %d train / %d dev / %d test, %d classes; vocabulary %d words; %s tokenizer, max length %d; BLAS %s\n",
		ds.Name, len(ds.Train), len(ds.Dev), len(ds.Test), len(ds.Classes), vocab.Len(), preset.Tokenizer, preset.MaxLen, tensor.BackendDetail())
	for _, n := range ds.Notes {
		fmt.Fprintf(stderr, "note: %s\n", n)
	}
	opt.Info = map[string]any{"dataset": ds.Name, "arch": cfg.Arch, "blas": tensor.BackendDetail()}
	if nf.embeddings != "" {
		opt.Info["embeddings"] = nf.embeddings
	}
	if nf.retrofit > 0 {
		opt.Info["retrofit_sweeps"] = nf.retrofit
	}
	if groupRec != nil {
		opt.Info["group_mask"] = groupRec
	}
	if srcEmb != nil {
		if opt.Info["embeddings_from"], err = copyEmbeddings(m, srcEmb, nf.embFrom); err != nil {
			return err
		}
	}
	obj, err := dfl.objective(m, df.Dir, stderr)
	if err != nil {
		return err
	}
	if err := dfl.bl.setupRun(obj, m, ds.Train, opt); err != nil {
		return err
	}
	opt.Info["defense"] = obj.Name()
	describeObjective(obj, opt.Info, stderr)
	var res *train.Result
	if isRounds(dfl.name) {
		res, err = dfl.fl.run(dfl.name, m, obj, ds.Train, ds.Dev, opt, dfl.synonyms, df.Dir, stderr)
	} else {
		res, err = train.Run(m, obj, train.Encode(m, ds.Train), train.Encode(m, ds.Dev), opt)
	}
	if err != nil {
		return err
	}
	return reportTrained(ds, opt, res, time.Since(start), asJSON, stdout, stderr)
}

// reportTrained loads the best model a run wrote and prints its test
// evaluation.
func reportTrained(ds *dataset.Dataset, opt train.Options, res *train.Result, elapsed time.Duration, asJSON bool, stdout, stderr io.Writer) error {
	best, err := model.Load(opt.Out)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "trained in %s; best dev accuracy %.4f at epoch %d; model written to %s\n",
		elapsed.Round(time.Second), res.BestDevAcc, res.BestEpoch, opt.Out)
	if s := best.Net.GroupScales(); s != nil {
		fmt.Fprintf(stderr, "group mask: learnt scales %s\n", formatScales(s))
	}
	if len(ds.Test) == 0 {
		return nil
	}
	rep, err := evaluate(best, ds.Test, ds.Classes)
	if err != nil {
		return err
	}
	return printReport(stdout, rep, asJSON, map[string]any{"split": "test", "dataset": ds.Name,
		"train_seconds": elapsed.Seconds(), "best_epoch": res.BestEpoch, "best_dev_acc": res.BestDevAcc,
		"epoch_seconds": epochSeconds(res)})
}

func epochSeconds(r *train.Result) []float64 {
	var s []float64
	for _, e := range r.Epochs {
		s = append(s, e.Seconds)
	}
	return s
}

func evaluate(m *model.Model, ex []dataset.Example, classes []string) (metrics.Report, error) {
	return pipeline.Evaluate(m, ex, classes)
}

func sameClassCount(m *model.Model, classes []string) error {
	return pipeline.SameClassCount(m, classes)
}

// printReport prints a metrics report as text or one JSON object with the
// report's fields plus extra.
func printReport(w io.Writer, rep metrics.Report, asJSON bool, extra map[string]any) error {
	if !asJSON {
		fmt.Fprint(w, rep.Format())
		return nil
	}
	raw, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	obj := map[string]any{}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return err
	}
	for k, v := range extra {
		obj[k] = v
	}
	enc := json.NewEncoder(w)
	return enc.Encode(obj)
}

// defenseFlags choose the training objective of `train`.
type defenseFlags struct {
	name, synonyms, norm string
	beta, alpha, tau     float64
	k                    int
	squared, ceUpdates   bool
	bl                   baselineFlags
	fl                   flatFlags
	gm                   groupFlags
}

func (d *defenseFlags) register(fs *flag.FlagSet) {
	def := defense.DefaultSettings()
	fs.StringVar(&d.name, "defense", "standard", "training objective: "+defenseList())
	fs.StringVar(&d.synonyms, "synonyms", "", "ftml/cml (and --group-mask): synonym neighbour table (JSON word -> [neighbours]; default DATA/counterfitted-neighbors-jia2019/counterfitted_neighbors.json)")
	fs.Float64Var(&d.beta, "ftml-beta", def.Beta, "ftml/cml: weight β of the metric term")
	fs.Float64Var(&d.alpha, "ftml-alpha", def.Alpha, "ftml/cml: margin α (0 = 0.7·α0, α0 the mean word distance of the initial table)")
	fs.IntVar(&d.k, "ftml-k", def.K, "ftml/cml: synonyms per word and negatives per batch")
	fs.StringVar(&d.norm, "ftml-norm", "2", "ftml/cml: distance norm p: 1, 2 or inf")
	fs.BoolVar(&d.squared, "ftml-squared", def.Squared, "ftml/cml: squared Euclidean distance in the loss (p = 2; the spec uses the plain norm)")
	fs.BoolVar(&d.ceUpdates, "ftml-ce-updates-embedding", def.CEUpdatesEmbedding, "ftml/cml: let cross-entropy train the embedding table too (spec: it does not)")
	fs.Float64Var(&d.tau, "cml-tau", def.CMLTau, "cml: temperature τ")
	d.bl.register(fs)
	d.fl.register(fs)
	d.gm.register(fs)
}

// check rejects defense flags given with a defense that does not use them.
func (d *defenseFlags) check(fs *flag.FlagSet) error {
	if _, err := defense.Lookup(d.name); err != nil {
		return usageError{fmt.Errorf("--defense: %v", err)}
	}
	var err error
	synonymsSet := false
	fs.Visit(func(f *flag.Flag) {
		shared := f.Name == "synonyms" || strings.HasPrefix(f.Name, "ftml-")
		synonymsSet = synonymsSet || f.Name == "synonyms"
		switch {
		case err != nil:
		case f.Name == "synonyms" && d.name == "standard" && (d.gm.groups > 0 || retrofitting(fs)):
			// the group mask's or the retrofit's neighbour graph
		case shared && d.name == "standard":
			err = usageError{fmt.Errorf("--%s needs --defense ftml or cml", f.Name)}
		case f.Name == "cml-tau" && d.name != "cml":
			err = usageError{fmt.Errorf("--cml-tau needs --defense cml")}
		case strings.HasPrefix(f.Name, "ftml-") && d.name != "ftml" && d.name != "cml":
			err = usageError{fmt.Errorf("--%s needs --defense ftml or cml", f.Name)}
		default:
			if err = d.bl.checkFlag(f.Name, d.name); err == nil {
				if err = d.fl.checkFlag(f.Name, d.name); err == nil {
					err = d.gm.checkFlag(f.Name, d.name)
				}
			}
		}
	})
	if err != nil {
		return err
	}
	if err := checkNumbers(d.numbers()...); err != nil {
		return err
	}
	if d.name == "ftml" || d.name == "cml" {
		if _, err := parseNorm(d.norm); err != nil {
			return err
		}
	}
	return d.gm.validate(synonymsSet)
}

// numbers are the range checks of the defense flags (every defense's: the
// values of those not given are their valid defaults).
func (d *defenseFlags) numbers() []numRule {
	r := []numRule{
		{finite(d.beta) && d.beta >= 0, "ftml-beta", d.beta, "a number ≥ 0"},
		{finite(d.alpha) && d.alpha >= 0, "ftml-alpha", d.alpha, "a number ≥ 0 (0 = 0.7·α0)"},
		{d.k >= 1 && d.k <= maxSynonymK, "ftml-k", d.k, fmt.Sprintf("in [1, %d]", maxSynonymK)},
		{finite(d.tau) && d.tau > 0, "cml-tau", d.tau, "a positive number"},
	}
	r = append(r, d.bl.numbers()...)
	r = append(r, d.fl.numbers()...)
	return append(r, d.gm.numbers()...)
}

func parseNorm(s string) (float64, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1":
		return 1, nil
	case "2":
		return 2, nil
	case "inf", "infinity", "max":
		return math.Inf(1), nil
	}
	return 0, usageError{fmt.Errorf("--ftml-norm %q: want 1, 2 or inf", s)}
}

// defaultSynonyms is the counter-fitted neighbour table under the data
// folder, which must be given (--data or TEXTARMOR_DATA).
func defaultSynonyms(dataDir string) (string, error) {
	dir, err := dataDirFor(dataDir, "the default synonym table (no --synonyms)")
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "counterfitted-neighbors-jia2019", "counterfitted_neighbors.json"), nil
}

// loadSynonyms reads the neighbour table and restricts it to vocab.
func loadSynonyms(path, dataDir string, vocab *text.Vocab, k int) (*defense.SynonymTable, string, error) {
	n, path, err := loadNeighborFile(path, dataDir)
	if err != nil {
		return nil, path, err
	}
	return defense.NewSynonymTable(n, vocab, k), path, nil
}

// loadNeighborFile reads the neighbour table at path (default: the
// counter-fitted neighbours under dataDir); it returns the path used.
func loadNeighborFile(path, dataDir string) (*lexicon.Neighbors, string, error) {
	if path == "" {
		var err error
		if path, err = defaultSynonyms(dataDir); err != nil {
			return nil, "", err
		}
	}
	if _, err := os.Stat(path); err != nil {
		return nil, path, fmt.Errorf("synonym table %s: %w (give one with --synonyms PATH, or --data DIR holding counterfitted-neighbors-jia2019/)", path, err)
	}
	n, err := lexicon.LoadNeighbors(path)
	if err != nil {
		return nil, path, err
	}
	return n, path, nil
}

// describeObjective records an objective's settings in the training
// record (info) and prints its one-line summary, for those that have them.
func describeObjective(obj train.Objective, info map[string]any, stderr io.Writer) {
	if in, ok := obj.(train.Recorded); ok {
		if settings := in.Info(); len(settings) > 0 {
			info[obj.Name()] = settings
		}
	}
	if sm, ok := obj.(interface{ Summary() string }); ok {
		fmt.Fprintln(stderr, sm.Summary())
	}
}

// objective builds the chosen training objective for m.
func (d *defenseFlags) objective(m *model.Model, dataDir string, stderr io.Writer) (train.Objective, error) {
	if d.name == "standard" {
		return train.Standard{ProbInputs: d.fl.probInputs}, nil
	}
	if isRounds(d.name) { // --synonyms feeds the attack, not the objective
		return d.fl.objective(d.name)
	}
	p, err := parseNorm(d.norm)
	if err != nil {
		return nil, err
	}
	s := defense.DefaultSettings()
	s.K, s.Norm, s.Squared, s.Alpha, s.Beta, s.CEUpdatesEmbedding, s.CMLTau = d.k, p, d.squared, d.alpha, d.beta, d.ceUpdates, d.tau
	if err := d.bl.fill(&s); err != nil {
		return nil, err
	}
	syn, path, err := loadSynonyms(d.synonyms, dataDir, m.Vocab, d.k)
	if err != nil {
		return nil, err
	}
	with, total := syn.Coverage()
	fmt.Fprintf(stderr, "synonyms: %d of %d vocabulary words (%.1f%%) have synonyms in %s\n",
		with, total, 100*float64(with)/float64(max(total, 1)), path)
	obj, err := defense.NewObjective(d.name, s, syn, m.Net.Emb.W.Value)
	if err != nil {
		return nil, usageError{err}
	}
	var cfg *defense.FTMLConfig
	switch o := obj.(type) {
	case *defense.FTML:
		cfg = &o.FTMLConfig
	case *defense.CML:
		cfg = &o.FTMLConfig
	}
	if cfg != nil {
		if cfg.Alpha0 > 0 {
			fmt.Fprintf(stderr, "%s: alpha0 = %.4f (mean word distance of the initial table), alpha = 0.7·alpha0 = %.4f; beta %g, k %d, norm %s\n",
				d.name, cfg.Alpha0, cfg.Alpha, cfg.Beta, cfg.K, d.norm)
		} else {
			fmt.Fprintf(stderr, "%s: alpha = %.4f (given); beta %g, k %d, norm %s\n", d.name, cfg.Alpha, cfg.Beta, cfg.K, d.norm)
		}
	}
	return obj, nil
}

// defenseList names the defenses, for --defense's help.
func defenseList() string {
	return strings.Join(defense.Names(), ", ") + " (flat: FLAT word masks with attack rounds; adv: attack rounds, cross-entropy)"
}

// recipeRules are the checks of the training flags a table recipe may set
// too (bench ftml-table --recipe-flags).
func recipeRules(opt train.Options) []numRule {
	return []numRule{
		{opt.Epochs >= 1, "epochs", opt.Epochs, "at least 1"},
		{opt.BatchSize >= 1, "batch", opt.BatchSize, "at least 1"},
		{finite(opt.LR) && opt.LR > 0, "lr", opt.LR, "a positive number"},
		{finite(opt.WeightDecay) && opt.WeightDecay >= 0, "weight-decay", opt.WeightDecay, "a number ≥ 0"},
		{finite(opt.Clip) && opt.Clip >= 0, "clip", opt.Clip, "a number ≥ 0 (0 = off)"},
	}
}

// parseDecayEpochs parses --lr-decay-epochs: comma-separated epochs ≥ 1.
func parseDecayEpochs(list string) ([]int, error) {
	var out []int
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s != "" {
			e, err := strconv.Atoi(s)
			if err != nil {
				return nil, usageError{fmt.Errorf("--lr-decay-epochs %q: %v", list, err)}
			}
			if e < 1 {
				return nil, usageError{fmt.Errorf("--lr-decay-epochs %q: epoch %d must be at least 1", list, e)}
			}
			out = append(out, e)
		}
	}
	return out, nil
}

// checkTrainNumbers rejects numeric train flags that make no sense (NaN,
// infinities, out of range) at parse time, instead of a panic later or a
// silent default: Options would read an explicit --epochs 0 as "the
// default".
func checkTrainNumbers(opt train.Options, nf netFlags, df dataFlags) error {
	if err := checkNumbers(append(recipeRules(opt),
		numRule{finite(opt.Momentum) && opt.Momentum >= 0 && opt.Momentum < 1, "momentum", opt.Momentum, "in [0, 1)"},
		numRule{finite(opt.DecayGamma) && opt.DecayGamma > 0, "lr-decay", opt.DecayGamma, "a positive number"},
		numRule{finite(opt.Warmup) && opt.Warmup >= 0 && opt.Warmup < 1, "warmup", opt.Warmup, "in [0, 1)"},
		numRule{opt.Patience >= 0, "patience", opt.Patience, "≥ 0 (0 = never stop early)"},
		numRule{opt.CheckpointEvery >= 0, "checkpoint-every", opt.CheckpointEvery, "≥ 0 (0 = at epoch ends only)"},
	)...); err != nil {
		return err
	}
	if err := nf.check(); err != nil {
		return err
	}
	return checkNumbers(df.numbers()...)
}
