package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/textarmor/textarmor/pipeline"
)

// flatFlags configure `train --defense flat|adv`: FLAT's attack-and-train
// rounds (spec flat.md §4) with the FLAT objective or plain cross-entropy.
// The rounds' settings go straight into a pipeline.RoundsConfig.
type flatFlags struct{ entropy string }

// flatOnly are the flags only flat and adv take (flat-*: flat only).
var flatOnly = []string{"round-attack", "flat-beta", "flat-gamma", "flat-entropy-reduction", "rounds", "round-epochs", "round-examples",
	"round-workers", "round-keep", "wordnet", "vectors"}

// renamedFlags are the rounds' flags as they were called before they took
// the flat- and round- prefixes; the old names still work, with a note.
var renamedFlags = map[string]string{"attack": "round-attack", "beta": "flat-beta", "gamma": "flat-gamma",
	"entropy-reduction": "flat-entropy-reduction", "adv-per-round": "round-examples", "attack-workers": "round-workers",
	"keep-rounds": "round-keep"}

// canonicalFlag is a train flag's current name.
func canonicalFlag(name string) string {
	if n, ok := renamedFlags[name]; ok {
		return n
	}
	return name
}

func (f *flatFlags) register(fs *flag.FlagSet, r *pipeline.RoundsConfig, probInputs *bool) {
	d := pipeline.NewRoundsConfig()
	fs.StringVar(&r.Attack, "round-attack", d.Attack, "flat/adv: attack that builds each round's adversarial examples: textfooler or pwws (run with --protocol flat)")
	fs.Float64Var(&r.Beta, "flat-beta", d.Beta, "flat: weight β of the mask entropy term")
	fs.Float64Var(&r.Gamma, "flat-gamma", d.Gamma, "flat: weight γ of the importance-consistency term L_imp")
	fs.StringVar(&f.entropy, "flat-entropy-reduction", string(d.Entropy), "flat: how L_ent combines tokens: mean (over real tokens, spec), mean-padded (padding included, reference code) or sum (per text, the paper's H); retune --flat-beta with it")
	fs.IntVar(&r.Rounds, "rounds", d.Rounds, "flat/adv: attack-and-train rounds after the --epochs clean epochs")
	fs.IntVar(&r.RoundEpochs, "round-epochs", d.RoundEpochs, "flat/adv: training epochs per round")
	fs.IntVar(&r.PerRound, "round-examples", 0, "flat/adv: training examples attacked per round, drawn without replacement (0 = all; spec: all for SST-2/TREC, 10000 for IMDB/AG)")
	fs.IntVar(&r.Workers, "round-workers", d.Workers, "flat/adv: examples attacked in parallel (results do not depend on it)")
	fs.StringVar(&r.WordNet, "wordnet", "", "flat/adv: WordNet dict directory (pwws; textfooler's POS tagger) (default: the attack command's)")
	fs.BoolVar(&r.KeepRounds, "round-keep", false, "flat/adv: also keep each round's best-dev model as OUT.roundN")
	fs.BoolVar(probInputs, "prob-inputs-to-ce", false, "standard/adv/flat: feed softmax probabilities, not logits, to the cross-entropy (a double softmax), as the FLAT reference code's CNN and LSTM do (spec F9; off: CE on logits, the spec's choice)")
	for old, name := range renamedFlags {
		fs.Var(fs.Lookup(name).Value, old, "") // no usage: left out of --help
	}
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
		if strings.HasPrefix(n, "flat-") && defenseName != "flat" {
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
