package main

import (
	"flag"
	"fmt"
	"io"
	"runtime"

	"github.com/textarmor/textarmor/attack"
	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/defense"
	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/train"
)

// flatFlags configure `train --defense flat|adv`: FLAT's attack-and-train
// rounds (spec flat.md §4) with the FLAT objective or plain cross-entropy.
type flatFlags struct {
	attack                     string
	beta, gamma                float64
	entropy                    string
	rounds, roundEpochs, perRd int
	workers                    int
	wordnet, vectors           string
	keepRounds                 bool
	probInputs                 bool
}

// flatOnly are the flags only flat and adv take (beta and gamma: flat only).
var flatOnly = []string{"attack", "beta", "gamma", "entropy-reduction", "rounds", "round-epochs", "adv-per-round", "attack-workers", "wordnet", "vectors", "keep-rounds"}

func (f *flatFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.attack, "attack", "textfooler", "flat/adv: attack that builds each round's adversarial examples: textfooler or pwws (run with --protocol flat)")
	fs.Float64Var(&f.beta, "beta", defense.DefaultFLATBeta, "flat: weight β of the mask entropy term")
	fs.Float64Var(&f.gamma, "gamma", defense.DefaultFLATGamma, "flat: weight γ of the importance-consistency term L_imp")
	fs.StringVar(&f.entropy, "entropy-reduction", string(nn.EntropyMean), "flat: how L_ent combines tokens: mean (over real tokens, spec), mean-padded (padding included, reference code) or sum (per text, the paper's H); retune --beta with it")
	fs.IntVar(&f.rounds, "rounds", 4, "flat/adv: attack-and-train rounds after the --epochs clean epochs")
	fs.IntVar(&f.roundEpochs, "round-epochs", 5, "flat/adv: training epochs per round")
	fs.IntVar(&f.perRd, "adv-per-round", 0, "flat/adv: training examples attacked per round, drawn without replacement (0 = all; spec: all for SST-2/TREC, 10000 for IMDB/AG)")
	fs.IntVar(&f.workers, "attack-workers", runtime.NumCPU(), "flat/adv: examples attacked in parallel (results do not depend on it)")
	fs.StringVar(&f.wordnet, "wordnet", "", "flat/adv: WordNet dict directory (pwws; textfooler's POS tagger) (default: the attack command's)")
	fs.BoolVar(&f.keepRounds, "keep-rounds", false, "flat/adv: also keep each round's best-dev model as OUT.roundN")
	fs.BoolVar(&f.probInputs, "prob-inputs-to-ce", false, "standard/adv/flat: feed softmax probabilities, not logits, to the cross-entropy (a double softmax), as the FLAT reference code's CNN and LSTM do (spec F9; off: CE on logits, the spec's choice)")
	fs.StringVar(&f.vectors, "vectors", "", "flat/adv: word vectors for textfooler (50 nearest with cosine ≥ 0.5 and the embedding check), as in \"attack --vectors\"")
}

// numbers are the range checks of the flat/adv flags.
func (f *flatFlags) numbers() []numRule {
	return []numRule{
		{finite(f.beta) && f.beta >= 0, "beta", f.beta, "a number ≥ 0"},
		{finite(f.gamma) && f.gamma >= 0, "gamma", f.gamma, "a number ≥ 0"},
		{f.rounds >= 1, "rounds", f.rounds, "at least 1"},
		{f.roundEpochs >= 1, "round-epochs", f.roundEpochs, "at least 1"},
		{f.perRd >= 0, "adv-per-round", f.perRd, "≥ 0 (0 = all)"},
		workersRule("attack-workers", f.workers),
	}
}

// checkFlag reports a flat/adv flag given with another defense.
func (f *flatFlags) checkFlag(name, defenseName string) error {
	if name == "prob-inputs-to-ce" && defenseName != "standard" && defenseName != "adv" && defenseName != "flat" {
		return usageError{fmt.Errorf("--prob-inputs-to-ce needs --defense standard, adv or flat (the FLAT reference's objectives)")}
	}
	for _, n := range flatOnly {
		if name != n {
			continue
		}
		if (n == "beta" || n == "gamma" || n == "entropy-reduction") && defenseName != "flat" {
			return usageError{fmt.Errorf("--%s needs --defense flat", name)}
		}
		if defenseName != "flat" && defenseName != "adv" {
			return usageError{fmt.Errorf("--%s needs --defense flat or adv", name)}
		}
	}
	return nil
}

// roundAttackStop, when set (tests), interrupts a round's attack as a
// kill would (defense.JournalOptions.Interrupt).
var roundAttackStop func(round, logged int) bool

// isRounds reports whether a defense trains with attack rounds.
func isRounds(name string) bool { return name == "flat" || name == "adv" }

// checkAttack refuses an --attack the rounds cannot run (the numbers are
// checked with the other flags, numbers).
func (f *flatFlags) checkAttack() error {
	if f.attack != "textfooler" && f.attack != "pwws" {
		return usageError{fmt.Errorf("--attack %q: want textfooler or pwws", f.attack)}
	}
	return nil
}

// prepare checks --attack, sets the model config (flat: word mask) and the
// spec's learning rate when --lr was not given.
func (f *flatFlags) prepare(fs *flag.FlagSet, name string, cfg *nn.Config, opt *train.Options, stderr io.Writer) error {
	if !isRounds(name) {
		return nil
	}
	if err := f.checkAttack(); err != nil {
		return err
	}
	lrSet := false
	fs.Visit(func(fl *flag.Flag) { lrSet = lrSet || fl.Name == "lr" })
	if d, err := defense.Lookup(name); err == nil && d.LR > 0 && !lrSet {
		opt.LR = d.LR
		fmt.Fprintf(stderr, "%s: learning rate %g (FLAT spec §5; give --lr to change it)\n", name, opt.LR)
	}
	if name == "flat" {
		cfg.Mask = true
	}
	return nil
}

// objective is FLAT's loss or plain cross-entropy (the -adv baseline).
func (f *flatFlags) objective(name string) (train.Objective, error) {
	if name == "adv" {
		return train.Standard{ProbInputs: f.probInputs}, nil
	}
	o, err := defense.NewFLAT(f.beta, f.gamma)
	if err != nil {
		return nil, usageError{err}
	}
	o.ProbInputs = f.probInputs
	if o.Entropy, err = nn.ParseEntropyReduction(f.entropy); err != nil {
		return nil, usageError{fmt.Errorf("--entropy-reduction: %w", err)}
	}
	return o, nil
}

// info is recorded in the model's training record.
func (f *flatFlags) info(cleanEpochs int) map[string]any {
	return map[string]any{"attack": f.attack, "protocol": attack.ProtocolFLAT, "clean_epochs": cleanEpochs,
		"rounds": f.rounds, "round_epochs": f.roundEpochs, "adv_per_round": f.perRd}
}

// run builds the attacker and runs the rounds; opt.Epochs is the clean
// phase. The returned Result concatenates every phase's epochs (numbered
// 1.. over the whole run) with the best adversarial-phase epoch.
func (f *flatFlags) run(name string, m *model.Model, obj train.Objective, trainSet, dev []dataset.Example, opt train.Options,
	synPath, dataDir string, stderr io.Writer) (*train.Result, error) {
	rc, err := attack.LookupRecipe(f.attack)
	if err != nil {
		return nil, usageError{err}
	}
	wn := f.wordnet
	if wn == "" {
		wn = lexicon.DefaultWordNetDir()
	}
	need := rc.Needs(attack.ProtocolFLAT) // the recipe's own neighbourhood with --vectors
	nf := nearestFlags{k: need.NearestK, cos: need.NearestCos}
	cfg, err := attackSetup(rc, attack.ProtocolFLAT, m, attackInputs{synPath: synPath, dataDir: dataDir, wnDir: wn, vecPath: f.vectors,
		nf: nf, cacheDir: nearestCacheDir(opt.Out)}, stderr)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(stderr, "%s: attack %s (protocol flat): %s\n", name, cfg.Recipe, cfg.Description)
	for _, d := range cfg.Deviations {
		fmt.Fprintf(stderr, "deviation: %s\n", d)
	}
	atk := defense.JournaledAttacker(cfg.Attack, defense.JournalOptions{Out: opt.Out, Resume: opt.Resume, Seed: opt.Seed,
		Workers: f.workers, Progress: opt.Progress, Log: stderr, Interrupt: roundAttackStop})
	deviations := append([]string(nil), cfg.Deviations...)
	opt.Info["adversarial_rounds"] = f.info(opt.Epochs)
	opt.Info["adversarial_attack"] = cfg.Description
	opt.Info["adversarial_deviations"] = deviations
	res, err := defense.AdversarialRounds(m, obj, trainSet, dev, atk, defense.RoundsOptions{
		CleanEpochs: opt.Epochs, Rounds: f.rounds, RoundEpochs: f.roundEpochs, PerRound: f.perRd,
		Train: opt, Log: stderr, KeepRounds: f.keepRounds,
	})
	if err != nil {
		return nil, err
	}
	defense.RemoveRoundJournals(opt.Out, f.rounds)
	// Record the rounds in the saved (best-dev) model.
	best, err := model.Load(opt.Out)
	if err != nil {
		return nil, err
	}
	if best.Training == nil {
		best.Training = map[string]any{}
	}
	best.Training["objective"] = obj.Name()
	best.Training["defense"] = name
	best.Training["round_stats"] = res.Rounds
	best.Training["best_round"] = res.BestRound
	best.Training["substitution_counts"] = res.Substitutions
	if err := best.Save(opt.Out); err != nil {
		return nil, err
	}
	out := &train.Result{BestDevAcc: res.BestDevAcc}
	add := func(r *train.Result, best bool) {
		if r == nil {
			return
		}
		for _, e := range r.Epochs {
			e.Best = best && e.Epoch == r.BestEpoch
			e.Epoch = len(out.Epochs) + 1
			if e.Best {
				out.BestEpoch = e.Epoch
			}
			out.Epochs = append(out.Epochs, e)
		}
	}
	add(res.Clean, res.BestRound < 0)
	for i, r := range res.RoundRuns {
		add(r, i+1 == res.BestRound)
	}
	return out, nil
}
