package pipeline

import (
	"fmt"
	"math"
	"runtime"

	"github.com/textarmor/textarmor/defense"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/train"
)

// maxSynonymK bounds Settings.K (--ftml-k): each batch allocates anchors ×
// k ids.
const maxSynonymK = 1000

// widthRule checks a layer width or embedding size in [lo, maxLayerWidth];
// lo is 0 where 0 means "no such layer" (none says so).
func widthRule(flag string, v, lo int, none string) Rule {
	want := fmt.Sprintf("in [%d, %d]", lo, maxLayerWidth)
	if none != "" {
		want += " (" + none + ")"
	}
	return Rule{v >= lo && v <= maxLayerWidth, flag, v, want}
}

// workersRule checks a count of parallel workers (goroutines, each with its
// own buffers): at least 1, at most 4,096 or the machine's core count.
func workersRule(flag string, v int) Rule {
	hi := max(4096, runtime.NumCPU())
	return Rule{v >= 1 && v <= hi, flag, v, fmt.Sprintf("in [1, %d]", hi)}
}

// Check refuses a configuration Train cannot run, before any data is read:
// a value out of range, an unknown name, settings that exclude each other.
// Errors are *ConfigError naming the CLI flag.
func (c *TrainConfig) Check() error {
	if err := c.Defense.Check(); err != nil {
		return err
	}
	if err := CheckTrainOptions(c.Options); err != nil {
		return err
	}
	if err := c.Net.Check(); err != nil {
		return err
	}
	if err := CheckRules(
		Rule{c.Retrofit >= 0, "retrofit", c.Retrofit, "≥ 0 (0 = off)"},
		Rule{c.TrainN >= 0, "train-n", c.TrainN, "≥ 0 (0 = all)"},
		Rule{c.EmbedLRScale >= 0 && c.EmbedLRScale <= 1e6, "embed-lr-scale", c.EmbedLRScale, "in [0, 1e6] (0 or 1 = none)"},
	); err != nil {
		return err
	}
	if c.EmbedLRScale > 0 && c.EmbedLRScale != 1 && c.Options.Optimizer == "sgd" {
		return configErrorf("--embed-lr-scale needs --optimizer adam or adamw")
	}
	if err := c.Data.Check(); err != nil {
		return err
	}
	if c.Options.Out == "" {
		return configErrorf("--out is required")
	}
	if c.FineTune.Init != "" {
		if c.InitLM != "" {
			return configErrorf("give either --init (a transformer) or --init-lm (an LSTM language model), not both")
		}
		return c.checkFineTune()
	}
	if c.InitLM != "" {
		for _, s := range []struct {
			flag string
			set  bool
		}{{"embeddings", c.Embeddings != ""}, {"embeddings-from", c.EmbeddingsFrom != ""}, {"retrofit", c.Retrofit > 0}} {
			if s.set {
				return configErrorf("--%s does not apply with --init-lm (the language model sets the vocabulary and the embeddings)", s.flag)
			}
		}
		if c.Net.Arch != "lstm" {
			return configErrorf("--init-lm needs --model lstm (the language model's unidirectional LSTM), not %q", c.Net.Arch)
		}
		if c.Dataset == nil && (c.Data.MinCount != 0 || c.Data.MaxVocab != -1) {
			return configErrorf("--min-count/--max-vocab cannot be used with --init-lm: the vocabulary is the language model's")
		}
	}
	switch {
	case c.FineTune.FreezeEncoder:
		return configErrorf("--freeze-encoder needs --init")
	case c.FineTune.VocabSupplement < -1:
		return configErrorf("--vocab-supplement %d: want a number of words ≥ 0 (or -1, the defense's default)", c.FineTune.VocabSupplement)
	case c.FineTune.VocabSupplement > 0:
		return configErrorf("--vocab-supplement needs --init (a transformer)")
	case c.EmbeddingsFrom == "":
	case c.Embeddings != "":
		return configErrorf("give either --embeddings or --embeddings-from, not both")
	case c.Dataset == nil && (c.Data.MinCount != 0 || c.Data.MaxVocab != -1):
		return configErrorf("--min-count/--max-vocab cannot be used with --embeddings-from: the vocabulary is the source model's")
	case c.Retrofit > 0:
		return configErrorf("--retrofit and --embeddings-from exclude each other (the copied table is used as it is)")
	}
	return nil
}

// checkFineTune refuses what --init cannot take.
func (c *TrainConfig) checkFineTune() error {
	for _, s := range []struct {
		flag string
		set  bool
	}{{"embeddings", c.Embeddings != ""}, {"embeddings-from", c.EmbeddingsFrom != ""}, {"retrofit", c.Retrofit > 0}} {
		if s.set {
			return configErrorf("--%s does not apply with --init (the checkpoint sets the network and its vocabulary)", s.flag)
		}
	}
	if c.Net.Arch != "transformer" {
		return configErrorf("--init needs --model transformer, not %q", c.Net.Arch)
	}
	switch d, _ := defense.Lookup(c.Defense.Name); {
	case c.Defense.Name == "atfl" || c.Defense.Name == "ibp":
		return configErrorf("--defense %s does not apply to transformers (FTML spec §13: CNN and LSTM only)", c.Defense.Name)
	case c.Defense.Name != "standard" && c.Defense.Name != "adv" && c.Defense.Name != "flat" && !d.Embedding && !d.Synonyms:
		return configErrorf("--defense %s is not available for transformers yet", c.Defense.Name)
	case c.FineTune.VocabSupplement < -1:
		return configErrorf("--vocab-supplement %d: want a number of words ≥ 0 (or -1, the defense's default)", c.FineTune.VocabSupplement)
	case c.FineTune.VocabSupplement == 0 && d.Synonyms:
		return configErrorf("--defense %s on a transformer needs a dictionary: --vocab-supplement must be positive", c.Defense.Name)
	}
	return nil
}

// CheckTrainOptions checks the training settings: counts and rates in
// range (an explicit 0 epochs must not become train's default 10), and
// names train.Run knows.
func CheckTrainOptions(opt train.Options) error {
	if err := CheckRules(
		Rule{opt.Epochs >= 1, "epochs", opt.Epochs, "at least 1"},
		Rule{opt.BatchSize >= 1, "batch", opt.BatchSize, "at least 1"},
		Rule{isFinite(opt.LR) && opt.LR > 0, "lr", opt.LR, "a positive number"},
		Rule{isFinite(opt.WeightDecay) && opt.WeightDecay >= 0, "weight-decay", opt.WeightDecay, "a number ≥ 0"},
		Rule{isFinite(opt.Clip) && opt.Clip >= 0, "clip", opt.Clip, "a number ≥ 0 (0 = off)"},
		Rule{isFinite(opt.Momentum) && opt.Momentum >= 0 && opt.Momentum < 1, "momentum", opt.Momentum, "in [0, 1)"},
		Rule{isFinite(opt.DecayGamma) && opt.DecayGamma > 0, "lr-decay", opt.DecayGamma, "a positive number"},
		Rule{isFinite(opt.Warmup) && opt.Warmup >= 0 && opt.Warmup < 1, "warmup", opt.Warmup, "in [0, 1)"},
		Rule{opt.Patience >= 0, "patience", opt.Patience, "≥ 0 (0 = never stop early)"},
		Rule{opt.CheckpointEvery >= 0, "checkpoint-every", opt.CheckpointEvery, "≥ 0 (0 = at epoch ends only)"},
	); err != nil {
		return err
	}
	for _, e := range opt.DecayEpochs {
		if e < 1 {
			return configErrorf("--lr-decay-epochs %q: epoch %d must be at least 1", joinInts(opt.DecayEpochs), e)
		}
	}
	switch {
	case opt.Optimizer != "adam" && opt.Optimizer != "adamw" && opt.Optimizer != "sgd":
		return configErrorf("--optimizer %q: want adam, adamw or sgd", opt.Optimizer)
	case opt.Schedule != "" && opt.Schedule != "linear":
		return configErrorf("--schedule %q: want linear or none", opt.Schedule)
	case opt.Warmup > 0 && opt.Schedule == "":
		return configErrorf("--warmup %g needs --schedule linear", opt.Warmup)
	case opt.Schedule != "" && len(opt.DecayEpochs) > 0:
		return configErrorf("--schedule %s and --lr-decay-epochs %s both set the learning rate: pick one", opt.Schedule, joinInts(opt.DecayEpochs))
	}
	return nil
}

// Check validates the defense's name and every defense's settings (those
// of the defenses not used too: their defaults are valid).
func (d *DefenseConfig) Check() error {
	def, err := defense.Lookup(d.Name)
	if err != nil {
		return configErrorf("--defense: %v", err)
	}
	s, r := d.Settings, d.Rounds
	if err := CheckRules(
		Rule{isFinite(s.Beta) && s.Beta >= 0, "ftml-beta", s.Beta, "a number ≥ 0"},
		Rule{isFinite(s.Alpha) && s.Alpha >= 0, "ftml-alpha", s.Alpha, "a number ≥ 0 (0 = 0.7·α0)"},
		Rule{s.K >= 1 && s.K <= maxSynonymK, "ftml-k", s.K, fmt.Sprintf("in [1, %d]", maxSynonymK)},
		Rule{isFinite(s.CMLTau) && s.CMLTau > 0, "cml-tau", s.CMLTau, "a positive number"},
		Rule{s.SEMK >= 0, "sem-k", s.SEMK, "≥ 0 (0 = all of the table)"},
		Rule{s.ATFLSteps >= 0, "atfl-steps", s.ATFLSteps, "≥ 0 (0 = no substitution)"},
		Rule{s.ASCCSteps >= 0, "ascc-steps", s.ASCCSteps, "≥ 0 (0 = no inner maximisation)"},
		Rule{isFinite(s.ASCCLR) && s.ASCCLR > 0, "ascc-lr", s.ASCCLR, "a positive number"},
		Rule{isFinite(s.ASCCEntropy) && s.ASCCEntropy >= 0, "ascc-entropy", s.ASCCEntropy, "a number ≥ 0"},
		Rule{isFinite(s.ASCCBeta) && s.ASCCBeta >= 0, "ascc-beta", s.ASCCBeta, "a number ≥ 0"},
		Rule{isFinite(s.IBPKappa) && s.IBPKappa >= 0 && s.IBPKappa <= 1, "ibp-kappa", s.IBPKappa, "in [0, 1]"},
		Rule{isFinite(s.IBPEps) && s.IBPEps >= 0, "ibp-eps", s.IBPEps, "a number ≥ 0"},
		Rule{d.IBPRampEpochs >= -1, "ibp-ramp-epochs", d.IBPRampEpochs, "≥ 0 (-1, the default, = the first 2/3 of --epochs)"},
		Rule{isFinite(r.Beta) && r.Beta >= 0, "flat-beta", r.Beta, "a number ≥ 0"},
		Rule{isFinite(r.Gamma) && r.Gamma >= 0, "flat-gamma", r.Gamma, "a number ≥ 0"},
		Rule{r.Rounds >= 1, "rounds", r.Rounds, "at least 1"},
		Rule{r.RoundEpochs >= 1, "round-epochs", r.RoundEpochs, "at least 1"},
		Rule{r.PerRound >= 0, "round-examples", r.PerRound, "≥ 0 (0 = all)"},
		workersRule("round-workers", r.Workers),
		Rule{d.GroupMask.Groups >= 0 && d.GroupMask.Groups <= maxGroups, "group-mask", d.GroupMask.Groups, fmt.Sprintf("in [0, %d] (0 = off)", maxGroups)},
	); err != nil {
		return err
	}
	if err := checkAdvText(s); err != nil {
		return err
	}
	if def.Synonyms && s.Norm != 1 && s.Norm != 2 && !math.IsInf(s.Norm, 1) {
		return configErrorf("--ftml-norm %v: want 1, 2 or inf", s.Norm)
	}
	switch {
	case d.GroupMask.Groups == 0 && d.GroupMask.Vectors != "":
		return configErrorf("--group-vectors needs --group-mask G")
	case d.GroupMask.Vectors != "" && d.Synonyms != "":
		return configErrorf("give --group-vectors (k-means) or --synonyms (neighbour-graph components), not both")
	case d.GroupMask.Groups > 0 && d.Name != "standard":
		return configErrorf("--group-mask needs --defense standard (the group-mask baseline trains with cross-entropy)")
	case d.ProbInputs && d.Name != "standard" && d.Name != "adv" && d.Name != "flat":
		return configErrorf("--prob-inputs-to-ce needs --defense standard, adv or flat (the FLAT reference's objectives)")
	}
	if _, err := defense.ParseHull(string(s.IBPHull)); err != nil {
		return configErrorf("--ibp-hull: %v", err)
	}
	if _, err := nn.ParseEntropyReduction(string(r.Entropy)); err != nil {
		return configErrorf("--flat-entropy-reduction: %w", err)
	}
	if _, _, err := d.freeLB("sst2"); err != nil {
		return err
	}
	if def.Synonyms { // what defense.NewObjective will check, should a rule above be missing
		s.FreeLB, _, _ = d.freeLB("sst2")
		if err := s.Validate(); err != nil {
			return &ConfigError{err}
		}
	}
	if def.Rounds && r.Attack != "textfooler" && r.Attack != "pwws" {
		return configErrorf("--round-attack %q: want textfooler or pwws", r.Attack)
	}
	return nil
}

// checkAdvText checks the embedding-space methods' settings, naming their
// flags.
func checkAdvText(s defense.Settings) error {
	var rules []Rule
	for _, c := range []struct {
		prefix string
		cfg    defense.AdvTextConfig
	}{{"advt-", s.AdvT}, {"iadvt-", s.IAdvT}, {"spgd-", s.SPGD}, {"fgm-", s.FGM}, {"pgd-", s.PGD}} {
		p, x := c.prefix, c.cfg
		rules = append(rules, Rule{isFinite(x.Eps) && x.Eps > 0, p + "eps", x.Eps, "a positive number"},
			Rule{isFinite(x.Lambda) && x.Lambda >= 0, p + "lambda", x.Lambda, "a number ≥ 0"})
		if p == "pgd-" {
			rules = append(rules, Rule{x.Steps >= 1 && x.Steps <= 100, p + "steps", x.Steps, "in [1, 100]"},
				Rule{isFinite(x.Step) && x.Step >= 0, p + "step", x.Step, "≥ 0 (0 = 2.5·ε/steps)"})
		}
		if p == "iadvt-" || p == "spgd-" {
			rules = append(rules, Rule{x.K >= 1 && x.K <= 1000, p + "k", x.K, "in [1, 1000]"},
				Rule{x.Refresh >= 1, p + "refresh", x.Refresh, "at least 1"})
		}
		if p == "spgd-" {
			rules = append(rules, Rule{isFinite(x.Sigma) && x.Sigma >= 0 && x.Sigma < 1, p + "sigma", x.Sigma, "in [0, 1)"},
				Rule{x.Steps >= 1 && x.Steps <= 100, p + "steps", x.Steps, "in [1, 100]"})
		}
	}
	f := s.FreeLB
	c := s.CARL
	rules = append(rules, Rule{f.N == -1 || f.N >= 1 && f.N <= 100, "freelb-n", f.N, "in [1, 100] (-1 = the row's)"},
		Rule{isFinite(f.Alpha) && (f.Alpha > 0 || f.Alpha == -1), "freelb-alpha", f.Alpha, "a positive number (-1 = the row's)"},
		Rule{isFinite(f.Gamma) && (f.Gamma >= 0 || f.Gamma == -1), "freelb-gamma", f.Gamma, "≥ 0 (0 = start at zero; -1 = the row's)"},
		Rule{isFinite(f.Eps) && (f.Eps >= 0 || f.Eps == -1), "freelb-eps", f.Eps, "≥ 0 (0 = no bound; -1 = the row's)"},
		Rule{isFinite(c.Tau) && c.Tau > 0, "carl-tau", c.Tau, "a positive number"},
		Rule{isFinite(c.Momentum) && c.Momentum >= 0 && c.Momentum < 1, "carl-momentum", c.Momentum, "in [0, 1)"},
		Rule{isFinite(c.Weight) && c.Weight >= 0, "carl-weight", c.Weight, "≥ 0"},
		Rule{c.Negatives >= 0, "carl-negatives", c.Negatives, "≥ 0 (0 = scaled with the training set)"},
		Rule{c.StartEpoch >= 1 || c.StartStep > 0, "carl-start-epoch", c.StartEpoch, "at least 1 (the banks fill during the epoch before)"},
		Rule{c.StartStep >= 0, "carl-start-step", c.StartStep, "≥ 0 (0 = --carl-start-epoch)"},
		Rule{isFinite(s.RAR.Weight) && s.RAR.Weight >= 0, "rar-weight", s.RAR.Weight, "≥ 0"},
		Rule{c.Contrast == defense.CARLNCE || c.Contrast == defense.CARLInfoNCE, "carl-loss", c.Contrast, "nce or infonce"})
	return CheckRules(rules...)
}
