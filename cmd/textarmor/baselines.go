package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/textarmor/textarmor/defense"
	"github.com/textarmor/textarmor/pipeline"
)

// baselineFlags are the hyper-parameters of the SEM, ATFL, ASCC and IBP
// baselines (spec §13 defaults): those given as numbers go straight into
// defense.Settings; the hull's name and the ramp are kept here.
type baselineFlags struct {
	ibpHull string
	ibpRamp int
}

func (b *baselineFlags) register(fs *flag.FlagSet, s *defense.Settings) {
	def := defense.DefaultSettings()
	fs.IntVar(&s.SEMK, "sem-k", def.SEMK, "sem: build the clusters from each word's N nearest synonyms (the SEM paper's 4, which the FTML paper's reproduction kept; 0 = all of the table)")
	fs.IntVar(&s.ATFLSteps, "atfl-steps", def.ATFLSteps, "atfl: N_max, the most FGPM substitutions per text (spec: 30/40/50 by dataset length)")
	fs.IntVar(&s.ASCCSteps, "ascc-steps", def.ASCCSteps, "ascc: inner maximisation steps")
	fs.Float64Var(&s.ASCCLR, "ascc-lr", def.ASCCLR, "ascc: inner Adam learning rate")
	fs.Float64Var(&s.ASCCEntropy, "ascc-entropy", def.ASCCEntropy, "ascc: weight of the entropy (sparsity) penalty")
	fs.Float64Var(&s.ASCCBeta, "ascc-beta", def.ASCCBeta, "ascc: weight of KL(f(x) || f(adv)) in the loss")
	fs.Float64Var(&s.IBPKappa, "ibp-kappa", def.IBPKappa, "ibp: final weight κ of the worst-case cross-entropy")
	fs.Float64Var(&s.IBPEps, "ibp-eps", def.IBPEps, "ibp: final scale ε of the synonym boxes")
	fs.StringVar(&b.ibpHull, "ibp-hull", string(def.IBPHull), "ibp: where each word's synonym box is taken: embedding (the spec's box in embedding space) or projected (after the encoder's first linear map, as Jia et al.'s code does; tighter)")
	fs.IntVar(&b.ibpRamp, "ibp-ramp-epochs", pipeline.NewDefenseConfig().IBPRampEpochs, "ibp: epochs over which κ and ε ramp up linearly from 0 (-1 = the first 2/3 of --epochs, the reference's 40 of 60)")
	pipeline.EmbeddingDefenseFlags(fs, s)
}

// checkFlag reports a defense's own flag (by its registry prefix) given
// with another defense. FTML's flags, which CML shares, are checked by
// defenseFlags.check.
func (b *baselineFlags) checkFlag(name, defenseName string) error {
	for _, d := range ownFlagDefenses() {
		if strings.HasPrefix(name, d.FlagPrefix) && defenseName != d.Name && !defense.SharesFlags(defenseName, d.Name) {
			return usageError{fmt.Errorf("--%s needs --defense %s", name, d.Name)}
		}
	}
	return nil
}

// ownFlagDefenses are the defenses whose flags (by their registry prefix)
// only they take: all with a prefix but FTML and CML, which share theirs.
func ownFlagDefenses() []defense.Defense {
	var out []defense.Defense
	for _, d := range defense.Defenses() {
		if p := d.FlagPrefix; p != "" && p != "ftml-" && p != "cml-" {
			out = append(out, d)
		}
	}
	return out
}
