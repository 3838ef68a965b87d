package pipeline

import (
	"fmt"
	"io"
	"path/filepath"
	"runtime"

	"github.com/textarmor/textarmor/attack"
	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/defense"
	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/train"
)

// RoundsConfig configures the attack-and-train rounds of flat and adv
// (FLAT spec §4): Options.Epochs clean epochs, then Rounds rounds that
// each attack PerRound training examples and train RoundEpochs epochs on
// the clean and adversarial texts.
type RoundsConfig struct {
	Attack string // textfooler or pwws, run with the FLAT protocol
	// Beta and Gamma weigh flat's mask entropy and importance-consistency
	// terms; Entropy says how the entropy combines tokens.
	Beta, Gamma float64
	Entropy     nn.EntropyReduction
	Rounds      int
	RoundEpochs int
	PerRound    int // examples attacked per round, without replacement (0 = all)
	Workers     int // examples attacked in parallel (results do not depend on it)
	// WordNet is the dict folder (pwws; textfooler's POS tagger), ""
	// = lexicon.DefaultWordNetDir(); Vectors are word vectors for
	// textfooler's nearest substitutes ("" = the neighbour table).
	WordNet, Vectors string
	// KeepRounds keeps each round's best-dev model as Out+".roundN".
	KeepRounds bool
	// Interrupt, when set, stops a round's attack as a kill would
	// (defense.JournalOptions.Interrupt; tests).
	Interrupt func(round, logged int) bool
}

// NewRoundsConfig returns the spec's rounds: textfooler, 4 rounds of 5
// epochs attacking every training example, on every core.
func NewRoundsConfig() RoundsConfig {
	return RoundsConfig{Attack: "textfooler", Beta: defense.DefaultFLATBeta, Gamma: defense.DefaultFLATGamma, Entropy: nn.EntropyMean,
		Rounds: 4, RoundEpochs: 5, Workers: runtime.NumCPU()}
}

// info is recorded in the model's training record.
func (r *RoundsConfig) info(cleanEpochs int) map[string]any {
	return map[string]any{"attack": r.Attack, "protocol": attack.ProtocolFLAT, "clean_epochs": cleanEpochs,
		"rounds": r.Rounds, "round_epochs": r.RoundEpochs, "adv_per_round": r.PerRound}
}

// roundsAttack builds the rounds' attack against m with the FLAT protocol
// and the recipe's own neighbourhood when Vectors are given.
func (c *TrainConfig) roundsAttack(rc attack.Recipe, m *model.Model, out string, log io.Writer) (*attack.Configured, error) {
	r := &c.Defense.Rounds
	wn := r.WordNet
	if wn == "" {
		wn = lexicon.DefaultWordNetDir()
	}
	need := rc.Needs(attack.ProtocolFLAT)
	return BuildRecipe(rc, attack.ProtocolFLAT, m, AttackResources{Synonyms: c.Defense.Synonyms, DataDir: c.Data.Dir, WordNet: wn,
		Vectors: r.Vectors, Nearest: NearestConfig{K: need.NearestK, Cos: need.NearestCos}, CacheDir: filepath.Dir(out), Log: log})
}

// runRounds builds the attacker and runs the rounds; opt.Epochs is the
// clean phase. The returned Result concatenates every phase's epochs
// (numbered 1.. over the whole run) with the best adversarial-phase epoch.
func (c *TrainConfig) runRounds(m *model.Model, obj train.Objective, trainSet, dev []dataset.Example, opt train.Options, log io.Writer) (*train.Result, error) {
	r, name := &c.Defense.Rounds, c.Defense.Name
	rc, err := attack.LookupRecipe(r.Attack)
	if err != nil {
		return nil, &ConfigError{err}
	}
	cfg, err := c.roundsAttack(rc, m, opt.Out, log)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "%s: attack %s (protocol flat): %s\n", name, cfg.Recipe, cfg.Description)
	for _, d := range cfg.Deviations {
		fmt.Fprintf(log, "deviation: %s\n", d)
	}
	atk := defense.JournaledAttacker(cfg.Attack, defense.JournalOptions{Out: opt.Out, Resume: opt.Resume, Seed: opt.Seed,
		Workers: r.Workers, Progress: opt.Progress, Log: log, Interrupt: r.Interrupt})
	opt.Info["adversarial_rounds"] = r.info(opt.Epochs)
	opt.Info["adversarial_attack"] = cfg.Description
	opt.Info["adversarial_deviations"] = append([]string(nil), cfg.Deviations...)
	res, err := defense.AdversarialRounds(m, obj, trainSet, dev, atk, defense.RoundsOptions{
		CleanEpochs: opt.Epochs, Rounds: r.Rounds, RoundEpochs: r.RoundEpochs, PerRound: r.PerRound,
		Train: opt, Log: log, KeepRounds: r.KeepRounds,
	})
	if err != nil {
		return nil, err
	}
	defense.RemoveRoundJournals(opt.Out, r.Rounds)
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
