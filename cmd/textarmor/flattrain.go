package main

import (
	"flag"
	"fmt"

	"github.com/textarmor/textarmor/pipeline"
)

// flatFlags configure `train --defense flat|adv`: FLAT's attack-and-train
// rounds (spec flat.md §4) with the FLAT objective or plain cross-entropy.
// The rounds' settings go straight into a pipeline.RoundsConfig.
type flatFlags struct{ entropy string }

// flatOnly are the flags only flat and adv take (beta and gamma: flat only).
var flatOnly = []string{"attack", "beta", "gamma", "entropy-reduction", "rounds", "round-epochs", "adv-per-round", "attack-workers", "wordnet", "vectors", "keep-rounds"}

func (f *flatFlags) register(fs *flag.FlagSet, r *pipeline.RoundsConfig, probInputs *bool) {
	d := pipeline.NewRoundsConfig()
	fs.StringVar(&r.Attack, "attack", d.Attack, "flat/adv: attack that builds each round's adversarial examples: textfooler or pwws (run with --protocol flat)")
	fs.Float64Var(&r.Beta, "beta", d.Beta, "flat: weight β of the mask entropy term")
	fs.Float64Var(&r.Gamma, "gamma", d.Gamma, "flat: weight γ of the importance-consistency term L_imp")
	fs.StringVar(&f.entropy, "entropy-reduction", string(d.Entropy), "flat: how L_ent combines tokens: mean (over real tokens, spec), mean-padded (padding included, reference code) or sum (per text, the paper's H); retune --beta with it")
	fs.IntVar(&r.Rounds, "rounds", d.Rounds, "flat/adv: attack-and-train rounds after the --epochs clean epochs")
	fs.IntVar(&r.RoundEpochs, "round-epochs", d.RoundEpochs, "flat/adv: training epochs per round")
	fs.IntVar(&r.PerRound, "adv-per-round", 0, "flat/adv: training examples attacked per round, drawn without replacement (0 = all; spec: all for SST-2/TREC, 10000 for IMDB/AG)")
	fs.IntVar(&r.Workers, "attack-workers", d.Workers, "flat/adv: examples attacked in parallel (results do not depend on it)")
	fs.StringVar(&r.WordNet, "wordnet", "", "flat/adv: WordNet dict directory (pwws; textfooler's POS tagger) (default: the attack command's)")
	fs.BoolVar(&r.KeepRounds, "keep-rounds", false, "flat/adv: also keep each round's best-dev model as OUT.roundN")
	fs.BoolVar(probInputs, "prob-inputs-to-ce", false, "standard/adv/flat: feed softmax probabilities, not logits, to the cross-entropy (a double softmax), as the FLAT reference code's CNN and LSTM do (spec F9; off: CE on logits, the spec's choice)")
	fs.StringVar(&r.Vectors, "vectors", "", "flat/adv: word vectors for textfooler (50 nearest with cosine ≥ 0.5 and the embedding check), as in \"attack --vectors\"")
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
// kill would (pipeline.RoundsConfig.Interrupt).
var roundAttackStop func(round, logged int) bool
